// Submission checks: partition, time limit, task geometry, feasibility.
#include "scheduler/ctld/submit_validation.h"

#include <algorithm>

#include "common/time_spec.h"
#include "scheduler/placement/node_fit.h"

namespace cohort::ctld {

sched::ResourceRequest request_of(const protocol::JobSpec& spec) {
    sched::ResourceRequest request;
    request.nodes_min = spec.nodes_min;
    request.nodes_max = spec.nodes_max;
    request.ntasks = spec.ntasks;
    request.ntasks_per_node = spec.ntasks_per_node;
    request.cpus_per_task = std::max<uint32_t>(spec.cpus_per_task, 1);
    request.memory_mib_per_node = spec.mem_mib;
    return request;
}

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

Result<ValidatedJob> validate_submission(const protocol::JobSpec& spec,
        const ClusterConfig& config, const std::vector<sched::NodeCapacity>& nodes,
        const PartitionNodes& partition_nodes) {
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
    job.time_limit_s = spec.time_limit_s;
    if (job.time_limit_s == -2) {
        job.time_limit_s = partition.default_time_s != -1 ? partition.default_time_s
                                                          : partition.max_time_s;
    }
    if (partition.max_time_s != -1
            && (job.time_limit_s == -1 || job.time_limit_s > partition.max_time_s)) {
        return Status::invalid("--time: requested time limit "
                + format_duration(job.time_limit_s) + " exceeds the limit of "
                + format_duration(partition.max_time_s) + " of partition '" + partition.name
                + "'");
    }
    if (job.time_limit_s > sched::kForever) {
        return Status::invalid("--time: requested time limit " + format_duration(job.time_limit_s)
                + " is beyond 100 years (accepted: up to 36500-00:00:00, or UNLIMITED)");
    }
    if (spec.nodes_max != 0 && spec.nodes_max < spec.nodes_min) {
        return Status::invalid("--nodes: maximum " + std::to_string(spec.nodes_max)
                + " is below minimum " + std::to_string(spec.nodes_min));
    }
    if (spec.ntasks != 0 && spec.nodes_min > spec.ntasks) {
        return Status::invalid("--nodes: " + std::to_string(spec.nodes_min)
                + " nodes for " + std::to_string(spec.ntasks)
                + " tasks (accepted: at most one node per task)");
    }
    job.request = request_of(spec);

    auto found = partition_nodes.find(partition.name);
    const std::vector<int> eligible = found != partition_nodes.end() ? found->second
                                                                     : std::vector<int>{};
    const bool all_known = std::all_of(eligible.begin(), eligible.end(),
            [&](int index) { return index < static_cast<int>(nodes.size()) && nodes[index].cpus > 0; });
    // "Never" can only be judged once every node of the partition has told its size.
    if (!eligible.empty() && all_known) {
        if (Status feasible = sched::check_feasible(job.request, nodes, eligible); !feasible) {
            return feasible;
        }
    }
    return job;
}

}  // namespace cohort::ctld
