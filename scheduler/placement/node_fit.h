// Fitting one job's tasks onto nodes: the node-level placement the first-fit pass uses.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "common/status.h"
#include "scheduler/placement/gpu_select.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// How many of the request's tasks a node (an index into the snapshot's nodes) can take.
using TaskCapacity = std::function<uint32_t(int node)>;

// Places `request` on the first eligible nodes (in the given order) by Slurm's distribution
// rules: with -N the tasks spread evenly, without it they fill nodes in order.
std::optional<Placement> place_tasks(const ResourceRequest& request,
                                     const std::vector<int>& eligible,
                                     const TaskCapacity& capacity);

// Tasks a node could take given what it has free (0 when memory or GPUs are short).
uint32_t tasks_that_fit(const ResourceRequest& request,
                        int64_t free_cpus,
                        int64_t free_memory_mib,
                        int64_t free_gpus);

// tasks_that_fit on `node` with that much of it free: a whole-node request (--exclusive)
// needs all its CPUs and GPUs free, and --mem=0 all its memory; a whole-core one
// (--hint=nomultithread) a core, all its threads, for each CPU a task asks for.
uint32_t tasks_that_fit_on(const ResourceRequest& request,
                           const NodeCapacity& node,
                           int64_t free_cpus,
                           int64_t free_memory_mib,
                           int64_t free_gpus);

// What a placement holds beyond what its tasks use: a whole-node request every CPU and GPU
// of its nodes (and with --mem=0 all their memory), a whole-core request every thread of
// the cores its tasks' CPUs are (with --mem-per-cpu, memory for each of those threads).
void widen_allocation(const ResourceRequest& request,
                      const std::vector<NodeCapacity>& nodes,
                      Placement& placement);

// Whether placements of `request` need widen_allocation.
bool widens(const ResourceRequest& request);

// Does the node have the GPU type the request names (any node when it names none)?
bool has_gpu_type(const ResourceRequest& request, const NodeCapacity& node);

// Does the node have as many of each generic resource as the request asks, however busy?
bool has_gres(const ResourceRequest& request, const NodeCapacity& node);

// The eligible nodes in the order a GPU job tries them, best gpu_node_rank() first (ties in
// the given order): where its GPUs can share one NVLink clique, then the fullest node it fits
// on, so whole nodes stay whole for whole-node jobs. `reachable` is the best locality the
// job's GPUs can reach on a node; all false where it is unknown, as for a later start.
std::vector<int> gpu_fit_order(const std::vector<int>& eligible,
                               const std::function<int64_t(int node)>& free_gpus,
                               const std::function<GpuSetLocality(int node)>& reachable);

// "Never": could the request fit if every eligible node were empty and up? The error names
// what was asked and the largest thing the partition offers.
Status check_feasible(const ResourceRequest& request,
                      const std::vector<NodeCapacity>& nodes,
                      const std::vector<int>& eligible);

}  // namespace cohort::sched
