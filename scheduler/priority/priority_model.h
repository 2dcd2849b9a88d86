// Job priority as the controller orders its queue: multifactor with the configured weights,
// and fair-share from the usage ledger over the configured account tree (or one leaf per user
// under root when no accounts are configured). Pure: the caller says what time it is.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "scheduler/priority/fairshare.h"
#include "scheduler/priority/multifactor.h"
#include "scheduler/priority/usage_ledger.h"

namespace cohort::sched {

// The account every job is charged to when the configuration lists no accounts.
inline constexpr const char* kRootAccount = "root";

// What priority depends on of one pending job.
struct PriorityJob {
    std::string_view user;
    std::string_view account;  // as submitted ("" when none)
    std::string_view partition;
    std::string_view qos;
    int64_t eligible_since = 0;  // its submit time, or --begin when later
    int64_t cpus = 1;            // requested_cpus()
    int32_t nice = 0;
};

// One association as `cohort share` (sshare) lists it.
struct AssociationShare {
    std::string account;
    std::string user;  // "" for an account's own row
    int depth = 0;     // the root is 0
    int64_t raw_shares = 0;
    Standing standing;
    double fairshare = 0;  // users only
};

class PriorityModel {
public:
    explicit PriorityModel(const ClusterConfig& config);

    // Recomputes every user's fair-share factor from `ledger`; `users` are the (user,
    // account) pairs with jobs, which get a leaf even before they have usage.
    void refresh(const UsageLedger& ledger,
                 const std::set<UsageLedger::Key>& users,
                 int64_t cluster_cpus);

    PriorityFactors factors(const PriorityJob& job, int64_t now) const;
    double fairshare(const std::string& user, const std::string& account) const;
    // The account usage is charged to: the job's, or root when no accounts are configured.
    std::string charged_account(std::string_view account) const;

    const PriorityWeights& weights() const { return weights_; }

    // The tree of the last refresh, depth first: each account, then its users, then its
    // sub-accounts, names in order.
    std::vector<AssociationShare> shares() const;

private:
    const ClusterConfig& config_;
    PriorityWeights weights_;
    int64_t max_partition_tier_ = 0;
    int64_t max_qos_priority_ = 0;
    int64_t cluster_cpus_ = 1;
    std::map<UsageLedger::Key, double> fairshare_;
    std::vector<Association> tree_;  // of the last refresh
};

}  // namespace cohort::sched
