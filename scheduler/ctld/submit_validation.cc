// Submission checks: partition, time limit, task geometry, feasibility.
#include "scheduler/ctld/submit_validation.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/hostlist.h"
#include "common/time_spec.h"
#include "common/warning_signal.h"
#include "scheduler/placement/node_fit.h"

namespace cohort::ctld {

TaskGeometry effective_geometry(const protocol::JobSpec& spec) {
    return gpu_shape(spec.gpu, {spec.nodes_min, spec.nodes_max, spec.ntasks, spec.ntasks_per_node,
                                spec.cpus_per_task, spec.cpus_per_task_set, spec.mem_mib})
            .geometry;
}

protocol::JobSpec effective_spec(const protocol::JobSpec& given) {
    protocol::JobSpec spec = given;
    const TaskGeometry g = effective_geometry(given);
    spec.nodes_min = g.nodes_min;
    spec.nodes_max = g.nodes_max;
    spec.ntasks = g.ntasks;
    spec.ntasks_per_node = g.ntasks_per_node;
    spec.cpus_per_task = g.cpus_per_task;
    spec.mem_mib = g.mem_mib;
    return spec;
}

int32_t gpus_per_node_of(const protocol::JobSpec& spec) {
    return gpu_shape(spec.gpu, {spec.nodes_min, spec.nodes_max, spec.ntasks, spec.ntasks_per_node,
                                spec.cpus_per_task, spec.cpus_per_task_set, spec.mem_mib})
            .gpus_per_node;
}

sched::ResourceRequest request_of(const protocol::JobSpec& given) {
    const protocol::JobSpec spec = effective_spec(given);
    sched::ResourceRequest request;
    request.nodes_min = spec.nodes_min;
    request.nodes_max = spec.nodes_max;
    request.ntasks = spec.ntasks;
    request.ntasks_per_node = spec.ntasks_per_node;
    request.cpus_per_task = std::max<uint32_t>(spec.cpus_per_task, 1);
    request.memory_mib_per_node = spec.mem_mib;
    request.gpus_per_node = gpus_per_node_of(given);
    request.gpu_type = given.gpu.type;
    auto distribution = parse_distribution("--distribution", given.distribution);
    if (distribution && distribution->kind == TaskDistribution::Kind::kPlane && spec.nodes_min > 0
        && spec.ntasks > 0) {
        // Planes load the first nodes most: every node is allocated the fullest one's share.
        const std::vector<uint32_t> counts =
                distribution_counts(spec.ntasks, spec.nodes_min, *distribution);
        request.ntasks = 0;
        request.ntasks_per_node = *std::max_element(counts.begin(), counts.end());
    }
    request.max_leaf_switches = given.switches;
    request.segment_nodes = given.segment;
    return request;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out;
}

// The account a job is charged to: as given (and allowed), else the user's first account.
// Without configured accounts any name is accepted and fair-share counts the user alone.
Result<std::string> resolve_account(const protocol::JobSpec& spec,
                                    const std::string& user,
                                    const ClusterConfig& config,
                                    const PartitionConfig& partition) {
    const PolicyConfig& policy = config.policy;
    std::string account = spec.account;
    if (policy.accounts.empty()) {
        if (account.empty()) {
            account = "root";
        }
    } else if (account.empty()) {
        const AccountConfig* fallback = policy.default_account(user);
        if (fallback == nullptr) {
            return Status::invalid(
                    "--account: user '" + user
                    + "' belongs to no account (accepted: an account that lists the user)");
        }
        account = fallback->name;
    } else {
        const AccountConfig* found = policy.find_account(account);
        std::vector<std::string> own;
        for (const auto& a : policy.accounts) {
            for (const auto& u : a.users) {
                if (u.name == user) {
                    own.push_back(a.name);
                }
            }
        }
        if (found == nullptr || std::find(own.begin(), own.end(), account) == own.end()) {
            return Status::invalid("--account: invalid account '" + account + "' for user '" + user
                                   + "' (accepted: " + (own.empty() ? "none" : joined(own)) + ")");
        }
    }
    const auto& allowed = partition.allowed_accounts;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), account) == allowed.end()) {
        return Status::invalid("--partition: account '" + account + "' may not use partition '"
                               + partition.name + "' (allowed accounts: " + joined(allowed) + ")");
    }
    return account;
}

Result<const QosConfig*> resolve_qos(const protocol::JobSpec& spec, const ClusterConfig& config) {
    const std::string name = spec.qos.empty() ? config.policy.default_qos : spec.qos;
    const QosConfig* qos = config.policy.find_qos(name);
    if (qos == nullptr) {
        std::vector<std::string> names;
        for (const auto& q : config.policy.qos) {
            names.push_back(q.name);
        }
        return Status::invalid("--qos: invalid value '" + name + "' (accepted: " + joined(names)
                               + ")");
    }
    return qos;
}

// CPUs the job asks for on its busiest node, as far as the request tells before placement.
int64_t cpus_per_node_hint(const protocol::JobSpec& spec) {
    const int64_t per_task = std::max<uint32_t>(spec.cpus_per_task, 1);
    if (spec.ntasks_per_node != 0) {
        return spec.ntasks_per_node * per_task;
    }
    if (spec.ntasks != 0 && spec.nodes_min != 0) {
        return (spec.ntasks + spec.nodes_min - 1) / spec.nodes_min * per_task;
    }
    return (spec.ntasks != 0 ? spec.ntasks : 1) * per_task;
}

// --mem as given, or the partition's DefMemPerCPU; never above its MaxMemPerCPU.
Result<int64_t> resolve_memory(const protocol::JobSpec& spec, const PartitionConfig& partition) {
    const int64_t cpus = cpus_per_node_hint(spec);
    if (spec.mem_mib == 0) {
        return partition.def_mem_per_cpu_mib * cpus;
    }
    if (partition.max_mem_per_cpu_mib > 0 && spec.mem_mib > partition.max_mem_per_cpu_mib * cpus) {
        return Status::invalid(
                fmt::format("--mem: {} MiB for {} CPUs per node exceeds "
                            "MaxMemPerCPU {} MiB of partition '{}'",
                            spec.mem_mib, cpus, partition.max_mem_per_cpu_mib, partition.name));
    }
    return spec.mem_mib;
}

// A job bigger than a per-user cap could never start; it is refused instead of waiting.
Status check_qos_caps(const protocol::JobSpec& spec, const QosConfig& qos) {
    const int64_t cpus = static_cast<int64_t>(std::max(spec.ntasks, 1u))
                         * std::max<uint32_t>(spec.cpus_per_task, 1);
    if (qos.max_cpus_per_user != -1 && cpus > qos.max_cpus_per_user) {
        return Status::invalid(fmt::format("--ntasks: {} CPUs exceed MaxCpuPerUser {} of QoS '{}'",
                                           cpus, qos.max_cpus_per_user, qos.name));
    }
    const int64_t gpus =
            static_cast<int64_t>(gpus_per_node_of(spec)) * std::max(spec.nodes_min, 1u);
    if (qos.max_gpus_per_user != -1 && gpus > qos.max_gpus_per_user) {
        return Status::invalid(fmt::format("--gpus: {} GPUs exceed MaxGRESPerUser {} of QoS '{}'",
                                           gpus, qos.max_gpus_per_user, qos.name));
    }
    if (qos.max_jobs_per_user == 0) {
        return Status::invalid("--qos: QoS '" + qos.name + "' allows no running jobs");
    }
    return Status::ok();
}

Status check_reservation(const protocol::JobSpec& spec,
                         const SubmitContext& context,
                         const std::string& account) {
    if (spec.reservation.empty()) {
        return Status::ok();
    }
    auto found = context.reservations.find(spec.reservation);
    if (found == context.reservations.end()) {
        std::vector<std::string> names;
        for (const auto& [name, r] : context.reservations) {
            names.push_back(name);
        }
        return Status::invalid("--reservation: invalid reservation '" + spec.reservation
                               + "' (accepted: " + (names.empty() ? "none exists" : joined(names))
                               + ")");
    }
    if (!may_use_reservation(found->second, context.user, account)) {
        return Status::denied("--reservation: user '" + context.user + "' (account '" + account
                              + "') may not use reservation '" + spec.reservation + "'");
    }
    return Status::ok();
}

}  // namespace

PartitionNodes index_partitions(const ClusterConfig& config) {
    PartitionNodes out;
    for (const auto& partition : config.partitions) {
        std::vector<int>& indexes = out[partition.name];
        for (const auto& name : partition.nodes) {
            auto it = std::find(config.nodes.begin(), config.nodes.end(), name);
            if (it != config.nodes.end()) {
                indexes.push_back(static_cast<int>(it - config.nodes.begin()));
            }
        }
    }
    return out;
}

Result<ValidatedJob> validate_submission(const protocol::JobSpec& given,
                                         const SubmitContext& context) {
    if (Status gpus = check_gpus(
                given.gpu, {given.nodes_min, given.nodes_max, given.ntasks, given.ntasks_per_node,
                            given.cpus_per_task, given.cpus_per_task_set, given.mem_mib});
        !gpus) {
        return gpus;
    }
    if (auto warning = parse_warning_signal("--signal", given.signal); !warning) {
        return warning.status();
    }
    if (!given.open_mode.empty() && given.open_mode != "append" && given.open_mode != "truncate") {
        return Status::invalid("--open-mode: invalid value '" + given.open_mode
                               + "' (accepted: append, truncate)");
    }
    // From here on the geometry the GPU options imply (tasks per node, CPUs, memory).
    const protocol::JobSpec spec = effective_spec(given);
    const ClusterConfig& config = context.config;
    ValidatedJob job;
    if (spec.partition.empty()) {
        job.partition = config.default_partition();
        if (job.partition == nullptr) {
            return Status::invalid("partition: the cluster defines no partition");
        }
    } else {
        job.partition = config.find_partition(spec.partition);
        if (job.partition == nullptr) {
            std::string names;
            for (const auto& p : config.partitions) {
                names += (names.empty() ? "" : ", ") + p.name;
            }
            return Status::invalid("--partition: invalid partition '" + spec.partition
                                   + "' (accepted: " + names + ")");
        }
    }
    const PartitionConfig& partition = *job.partition;
    auto account = resolve_account(spec, context.user, config, partition);
    if (!account) {
        return account.status();
    }
    job.account = *account;
    auto qos = resolve_qos(spec, config);
    if (!qos) {
        return qos.status();
    }
    job.qos = (*qos)->name;
    job.time_limit_s = spec.time_limit_s;
    if (job.time_limit_s == -2) {
        job.time_limit_s =
                partition.default_time_s != -1 ? partition.default_time_s : partition.max_time_s;
        const int64_t max_wall = (*qos)->max_wall_s;
        if (max_wall != -1 && (job.time_limit_s == -1 || job.time_limit_s > max_wall)) {
            job.time_limit_s = max_wall;  // the default never exceeds what the QoS allows
        }
    } else if ((*qos)->max_wall_s != -1
               && (job.time_limit_s == -1 || job.time_limit_s > (*qos)->max_wall_s)) {
        return Status::invalid("--time: requested time limit " + format_duration(job.time_limit_s)
                               + " exceeds MaxWall " + format_duration((*qos)->max_wall_s)
                               + " of QoS '" + job.qos + "'");
    }
    if (partition.max_time_s != -1
        && (job.time_limit_s == -1 || job.time_limit_s > partition.max_time_s)) {
        return Status::invalid("--time: requested time limit " + format_duration(job.time_limit_s)
                               + " exceeds the limit of " + format_duration(partition.max_time_s)
                               + " of partition '" + partition.name + "'");
    }
    if (job.time_limit_s > sched::kForever) {
        return Status::invalid(
                "--time: requested time limit " + format_duration(job.time_limit_s)
                + " is beyond 100 years (accepted: up to 36500-00:00:00, or UNLIMITED)");
    }
    if (spec.nodes_max != 0 && spec.nodes_max < spec.nodes_min) {
        return Status::invalid(fmt::format("--nodes: maximum {} is below minimum {}",
                                           spec.nodes_max, spec.nodes_min));
    }
    if (spec.ntasks != 0 && spec.nodes_min > spec.ntasks) {
        return Status::invalid(
                fmt::format("--nodes: {} nodes for {} tasks (accepted: at most one node per task)",
                            spec.nodes_min, spec.ntasks));
    }
    if (partition.max_nodes != -1 && spec.nodes_min > partition.max_nodes) {
        return Status::invalid(fmt::format("--nodes: {} nodes exceed MaxNodes {} of partition '{}'",
                                           spec.nodes_min, partition.max_nodes, partition.name));
    }
    if (auto distribution = parse_distribution("--distribution", spec.distribution);
        !distribution) {
        return distribution.status();
    }
    if (spec.segment > 0 && (spec.nodes_min == 0 || spec.nodes_min % spec.segment != 0)) {
        return Status::invalid(
                fmt::format("--segment: {} nodes per segment must divide the node "
                            "count (-N {})",
                            spec.segment, spec.nodes_min));
    }
    auto mem = resolve_memory(spec, partition);
    if (!mem) {
        return mem.status();
    }
    job.mem_mib = *mem;
    if (Status caps = check_qos_caps(spec, **qos); !caps) {
        return caps;
    }
    if (Status reservation = check_reservation(spec, context, job.account); !reservation) {
        return reservation;
    }
    job.request = request_of(spec);
    job.request.memory_mib_per_node = job.mem_mib;

    const std::vector<sched::NodeCapacity>& nodes = context.nodes;
    auto found = context.partition_nodes.find(partition.name);
    std::vector<int> eligible =
            found != context.partition_nodes.end() ? found->second : std::vector<int>{};
    for (const std::string& name : spec.exclude) {
        auto at = std::find(config.nodes.begin(), config.nodes.end(), name);
        if (at == config.nodes.end()) {
            return Status::invalid(fmt::format(
                    "--exclude: node '{}' is not in the cluster (accepted: its nodes, {})", name,
                    compress_hostlist(config.nodes)));
        }
        const int index = static_cast<int>(at - config.nodes.begin());
        eligible.erase(std::remove(eligible.begin(), eligible.end(), index), eligible.end());
    }
    if (!spec.exclude.empty() && eligible.size() < std::max<uint32_t>(spec.nodes_min, 1)) {
        return Status::invalid(fmt::format(
                "--exclude: leaves {} of partition '{}' nodes for a job of {} (accepted: "
                "exclusions that leave enough nodes)",
                eligible.size(), partition.name, std::max<uint32_t>(spec.nodes_min, 1)));
    }
    const bool all_known = std::all_of(eligible.begin(), eligible.end(), [&](int index) {
        return index < static_cast<int>(nodes.size()) && nodes[index].cpus > 0;
    });
    // "Never" can only be judged once every node of the partition has told its size.
    if (!eligible.empty() && all_known) {
        if (Status feasible = sched::check_feasible(job.request, nodes, eligible); !feasible) {
            return feasible;
        }
    }
    return job;
}

}  // namespace cohort::ctld
