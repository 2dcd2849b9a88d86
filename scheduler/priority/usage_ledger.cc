// Decayed fair-share usage.
#include "scheduler/priority/usage_ledger.h"

#include "scheduler/priority/fairshare.h"

namespace cohort::sched {

namespace {
// Usage this small no longer moves any factor; dropping it keeps the ledger bounded.
constexpr double kForgotten = 1e-3;
}  // namespace

void UsageLedger::decay_to(int64_t now, int64_t half_life_s) {
    if (as_of_ != 0 && now > as_of_) {
        const double factor = decay_factor(now - as_of_, half_life_s);
        for (auto it = usage_.begin(); it != usage_.end();) {
            it->second *= factor;
            it = it->second < kForgotten ? usage_.erase(it) : std::next(it);
        }
    }
    if (now > as_of_) {
        as_of_ = now;
    }
}

void UsageLedger::charge(const std::string& user,
                         const std::string& account,
                         double billing_seconds) {
    if (billing_seconds > 0) {
        usage_[{user, account}] += billing_seconds;
    }
}

double UsageLedger::usage(const std::string& user, const std::string& account) const {
    auto it = usage_.find({user, account});
    return it == usage_.end() ? 0 : it->second;
}

void UsageLedger::restore(int64_t as_of, std::map<Key, double> usage) {
    as_of_ = as_of;
    usage_ = std::move(usage);
}

}  // namespace cohort::sched
