// Fair-share usage as time passes: all usage decays with the half-life, and each running
// job is charged its billing (CPUs by default) for the time since it was last charged, so a
// job is charged every second once whether the controller charges it every pass or only at
// its end. Pure:
// the caller says what time it is. The controller and the golden scenarios both drive it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/priority/usage_ledger.h"

namespace cohort::sched {

class FairShareUsage {
public:
    explicit FairShareUsage(int64_t half_life_s) : half_life_s_(half_life_s) {}

    // Decays all usage to `now`; the first call only sets the time.
    void decay_to(int64_t now) { ledger_.decay_to(now, half_life_s_); }

    // Charges job `id` (started at `start`) `billing` per second from where it was last
    // charged up to `until`, and never twice for the same second.
    void charge(uint64_t id,
                const UsageLedger::Key& owner,
                double billing,
                int64_t start,
                int64_t until);

    // The job has ended and was charged in full.
    void forget(uint64_t id) { charged_until_.erase(id); }

    const UsageLedger& ledger() const { return ledger_; }

    // Replaces all usage with `usage` as of `as_of`, which charged the running jobs
    // `charged` up to then.
    void restore(int64_t as_of,
                 std::map<UsageLedger::Key, double> usage,
                 const std::vector<uint64_t>& charged = {}) {
        ledger_.restore(as_of, std::move(usage));
        charged_until_.clear();
        for (uint64_t id : charged) {
            charged_until_[id] = as_of;
        }
    }

private:
    int64_t half_life_s_;
    UsageLedger ledger_;
    std::map<uint64_t, int64_t> charged_until_;  // running job -> charged up to
};

}  // namespace cohort::sched
