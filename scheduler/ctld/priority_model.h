// The controller's job priority: multifactor with the configured weights, and fair-share
// from the usage ledger over the configured account tree (or one leaf per user under root
// when no accounts are configured).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/config.h"
#include "common/protocol/job_types.h"
#include "scheduler/priority/multifactor.h"
#include "scheduler/priority/usage_ledger.h"

namespace cohort::ctld {

// The account every job is charged to when the configuration lists no accounts.
inline constexpr const char* kRootAccount = "root";

class PriorityModel {
public:
    explicit PriorityModel(const ClusterConfig& config);

    // Recomputes every user's fair-share factor from `ledger`; `users` are the (user,
    // account) pairs with jobs, which get a leaf even before they have usage.
    void refresh(const sched::UsageLedger& ledger,
            const std::set<sched::UsageLedger::Key>& users, int64_t cluster_cpus);

    sched::PriorityFactors factors(const protocol::JobRecord& job, int64_t now) const;
    double fairshare(const std::string& user, const std::string& account) const;
    // The account usage is charged to: the job's, or root when no accounts are configured.
    std::string charged_account(const protocol::JobSpec& spec) const;
    const sched::PriorityWeights& weights() const { return weights_; }

private:
    const ClusterConfig& config_;
    sched::PriorityWeights weights_;
    int64_t max_partition_tier_ = 0;
    int64_t max_qos_priority_ = 0;
    int64_t cluster_cpus_ = 1;
    std::map<sched::UsageLedger::Key, double> fairshare_;
};

// CPUs a job asks for, for the job size factor and for usage.
int64_t requested_cpus(const protocol::JobSpec& spec);

}  // namespace cohort::ctld
