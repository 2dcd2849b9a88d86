// write(2) until all of `text` is written, across short writes and EINTR.
#pragma once

#include <cerrno>
#include <string_view>

#include <unistd.h>

namespace cohort {

inline bool write_all(int fd, std::string_view text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

}  // namespace cohort
