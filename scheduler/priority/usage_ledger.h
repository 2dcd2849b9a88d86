// Decayed usage per user and account, the input of fair-share: running jobs are charged
// billing-seconds as time passes, and all usage halves every half-life (Slurm's
// PriorityDecayHalfLife). Pure: the caller says what time it is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace cohort::sched {

class UsageLedger {
public:
    using Key = std::pair<std::string, std::string>;  // user, account

    // Decays every entry from the last call's time to `now`; the first call only sets it.
    void decay_to(int64_t now, int64_t half_life_s);
    void charge(const std::string& user, const std::string& account, double billing_seconds);
    double usage(const std::string& user, const std::string& account) const;

    int64_t as_of() const { return as_of_; }

    const std::map<Key, double>& entries() const { return usage_; }

    void restore(int64_t as_of, std::map<Key, double> usage);

private:
    int64_t as_of_ = 0;  // 0: never advanced
    std::map<Key, double> usage_;
};

}  // namespace cohort::sched
