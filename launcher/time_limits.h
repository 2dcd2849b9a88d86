// The wall-clock end times of this node's jobs (start + --time). The agent asks which have
// come by its clock's `now` whenever its one timer fires, so the rule is tested by moving a
// manual clock, and a clock step can only make the check run early, never skip a job.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace cohort::agent {

class TimeLimits {
public:
    // Sets (or moves) `job`'s end time.
    void set(uint64_t job, int64_t end_time);
    void erase(uint64_t job);

    bool has(uint64_t job) const { return end_of_.count(job) != 0; }

    std::optional<int64_t> end_of(uint64_t job) const {
        auto it = end_of_.find(job);
        return it == end_of_.end() ? std::nullopt : std::optional<int64_t>(it->second);
    }

    // The jobs whose end time is `now` or earlier, earliest first; they leave the table.
    std::vector<uint64_t> take_expired(int64_t now);
    // The earliest end time in the table.
    std::optional<int64_t> next_end() const;

private:
    std::map<uint64_t, int64_t> end_of_;
    std::set<std::pair<int64_t, uint64_t>> by_end_;  // (end time, job)
};

}  // namespace cohort::agent
