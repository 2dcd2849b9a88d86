// Fitting one job's tasks onto nodes: the node-level placement the first-fit pass uses.
#pragma once

#include <optional>
#include <vector>

#include "common/status.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// Places `request` on the first eligible nodes (in the given order) with room now, or
// returns nothing when it does not fit at this moment.
std::optional<Placement> fit_now(const ResourceRequest& request,
        const std::vector<NodeCapacity>& nodes, const std::vector<int>& eligible);

// "Never": could the request fit if every eligible node were empty and up? The error names
// what was asked and the largest thing the partition offers.
Status check_feasible(const ResourceRequest& request, const std::vector<NodeCapacity>& nodes,
        const std::vector<int>& eligible);

}  // namespace cohort::sched
