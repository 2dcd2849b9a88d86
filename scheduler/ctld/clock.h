// The controller's clock reads, in one place (the scheduling core gets `now` as a value).
#pragma once

#include <chrono>
#include <cstdint>

namespace cohort::ctld {

inline int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

inline int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count();
}

}  // namespace cohort::ctld
