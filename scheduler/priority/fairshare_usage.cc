// Charging running jobs into the decayed usage ledger.
#include "scheduler/priority/fairshare_usage.h"

#include <algorithm>

namespace cohort::sched {

void FairShareUsage::charge(
        uint64_t id, const UsageLedger::Key& owner, double billing, int64_t start, int64_t until) {
    int64_t& from = charged_until_[id];
    from = std::max(from, start);
    if (until > from) {
        ledger_.charge(owner.first, owner.second, billing * static_cast<double>(until - from));
        from = until;
    }
}

}  // namespace cohort::sched
