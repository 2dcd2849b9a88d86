// GPU sets of the controller's nodes: which GPUs (and the CPUs bound to them) are free, and
// how a step's tasks share a job's GPUs on one node.
#pragma once

#include <set>
#include <vector>

#include "common/gpu_options.h"
#include "common/protocol/job_types.h"
#include "common/status.h"
#include "scheduler/placement/gpu_select.h"

namespace cohort::ctld {

struct NodeEntry;

// The GPU indexes of `node` that no job holds.
std::vector<int> free_gpus(const NodeEntry& node);
// The GPUs and CPU ids of `node` that no job holds.
sched::NodeFree free_gpus_and_cpus(const NodeEntry& node);

// The GPUs of a step that asks for `count` on `node`: of the job's (`job_alloc`), those no
// other open step holds (`held`), the most local set, with the job's CPUs nearest them.
// Invalid when the job holds fewer than `count` there; unavailable (the step waits) while
// other steps hold them.
Result<protocol::NodeGpuAlloc> take_step_gpus(const NodeEntry& node,
                                              const protocol::NodeGpuAlloc& job_alloc,
                                              const std::set<int32_t>& held,
                                              int32_t count);

// How a step's `tasks` local tasks share the job's GPUs on one node: each its own GPUs with
// --gpu-bind=closest or --gpus-per-task, the GPUs map_gpu names, else all of them; CPUs
// and NIC local to the task's GPUs either way. Fails on a map_gpu id outside the allocation.
Result<protocol::NodeGpuBinding> bind_step_gpus(const NodeEntry& node,
                                                const protocol::NodeGpuAlloc& alloc,
                                                const GpuOptions& gpu,
                                                uint32_t tasks);

}  // namespace cohort::ctld
