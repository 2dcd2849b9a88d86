// Multifactor priority and fair-share over the configured account tree.
#include "scheduler/priority/priority_model.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "scheduler/priority/fairshare.h"

namespace cohort::sched {

PriorityModel::PriorityModel(const ClusterConfig& config) : config_(config) {
    const PriorityConfig& p = config.policy.priority;
    weights_.age = p.weight_age;
    weights_.fairshare = p.weight_fairshare;
    weights_.job_size = p.weight_job_size;
    weights_.partition = p.weight_partition;
    weights_.qos = p.weight_qos;
    weights_.max_age_s = p.max_age_s;
    weights_.favor_small = p.favor_small;
    for (const auto& partition : config.partitions) {
        max_partition_tier_ = std::max(max_partition_tier_, partition.priority_tier);
    }
    for (const auto& qos : config.policy.qos) {
        max_qos_priority_ = std::max(max_qos_priority_, qos.priority);
    }
}

void PriorityModel::refresh(const UsageLedger& ledger,
                            const std::set<UsageLedger::Key>& users,
                            int64_t cluster_cpus) {
    cluster_cpus_ = std::max<int64_t>(cluster_cpus, 1);
    std::vector<Association> tree = {{kRootAccount, -1, 1, 0, false}};
    std::map<int, UsageLedger::Key> leaf_of;  // tree index of a user -> its key
    auto add_user = [&](const std::string& user, const std::string& account, int parent,
                        int64_t shares) {
        leaf_of[static_cast<int>(tree.size())] = {user, account};
        tree.push_back({user, parent, shares, ledger.usage(user, account), true});
    };
    if (config_.policy.accounts.empty()) {
        std::set<std::string> names;
        for (const auto& [key, usage] : ledger.entries()) {
            names.insert(key.first);
        }
        for (const auto& key : users) {
            names.insert(key.first);
        }
        for (const auto& name : names) {
            add_user(name, kRootAccount, 0, 1);
        }
    } else {
        std::map<std::string, int> account_index = {{kRootAccount, 0}};
        for (const auto& account : config_.policy.accounts) {
            account_index[account.name] = static_cast<int>(tree.size());
            tree.push_back(
                    {account.name, account_index.at(account.parent), account.shares, 0, false});
        }
        // Users after every account keeps parents before children.
        for (const auto& account : config_.policy.accounts) {
            for (const auto& user : account.users) {
                add_user(user.name, account.name, account_index.at(account.name), user.shares);
            }
        }
    }
    const std::vector<UserFactor> factors = config_.policy.priority.fairshare == "fair_tree"
                                                    ? fair_tree(tree)
                                                    : classic_fairshare(tree);
    fairshare_.clear();
    for (const auto& factor : factors) {
        fairshare_[leaf_of.at(factor.association)] = factor.factor;
    }
    tree_ = std::move(tree);
}

std::vector<AssociationShare> PriorityModel::shares() const {
    if (tree_.empty()) {
        return {};
    }
    const std::vector<Standing> standing = standings(tree_);
    std::vector<std::vector<int>> users(tree_.size()), accounts(tree_.size());
    for (size_t i = 1; i < tree_.size(); ++i) {
        (tree_[i].is_user ? users : accounts)[static_cast<size_t>(tree_[i].parent)].push_back(
                static_cast<int>(i));
    }
    auto by_name = [this](int x, int y) {
        return tree_[static_cast<size_t>(x)].name < tree_[static_cast<size_t>(y)].name;
    };
    std::vector<AssociationShare> out;
    std::function<void(int, int)> walk = [&](int account, int depth) {
        const Association& node = tree_[static_cast<size_t>(account)];
        out.push_back({node.name, "", depth, account == 0 ? 0 : node.shares,
                       standing[static_cast<size_t>(account)], 0});
        std::vector<int> kids = users[static_cast<size_t>(account)];
        std::sort(kids.begin(), kids.end(), by_name);
        for (int user : kids) {
            const Association& leaf = tree_[static_cast<size_t>(user)];
            out.push_back({node.name, leaf.name, depth + 1, leaf.shares,
                           standing[static_cast<size_t>(user)], fairshare(leaf.name, node.name)});
        }
        kids = accounts[static_cast<size_t>(account)];
        std::sort(kids.begin(), kids.end(), by_name);
        for (int sub : kids) {
            walk(sub, depth + 1);
        }
    };
    walk(0, 0);
    return out;
}

std::string PriorityModel::charged_account(std::string_view account) const {
    return config_.policy.accounts.empty() ? kRootAccount : std::string(account);
}

double PriorityModel::fairshare(const std::string& user, const std::string& account) const {
    auto it = fairshare_.find({user, account});
    return it == fairshare_.end() ? 1.0 : it->second;  // no usage yet: the best standing
}

PriorityFactors PriorityModel::factors(const PriorityJob& job, int64_t now) const {
    PriorityInputs in;
    in.eligible_s = std::max<int64_t>(0, now - job.eligible_since);
    in.fairshare = fairshare(std::string(job.user), charged_account(job.account));
    in.cpus = job.cpus;
    in.cluster_cpus = cluster_cpus_;
    if (const PartitionConfig* partition = config_.find_partition(std::string(job.partition))) {
        in.partition_tier = partition->priority_tier;
    }
    in.max_partition_tier = max_partition_tier_;
    if (const QosConfig* qos = config_.policy.find_qos(std::string(job.qos))) {
        in.qos_priority = qos->priority;
    }
    in.max_qos_priority = max_qos_priority_;
    in.nice = job.nice;
    return multifactor_priority(in, weights_);
}

}  // namespace cohort::sched
