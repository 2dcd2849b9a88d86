// Submission checks: partition, time limit, task geometry, feasibility.
#include "scheduler/ctld/submit_validation.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "common/generic_gres.h"
#include "common/hostlist.h"
#include "common/licenses.h"
#include "common/time_spec.h"
#include "common/warning_signal.h"
#include "scheduler/ctld/core_inputs.h"
#include "scheduler/ctld/job_nodes.h"
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
    request.whole_node = given.sharing == protocol::NodeSharing::kExclusive
                         || given.sharing == protocol::NodeSharing::kExclusiveUser
                         || given.sharing == protocol::NodeSharing::kExclusiveMcs;
    request.whole_node_memory = given.mem_whole_node;
    request.memory_mib_per_cpu = given.mem_per_cpu_mib;
    request.min_cpus_per_node = given.mincpus;
    request.overcommit = given.overcommit;
    request.whole_cores = protocol::one_thread_per_core(given.hint);
    // Every node named with -w is the job's: it takes at least that many.
    request.nodes_min = std::max(request.nodes_min, static_cast<uint32_t>(given.nodelist.size()));
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
    // Account names are case-insensitive and kept in lower case, as Slurm keeps them.
    std::transform(account.begin(), account.end(), account.begin(),
                   [](unsigned char c) { return std::tolower(c); });
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

// --mem as given, or the partition's DefMemPerCPU; never above its MaxMemPerCPU. 0 with
// --mem=0 (all of each node's) and --mem-per-cpu (memory follows the CPUs placed).
Result<int64_t> resolve_memory(const protocol::JobSpec& spec, const PartitionConfig& partition) {
    const int64_t cpus = cpus_per_node_hint(spec);
    if (spec.mem_per_cpu_mib > 0) {
        if (partition.max_mem_per_cpu_mib > 0
            && spec.mem_per_cpu_mib > partition.max_mem_per_cpu_mib) {
            return Status::invalid(fmt::format(
                    "--mem-per-cpu: {} MiB exceeds MaxMemPerCPU {} MiB of partition "
                    "'{}'",
                    spec.mem_per_cpu_mib, partition.max_mem_per_cpu_mib, partition.name));
        }
        return 0;
    }
    if (spec.mem_whole_node) {
        return 0;
    }
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

// -L: every license must exist, and no more be asked than the cluster has.
Status check_licenses(const protocol::JobSpec& spec, const ClusterConfig& config) {
    if (spec.licenses.empty()) {
        return Status::ok();
    }
    auto licenses = parse_licenses(spec.licenses);
    if (!licenses) {
        return licenses.status();
    }
    std::vector<std::string> known;
    for (const auto& [name, count] : config.licenses) {
        known.push_back(fmt::format("{}:{}", name, count));
    }
    for (const LicenseRequest& license : *licenses) {
        auto total = config.licenses.find(license.name);
        if (total == config.licenses.end() || license.count > total->second) {
            return Status::invalid(fmt::format(
                    "--licenses: invalid license specification '{}' (accepted: {})", spec.licenses,
                    known.empty() ? "none, the cluster has no licenses" : joined(known)));
        }
    }
    return Status::ok();
}

// --gres: every generic resource must be one the partition's nodes declare, and no more be
// asked per node than the best of them has (Slurm refuses both at submit).
Status check_gres(const protocol::JobSpec& spec,
                  const ClusterConfig& config,
                  const std::vector<std::string>& partition_nodes) {
    if (spec.gres.empty()) {
        return Status::ok();
    }
    auto asked = parse_generic_gres("--gres", spec.gres);
    if (!asked) {
        return asked.status();
    }
    std::map<std::string, int64_t> most;  // per resource, the most one node has
    for (const std::string& node : partition_nodes) {
        if (auto declared = config.node_gres.find(node); declared != config.node_gres.end()) {
            for (const GresCount& gres : declared->second) {
                most[gres.name] = std::max(most[gres.name], gres.count);
            }
        }
    }
    std::vector<std::string> offered;
    for (const auto& [name, count] : most) {
        offered.push_back(fmt::format("{}:{}", name, count));
    }
    for (const GresCount& gres : *asked) {
        if (auto it = most.find(gres.name); it == most.end() || it->second < gres.count) {
            return Status::invalid(fmt::format(
                    "--gres: invalid generic resource specification '{}' (accepted: gpu{})",
                    spec.gres,
                    offered.empty() ? "; the partition's nodes declare no other resources"
                                    : ", and per node at most " + joined(offered)));
        }
    }
    return Status::ok();
}

// Features the cluster's nodes have, to refuse names no node has (as Slurm does); empty
// while a node has not registered, since its GPU type is a feature too.
std::vector<std::string> known_features(const SubmitContext& context) {
    std::vector<std::string> known;
    for (const sched::NodeCapacity& node : context.nodes) {
        if (node.cpus == 0) {
            return {};
        }
        for (std::string& feature : context.config.features_of(node.name, node.gpu_type)) {
            if (std::find(known.begin(), known.end(), feature) == known.end()) {
                known.push_back(std::move(feature));
            }
        }
    }
    return known;
}

// The partition's nodes the job may use by its -w, -x and -C; refuses names the cluster
// does not have, and choices that leave too few nodes.
Result<std::vector<int>> nodes_of_job(const protocol::JobSpec& spec,
                                      const sched::ResourceRequest& request,
                                      const SubmitContext& context,
                                      const PartitionConfig& partition,
                                      const std::vector<int>& members) {
    const ClusterConfig& config = context.config;
    if (!spec.nodelist.empty() || !spec.exclude.empty()) {
        // Sets, not scans: a request may name many nodes, and a raw one may repeat a name.
        const std::unordered_set<std::string_view> cluster(config.nodes.begin(),
                                                           config.nodes.end());
        for (const auto& [option, names] :
             {std::pair{"--exclude", &spec.exclude}, std::pair{"--nodelist", &spec.nodelist}}) {
            if (names->size() > config.nodes.size()) {
                return Status::invalid(fmt::format(
                        "{}: {} node names for a cluster of {} (accepted: each node once)", option,
                        names->size(), config.nodes.size()));
            }
            for (const std::string& name : *names) {
                if (cluster.count(name) == 0) {
                    return Status::invalid(fmt::format(
                            "{}: invalid node name '{}' (accepted: the cluster's nodes, {})",
                            option, name, compress_hostlist(config.nodes)));
                }
            }
        }
        const std::unordered_set<std::string_view> in_partition(partition.nodes.begin(),
                                                                partition.nodes.end());
        for (const std::string& name : spec.nodelist) {
            if (in_partition.count(name) == 0) {
                return Status::invalid(fmt::format(
                        "--nodelist: node '{}' is not in partition '{}' (accepted: its nodes, {})",
                        name, partition.name, compress_hostlist(partition.nodes)));
            }
        }
    }
    const uint32_t most_nodes = spec.nodes_max != 0 ? spec.nodes_max : spec.nodes_min;
    if (!spec.nodelist.empty() && most_nodes != 0 && spec.nodelist.size() > most_nodes) {
        return Status::invalid(fmt::format(
                "--nodelist: {} nodes named for a job of at most {} (accepted: no more nodes "
                "than --nodes allows)",
                spec.nodelist.size(), most_nodes));
    }
    auto choice = node_choice(spec.nodelist, spec.exclude, spec.constraint, spec.prefer,
                              request.nodes_min);
    if (!choice) {
        return choice.status();
    }
    if (const std::vector<std::string> known = known_features(context); !known.empty()) {
        for (const auto& [option, expr] : {std::pair{"--constraint", &choice->constraint},
                                           std::pair{"--prefer", &choice->prefer}}) {
            for (const std::string& name :
                 *expr ? feature_names(**expr) : std::vector<std::string>{}) {
                if (std::find(known.begin(), known.end(), name) == known.end()) {
                    return Status::invalid(fmt::format(
                            "{}: invalid feature specification: no node has feature '{}' "
                            "(accepted: {})",
                            option, name, joined(known)));
                }
            }
        }
    }
    std::vector<int> eligible =
            choice->any_node() ? members
                               : eligible_nodes(members, *choice, config, context.nodes, true);
    for (const std::string& name : spec.nodelist) {
        if (std::none_of(eligible.begin(), eligible.end(), [&](int index) {
                return config.nodes[static_cast<size_t>(index)] == name;
            })) {
            return Status::infeasible(fmt::format(
                    "Requested node configuration is not available: node '{}' of --nodelist "
                    "does not match --constraint={}",
                    name, spec.constraint));
        }
    }
    const uint32_t needed = std::max<uint32_t>(request.nodes_min, 1);
    if (!choice->any_node() && eligible.size() < needed) {
        return Status::infeasible(fmt::format(
                "Requested node configuration is not available: {} of partition '{}' nodes "
                "left by{}{}{} for a job of {}",
                eligible.size(), partition.name, spec.exclude.empty() ? "" : " --exclude",
                spec.nodelist.empty() ? "" : " --nodelist",
                spec.constraint.empty() ? "" : " --constraint=" + spec.constraint, needed));
    }
    return eligible;
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

namespace {

// The checks against one partition (spec.partition names one, or none for the default).
Result<ValidatedJob> validate_in_partition(const protocol::JobSpec& given,
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

    if (Status licenses = check_licenses(spec, config); !licenses) {
        return licenses;
    }
    if (Status gres = check_gres(spec, config, partition.nodes); !gres) {
        return gres;
    }
    job.request.gres_per_node = gres_uses_of(spec.gres, config.gres_names());
    const std::vector<sched::NodeCapacity>& nodes = context.nodes;
    auto found = context.partition_nodes.find(partition.name);
    const std::vector<int> members =
            found != context.partition_nodes.end() ? found->second : std::vector<int>{};
    auto eligible = nodes_of_job(spec, job.request, context, partition, members);
    if (!eligible) {
        return eligible.status();
    }
    const bool all_known = std::all_of(members.begin(), members.end(), [&](int index) {
        return index < static_cast<int>(nodes.size()) && nodes[index].cpus > 0;
    });
    // "Never" can only be judged once every node of the partition has told its size.
    if (!eligible->empty() && all_known) {
        if (Status feasible = sched::check_feasible(job.request, nodes, *eligible); !feasible) {
            return feasible;
        }
    }
    return job;
}

}  // namespace

Result<ValidatedJob> validate_submission(const protocol::JobSpec& given,
                                         const SubmitContext& context) {
    const std::vector<std::string> partitions = partition_list(given.partition);
    if (partitions.size() <= 1) {
        return validate_in_partition(given, context);
    }
    // -p a,b: the job must be valid in each (Slurm's EnforcePartLimits=ALL); it is placed
    // in the first that can start it, and until then shown in the first.
    std::optional<ValidatedJob> first;
    for (const std::string& name : partitions) {
        protocol::JobSpec one = given;
        one.partition = name;
        auto valid = validate_in_partition(one, context);
        if (!valid) {
            return valid.status();
        }
        if (!first) {
            first = std::move(*valid);
        }
    }
    return std::move(*first);
}

std::vector<std::string> partition_list(const std::string& text) {
    std::vector<std::string> names;
    size_t start = 0;
    while (start < text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        names.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return names;
}

}  // namespace cohort::ctld
