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

// What a waiting job asks for on which nodes: one part, or for a heterogeneous job one per
// component, which then start together on distinct nodes.
struct WaitingPart {
    ResourceRequest request;
    std::vector<int> eligible;  // indexes into the nodes: its partition's
};

// The fewest, lowest-priority candidates whose ending lets every part of the waiting job start
// now on the up nodes of its `eligible`: candidates are added lowest priority first until the
// job fits, then each one whose resources the job can do without is dropped again, highest
// priority first. `held` is every running allocation, the candidates' included. Empty when the
// job fits already, or when it would not fit even with every candidate gone: a job is never
// preempted for one that still could not start.
std::vector<uint64_t> choose_preemptees(const std::vector<NodeCapacity>& nodes,
                                        const std::vector<WaitingPart>& waiting,
                                        const std::vector<RunningAllocation>& held,
                                        std::vector<PreemptionCandidate> candidates);

}  // namespace cohort::sched
