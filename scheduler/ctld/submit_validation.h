// Checks a submission against the configuration and the nodes before anything is queued.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/protocol/job_types.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

struct ValidatedJob {
    const PartitionConfig* partition = nullptr;
    int64_t time_limit_s = -1;
    sched::ResourceRequest request;
};

sched::ResourceRequest request_of(const protocol::JobSpec& spec);

// Indexes into the controller's node table of each partition's nodes.
using PartitionNodes = std::map<std::string, std::vector<int>>;
PartitionNodes index_partitions(const ClusterConfig& config);

// Every error names the field, the value and what is accepted. `nodes` are the controller's
// nodes in config order (cpus 0: not registered yet); feasibility is judged once every node
// of the partition has registered.
Result<ValidatedJob> validate_submission(const protocol::JobSpec& spec,
        const ClusterConfig& config, const std::vector<sched::NodeCapacity>& nodes,
        const PartitionNodes& partition_nodes);

}  // namespace cohort::ctld
