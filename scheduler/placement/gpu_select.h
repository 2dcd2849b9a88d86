// Choosing one job's GPUs, CPUs and NICs on a node, and the node for a single-node GPU job.
// Locality first (NVLink clique, PCIe switch, NUMA node, socket), then the choice that keeps
// the largest free domains intact for later jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "scheduler/placement/gpu_layout.h"

namespace cohort::sched {

struct GpuRequest {
    int gpus = 0;
    int cpus_per_gpu = 0;
    int tasks = 0;  // 0: one task per GPU
};

// How local a GPU set is; compared in member order, so one clique outranks one switch, and
// so on. A single GPU is local at every level.
struct GpuSetLocality {
    bool one_clique = false;
    bool one_switch = false;
    bool one_numa = false;
    bool one_socket = false;

    auto operator<=>(const GpuSetLocality&) const = default;
};

struct TaskBinding {
    std::vector<int> gpus;
    std::vector<int> cpus;
    int nic = -1;  // index into NodeGpuLayout::nics: the closest NIC of the task's first GPU
};

struct GpuSelection {
    std::vector<int> gpus;  // ascending
    std::vector<int> cpus;  // ascending
    std::vector<TaskBinding> tasks;
    GpuSetLocality locality;
};

// What is free on one node: GPU indexes and CPU ids.
struct NodeFree {
    std::vector<int> gpus;
    std::vector<int> cpus;
};

GpuSetLocality locality_of(const NodeGpuLayout& layout, const std::vector<int>& gpus);

// The best locality that `k` of the free GPUs can reach; nullopt when fewer are free.
std::optional<GpuSetLocality> best_locality(const NodeGpuLayout& layout,
                                            const std::vector<int>& free_gpus,
                                            int k);

// Picks `request.gpus` of the free GPUs with the best locality; among equally local sets the
// one leaving the free GPUs concentrated in the fewest domains (sum over every domain of the
// square of its free GPUs after the choice), then the lowest indexes. Each task's CPUs come
// from its GPUs' local CPUs first. Fails with kInvalidArgument for a request of no GPUs or a
// node of more than 63, kInfeasible when the node has fewer GPUs than asked, and with
// kUnavailable when too few GPUs or CPUs are free now. Microseconds on 8-16 GPU nodes: only
// sets inside the smallest domains that reach the best locality are compared.
Result<GpuSelection> select_gpus(const NodeGpuLayout& layout,
                                 const NodeFree& free,
                                 const GpuRequest& request);

// As select_gpus(), but takes `aligned` (the GPUs the job got on another node) when they are
// all free and as local as the best free set, so a multi-node job uses the same local GPU
// indexes, and so the same rails, on every node.
Result<GpuSelection> select_gpus_aligned(const NodeGpuLayout& layout,
                                         const NodeFree& free,
                                         const GpuRequest& request,
                                         const std::vector<int>& aligned);

struct NodeCandidate {
    const NodeGpuLayout* layout = nullptr;
    NodeFree free;
};

struct NodeChoice {
    int node = -1;  // index into the candidates
    GpuSelection selection;
};

// How good a node is for a job's GPUs, larger is better: one NVLink clique within reach
// first, since it matters most to collectives; then the best fit (the fewest free GPUs, so
// whole nodes stay whole for whole-node jobs); then the rest of the locality within reach.
using GpuNodeRank = std::tuple<bool, int64_t, GpuSetLocality>;
GpuNodeRank gpu_node_rank(const GpuSetLocality& reachable, int64_t free_gpus);

// For a single-node GPU job: the candidate of the highest gpu_node_rank(), the first on ties.
// Fails with kInfeasible when no candidate could ever hold it, else kUnavailable.
Result<NodeChoice> choose_node(const std::vector<NodeCandidate>& nodes, const GpuRequest& request);

}  // namespace cohort::sched
