// SWF parsing through zlib, which reads plain and gzip files alike.
#include "scheduler/sim/swf.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <zlib.h>

namespace cohort::sim {
namespace {

int64_t header_value(const std::string& line, const char* key) {
    size_t at = line.find(key);
    if (at == std::string::npos) {
        return -1;
    }
    return std::strtoll(line.c_str() + at + std::string(key).size(), nullptr, 10);
}

}  // namespace

Result<SwfTrace> read_swf(const std::string& path) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr) {
        return Status::not_found("--trace: cannot open '" + path + "'");
    }
    SwfTrace trace;
    trace.path = path;
    std::string line;
    char buffer[4096];
    int64_t line_number = 0;
    Status status;
    while (gzgets(file, buffer, sizeof(buffer)) != nullptr) {
        line.assign(buffer);
        ++line_number;
        size_t first = line.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) {
            continue;
        }
        if (line[first] == ';') {
            if (int64_t v = header_value(line, "MaxProcs:"); v > 0) {
                trace.max_procs = v;
            }
            if (int64_t v = header_value(line, "MaxNodes:"); v > 0) {
                trace.max_nodes = v;
            }
            continue;
        }
        // Some fields (average CPU time, memory) are written with decimals.
        std::istringstream words(line);
        int64_t fields[18];
        int count = 0;
        for (double value = 0; count < 18 && words >> value; ++count) {
            if (!std::isfinite(value) || std::fabs(value) > 1e15) {
                break;  // reported below as a bad line
            }
            fields[count] = static_cast<int64_t>(value);
        }
        if (count != 18) {
            status =
                    Status::invalid(fmt::format("--trace: '{}' line {} has {} numeric fields "
                                                "(accepted: the 18 of SWF)",
                                                path, line_number, count));
            break;
        }
        SwfJob job;
        job.id = fields[0];
        job.submit = fields[1];
        job.wait = fields[2];
        job.run = fields[3];
        job.allocated_procs = fields[4];
        job.requested_procs = fields[7];
        job.requested_time = fields[8];
        job.user = fields[11];
        trace.jobs.push_back(job);
    }
    gzclose(file);
    if (!status) {
        return status;
    }
    return trace;
}

}  // namespace cohort::sim
