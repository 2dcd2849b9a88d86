// Checks a submission against the configuration and the nodes before anything is queued.
#pragma once

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

// Every error names the field, the value and what is accepted. `nodes` are the controller's
// nodes in config order; feasibility is judged on the partition's registered nodes.
Result<ValidatedJob> validate_submission(const protocol::JobSpec& spec,
        const ClusterConfig& config, const std::vector<sched::NodeCapacity>& nodes,
        const std::vector<int>& registered);

}  // namespace cohort::ctld
