// Jobs' end times, ordered by when they come.
#include "launcher/time_limits.h"

namespace cohort::agent {

void TimeLimits::set(uint64_t job, int64_t end_time) {
    erase(job);
    end_of_[job] = end_time;
    by_end_.emplace(end_time, job);
}

void TimeLimits::erase(uint64_t job) {
    auto it = end_of_.find(job);
    if (it != end_of_.end()) {
        by_end_.erase({it->second, job});
        end_of_.erase(it);
    }
}

std::vector<uint64_t> TimeLimits::take_expired(int64_t now) {
    std::vector<uint64_t> expired;
    while (!by_end_.empty() && by_end_.begin()->first <= now) {
        const uint64_t job = by_end_.begin()->second;
        by_end_.erase(by_end_.begin());
        end_of_.erase(job);
        expired.push_back(job);
    }
    return expired;
}

std::optional<int64_t> TimeLimits::next_end() const {
    if (by_end_.empty()) {
        return std::nullopt;
    }
    return by_end_.begin()->first;
}

}  // namespace cohort::agent
