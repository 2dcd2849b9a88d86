#include "launcher/spool_file.h"

#include <cstdio>
#include <fstream>

namespace cohort::agent {

Status replace_file(const std::string& path, const std::string& text) {
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << text;
        if (!out) {
            return Status::io_error("cannot write " + temporary);
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        return Status::io_error("cannot rename " + temporary + " to " + path);
    }
    return Status::ok();
}

}  // namespace cohort::agent
