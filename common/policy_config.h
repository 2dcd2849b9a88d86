// The scheduling policy part of the cluster configuration: partition limits, QoS, the
// fair-share account tree, multifactor weights and the pass budget. Plain values; the
// controller turns them into the core's snapshot and priority inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/status.h"

namespace cohort {

// How a job preempted by a higher QoS's job ends, as Slurm's PreemptMode.
enum class PreemptMode : uint8_t {
    kRequeue,  // it runs again later with the same id (a --no-requeue job is cancelled)
    kCancel,   // it ends PREEMPTED
};

// A quality of service: a priority boost and per-user caps (-1: no cap), as Slurm's QOS;
// the QoSes its jobs may preempt, and how its own jobs end when preempted.
struct QosConfig {
    std::string name;
    int64_t priority = 0;
    int64_t max_jobs_per_user = -1;         // running jobs (MaxJobsPerUser)
    int64_t max_cpus_per_user = -1;         // CPUs held by running jobs (MaxTRESPerUser=cpu)
    int64_t max_gpus_per_user = -1;         // GPUs held by running jobs (MaxTRESPerUser=gres/gpu)
    int64_t max_wall_s = -1;                // time limit of one job (MaxWall)
    std::vector<std::string> preempt = {};  // QoSes whose running jobs this QoS's jobs may preempt
    PreemptMode preempt_mode = PreemptMode::kRequeue;
    // From the warning signal to SIGTERM when one of this QoS's jobs is preempted (GraceTime).
    int64_t grace_time_s = 0;
};

struct AccountUser {
    std::string name;
    int64_t shares = 1;
};

// An account of the fair-share tree; "root" is implicit and is every top account's parent.
struct AccountConfig {
    std::string name;
    std::string parent = "root";
    int64_t shares = 1;
    std::vector<AccountUser> users;
};

struct PriorityConfig {
    int64_t weight_age = 1000;
    int64_t weight_fairshare = 10000;
    int64_t weight_job_size = 1000;
    int64_t weight_partition = 1000;
    int64_t weight_qos = 1000;
    int64_t max_age_s = 7 * 86400;
    bool favor_small = false;
    std::string fairshare = "classic";      // classic or fair_tree
    int64_t decay_half_life_s = 7 * 86400;  // 0: usage never decays
};

// How much one scheduling pass may do before it yields to other requests and resumes.
struct PassBudgetConfig {
    int64_t max_jobs = -1;  // jobs tested per step; -1: no cap
    int64_t max_ms = 200;   // wall time per step; -1: no cap
};

struct PolicyConfig {
    std::vector<QosConfig> qos = {QosConfig{.name = "normal"}};  // never empty
    std::string default_qos = "normal";
    std::vector<AccountConfig> accounts;  // empty: every user is its own leaf under root
    PriorityConfig priority;
    PassBudgetConfig pass_budget;

    const QosConfig* find_qos(const std::string& name) const;
    const AccountConfig* find_account(const std::string& name) const;
    // The first account that lists `user`; nullptr when none does.
    const AccountConfig* default_account(const std::string& user) const;
};

// Reads the keys "qos", "default_qos", "accounts", "priority" and "scheduler_pass" of the
// config document; errors name the key and the value.
Result<PolicyConfig> read_policy(const nlohmann::json& doc);
nlohmann::json write_policy(const PolicyConfig& policy);

// `key` of `object` as seconds: an integer, or a time string such as "1-00:00:00";
// `fallback` when absent.
Result<int64_t> read_duration(const nlohmann::json& object, const char* key, int64_t fallback);

}  // namespace cohort
