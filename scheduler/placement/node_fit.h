// Fitting one job's tasks onto nodes: the node-level placement the first-fit pass uses.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "common/status.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// How many of the request's tasks a node (an index into the snapshot's nodes) can take.
using TaskCapacity = std::function<uint32_t(int node)>;

// Places `request` on the first eligible nodes (in the given order) by Slurm's distribution
// rules: with -N the tasks spread evenly, without it they fill nodes in order.
std::optional<Placement> place_tasks(const ResourceRequest& request,
        const std::vector<int>& eligible, const TaskCapacity& capacity);

// Tasks a node could take given what it has free (0 when memory or GPUs are short).
uint32_t tasks_that_fit(const ResourceRequest& request, int64_t free_cpus,
        int64_t free_memory_mib, int64_t free_gpus);

// Does the node have the GPU type the request names (any node when it names none)?
bool has_gpu_type(const ResourceRequest& request, const NodeCapacity& node);

// The eligible nodes ordered by their free GPUs, fewest first (ties in the given order):
// a GPU job takes the fullest node it fits on, so whole nodes stay whole for whole-node jobs.
std::vector<int> best_fit_by_gpus(const std::vector<int>& eligible,
        const std::function<int64_t(int node)>& free_gpus);

// "Never": could the request fit if every eligible node were empty and up? The error names
// what was asked and the largest thing the partition offers.
Status check_feasible(const ResourceRequest& request, const std::vector<NodeCapacity>& nodes,
        const std::vector<int>& eligible);

}  // namespace cohort::sched
