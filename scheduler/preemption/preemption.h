// Which running jobs to preempt so that a waiting job of a preempting QoS starts now.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/snapshot.h"

namespace cohort::sched {

// A running job that the waiting job's QoS may preempt: for a heterogeneous job, every
// component's allocation, as they end together.
struct PreemptionCandidate {
    uint64_t job_id = 0;
    int64_t priority = 0;
    std::vector<RunningAllocation> allocations;
};

// The fewest, lowest-priority candidates whose ending lets `request` start now on the up nodes
// of `eligible`: candidates are added lowest priority first until the job fits, then each one
// whose resources the job can do without is dropped again, highest priority first. `held` is
// every running allocation, the candidates' included. Empty when the job fits already, or when
// it would not fit even with every candidate gone: a job is never preempted for one that still
// could not start.
std::vector<uint64_t> choose_preemptees(const std::vector<NodeCapacity>& nodes,
                                        const std::vector<int>& eligible,
                                        const std::vector<RunningAllocation>& held,
                                        const ResourceRequest& request,
                                        std::vector<PreemptionCandidate> candidates);

}  // namespace cohort::sched
