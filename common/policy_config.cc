// Reading and writing the scheduling policy keys of the cluster configuration.
#include "common/policy_config.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/time_spec.h"

namespace cohort {
namespace {

using nlohmann::json;

// An optional integer key; errors name it and what is accepted.
Result<int64_t> read_int(const json& object, const char* key, int64_t fallback, int64_t min) {
    if (!object.contains(key)) {
        return fallback;
    }
    const json& value = object.at(key);
    if (!value.is_number_integer() || value.get<int64_t>() < min) {
        return Status::invalid(fmt::format("{}: invalid value {} (accepted: an integer >= {})", key,
                                           value.dump(), min));
    }
    return value.get<int64_t>();
}

Result<QosConfig> read_qos(const json& object) {
    QosConfig qos;
    qos.name = object.value("name", "");
    if (qos.name.empty()) {
        return Status::invalid("qos[].name: missing (every QoS needs a name)");
    }
    auto priority = read_int(object, "priority", 0, 0);
    auto jobs = read_int(object, "max_jobs_per_user", -1, -1);
    auto cpus = read_int(object, "max_cpus_per_user", -1, -1);
    auto gpus = read_int(object, "max_gpus_per_user", -1, -1);
    auto wall = read_duration(object, "max_wall", -1);
    for (const Result<int64_t>* r : {&priority, &jobs, &cpus, &gpus, &wall}) {
        if (!*r) {
            return r->status().with_context("qos " + qos.name);
        }
    }
    qos.priority = *priority;
    qos.max_jobs_per_user = *jobs;
    qos.max_cpus_per_user = *cpus;
    qos.max_gpus_per_user = *gpus;
    qos.max_wall_s = *wall;
    auto grace = read_duration(object, "grace_time", 0);
    if (!grace) {
        return grace.status().with_context("qos " + qos.name);
    }
    if (*grace < 0) {
        return Status::invalid(
                fmt::format("qos {}: grace_time: invalid value {} (accepted: "
                            "seconds >= 0, or a time such as 0:30)",
                            qos.name, *grace));
    }
    qos.grace_time_s = *grace;
    const std::string mode = object.value("preempt_mode", "requeue");
    if (mode != "requeue" && mode != "cancel") {
        return Status::invalid("qos " + qos.name + ": preempt_mode: invalid value '" + mode
                               + "' (accepted: requeue, cancel)");
    }
    qos.preempt_mode = mode == "cancel" ? PreemptMode::kCancel : PreemptMode::kRequeue;
    const json preempt = object.value("preempt", json::array());
    if (!preempt.is_array()) {
        return Status::invalid("qos " + qos.name + ": preempt: invalid value " + preempt.dump()
                               + " (accepted: a list of QoS names)");
    }
    for (const json& name : preempt) {
        if (!name.is_string() || name.get<std::string>() == qos.name) {
            return Status::invalid("qos " + qos.name + ": preempt: invalid entry " + name.dump()
                                   + " (accepted: names of other QoSes)");
        }
        qos.preempt.push_back(name.get<std::string>());
    }
    return qos;
}

Result<AccountConfig> read_account(const json& object) {
    AccountConfig account;
    account.name = object.value("name", "");
    if (account.name.empty() || account.name == "root") {
        return Status::invalid("accounts[].name: invalid value '" + account.name
                               + "' (accepted: a name other than root)");
    }
    account.parent = object.value("parent", "root");
    auto shares = read_int(object, "shares", 1, 1);
    if (!shares) {
        return shares.status().with_context("account " + account.name);
    }
    account.shares = *shares;
    for (const json& user : object.value("users", json::array())) {
        AccountUser entry;
        if (user.is_string()) {
            entry.name = user.get<std::string>();
        } else if (user.is_object()) {
            entry.name = user.value("name", "");
            auto user_shares = read_int(user, "shares", 1, 1);
            if (!user_shares) {
                return user_shares.status().with_context("account " + account.name + " user "
                                                         + entry.name);
            }
            entry.shares = *user_shares;
        }
        if (entry.name.empty()) {
            return Status::invalid("account " + account.name + ": users: invalid entry "
                                   + user.dump()
                                   + " (accepted: a user name or {\"name\", \"shares\"})");
        }
        account.users.push_back(std::move(entry));
    }
    return account;
}

// Parents must name an account listed earlier (or root), so the tree has no cycles.
Status check_accounts(const std::vector<AccountConfig>& accounts) {
    std::set<std::string> seen = {"root"};
    for (const auto& account : accounts) {
        if (seen.count(account.name) != 0) {
            return Status::invalid("accounts: account '" + account.name + "' is listed twice");
        }
        if (seen.count(account.parent) == 0) {
            return Status::invalid("account " + account.name + ": parent: invalid value '"
                                   + account.parent
                                   + "' (accepted: root or an account listed before it)");
        }
        seen.insert(account.name);
    }
    return Status::ok();
}

Result<PriorityConfig> read_priority(const json& object) {
    PriorityConfig p;
    const std::pair<const char*, int64_t*> weights[] = {{"weight_age", &p.weight_age},
                                                        {"weight_fairshare", &p.weight_fairshare},
                                                        {"weight_job_size", &p.weight_job_size},
                                                        {"weight_partition", &p.weight_partition},
                                                        {"weight_qos", &p.weight_qos}};
    for (const auto& [key, field] : weights) {
        auto value = read_int(object, key, *field, 0);
        if (!value) {
            return value.status().with_context("priority");
        }
        *field = *value;
    }
    auto max_age = read_duration(object, "max_age", p.max_age_s);
    auto half_life = read_duration(object, "decay_half_life", p.decay_half_life_s);
    if (!max_age || !half_life) {
        return (!max_age ? max_age.status() : half_life.status()).with_context("priority");
    }
    p.max_age_s = *max_age;
    p.decay_half_life_s = *half_life;
    p.favor_small = object.value("favor_small", p.favor_small);
    p.fairshare = object.value("fairshare", p.fairshare);
    if (p.fairshare != "classic" && p.fairshare != "fair_tree") {
        return Status::invalid("priority.fairshare: invalid value '" + p.fairshare
                               + "' (accepted: classic, fair_tree)");
    }
    return p;
}

}  // namespace

Result<int64_t> read_duration(const json& object, const char* key, int64_t fallback) {
    if (!object.contains(key)) {
        return fallback;
    }
    const json& value = object.at(key);
    if (value.is_number_integer()) {
        return value.get<int64_t>();
    }
    if (!value.is_string()) {
        return Status::invalid(std::string(key) + ": expected a time string such as 1-00:00:00");
    }
    auto seconds = parse_time_limit(value.get<std::string>());
    if (!seconds) {
        return seconds.status().with_context(key);
    }
    return seconds;
}

const QosConfig* PolicyConfig::find_qos(const std::string& name) const {
    for (const auto& q : qos) {
        if (q.name == name) {
            return &q;
        }
    }
    return nullptr;
}

const AccountConfig* PolicyConfig::find_account(const std::string& name) const {
    for (const auto& a : accounts) {
        if (a.name == name) {
            return &a;
        }
    }
    return nullptr;
}

const AccountConfig* PolicyConfig::default_account(const std::string& user) const {
    for (const auto& a : accounts) {
        for (const auto& u : a.users) {
            if (u.name == user) {
                return &a;
            }
        }
    }
    return nullptr;
}

Result<PolicyConfig> read_policy(const json& doc) {
    PolicyConfig policy;
    policy.qos.clear();
    for (const json& entry : doc.value("qos", json::array())) {
        auto qos = read_qos(entry);
        if (!qos) {
            return qos.status();
        }
        if (policy.find_qos(qos->name) != nullptr) {
            return Status::invalid("qos: QoS '" + qos->name + "' is listed twice");
        }
        policy.qos.push_back(std::move(*qos));
    }
    if (policy.qos.empty()) {
        policy.qos.push_back(QosConfig{.name = "normal"});
    }
    for (const auto& qos : policy.qos) {
        for (const auto& preempted : qos.preempt) {
            if (policy.find_qos(preempted) == nullptr) {
                return Status::invalid("qos " + qos.name + ": preempt: unknown QoS '" + preempted
                                       + "' (accepted: a QoS listed under qos)");
            }
        }
    }
    policy.default_qos = doc.value("default_qos", policy.qos.front().name);
    if (policy.find_qos(policy.default_qos) == nullptr) {
        return Status::invalid("default_qos: invalid value '" + policy.default_qos
                               + "' (accepted: a QoS listed under qos)");
    }
    for (const json& entry : doc.value("accounts", json::array())) {
        auto account = read_account(entry);
        if (!account) {
            return account.status();
        }
        policy.accounts.push_back(std::move(*account));
    }
    if (Status tree = check_accounts(policy.accounts); !tree) {
        return tree;
    }
    auto priority = read_priority(doc.value("priority", json::object()));
    if (!priority) {
        return priority.status();
    }
    policy.priority = *priority;
    const json pass = doc.value("scheduler_pass", json::object());
    auto max_jobs = read_int(pass, "max_jobs", policy.pass_budget.max_jobs, -1);
    auto max_ms = read_int(pass, "max_ms", policy.pass_budget.max_ms, -1);
    if (!max_jobs || !max_ms) {
        return (!max_jobs ? max_jobs.status() : max_ms.status()).with_context("scheduler_pass");
    }
    policy.pass_budget = {*max_jobs, *max_ms};
    return policy;
}

json write_policy(const PolicyConfig& policy) {
    json qos = json::array();
    for (const auto& q : policy.qos) {
        qos.push_back(
                {{"name", q.name},
                 {"priority", q.priority},
                 {"max_jobs_per_user", q.max_jobs_per_user},
                 {"max_cpus_per_user", q.max_cpus_per_user},
                 {"max_gpus_per_user", q.max_gpus_per_user},
                 {"max_wall", q.max_wall_s},
                 {"preempt", q.preempt},
                 {"preempt_mode", q.preempt_mode == PreemptMode::kCancel ? "cancel" : "requeue"},
                 {"grace_time", q.grace_time_s}});
    }
    json accounts = json::array();
    for (const auto& a : policy.accounts) {
        json users = json::array();
        for (const auto& u : a.users) {
            users.push_back({{"name", u.name}, {"shares", u.shares}});
        }
        accounts.push_back(
                {{"name", a.name}, {"parent", a.parent}, {"shares", a.shares}, {"users", users}});
    }
    const PriorityConfig& p = policy.priority;
    return {{"qos", qos},
            {"default_qos", policy.default_qos},
            {"accounts", accounts},
            {"priority",
             {{"weight_age", p.weight_age},
              {"weight_fairshare", p.weight_fairshare},
              {"weight_job_size", p.weight_job_size},
              {"weight_partition", p.weight_partition},
              {"weight_qos", p.weight_qos},
              {"max_age", p.max_age_s},
              {"favor_small", p.favor_small},
              {"fairshare", p.fairshare},
              {"decay_half_life", p.decay_half_life_s}}},
            {"scheduler_pass",
             {{"max_jobs", policy.pass_budget.max_jobs}, {"max_ms", policy.pass_budget.max_ms}}}};
}

}  // namespace cohort
