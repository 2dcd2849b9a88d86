// Node-level first-fit placement with Slurm's task distribution rules.
#include "scheduler/placement/node_fit.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace cohort::sched {
namespace {

// CPUs a node gives `tasks` of the job's tasks.
uint32_t cpus_for(const ResourceRequest& req, uint32_t tasks) {
    const uint32_t cpus = req.overcommit ? req.cpus_per_task : tasks * req.cpus_per_task;
    return std::max(cpus, req.min_cpus_per_node);
}

void add_node(const ResourceRequest& req, int index, uint32_t tasks, Placement& placement) {
    placement.nodes.push_back(index);
    placement.tasks_per_node.push_back(tasks);
    placement.cpus_per_node.push_back(static_cast<int32_t>(cpus_for(req, tasks)));
}

std::optional<Placement> finish(const ResourceRequest& req, Placement placement) {
    placement.memory_mib_per_node = req.memory_mib_per_node;
    if (req.memory_mib_per_cpu > 0) {
        // One figure for every node: the busiest node's CPUs decide it.
        const int32_t most =
                *std::max_element(placement.cpus_per_node.begin(), placement.cpus_per_node.end());
        placement.memory_mib_per_node = req.memory_mib_per_cpu * most;
    }
    placement.gpus_per_node = req.gpus_per_node;
    return placement;
}

std::optional<Placement> fill_in_order(const ResourceRequest& req,
                                       uint32_t ntasks,
                                       const std::vector<int>& eligible,
                                       const TaskCapacity& capacity) {
    Placement placement;
    uint32_t remaining = ntasks;
    for (int index : eligible) {
        if (remaining == 0) {
            break;
        }
        if (uint32_t cap = capacity(index); cap > 0) {
            uint32_t take = std::min(cap, remaining);
            add_node(req, index, take, placement);
            remaining -= take;
        }
    }
    if (remaining > 0) {
        return std::nullopt;
    }
    return finish(req, std::move(placement));
}

std::optional<Placement> spread_evenly(const ResourceRequest& req,
                                       uint32_t ntasks,
                                       uint32_t count,
                                       const std::vector<int>& eligible,
                                       const TaskCapacity& capacity) {
    Placement placement;
    const uint32_t base = ntasks / count;
    const uint32_t extra = ntasks % count;
    for (int index : eligible) {
        if (placement.nodes.size() == count) {
            break;
        }
        uint32_t want = base + (placement.nodes.size() < extra ? 1 : 0);
        if (capacity(index) >= want) {
            add_node(req, index, want, placement);
        }
    }
    if (placement.nodes.size() < count) {
        return std::nullopt;
    }
    return finish(req, std::move(placement));
}

}  // namespace

// With a node count fixed (-N), tasks spread evenly over the first nodes that take their
// share; without one, they fill nodes in order (block distribution over the fewest nodes).
std::optional<Placement> place_tasks(const ResourceRequest& req,
                                     const std::vector<int>& eligible,
                                     const TaskCapacity& capacity) {
    const uint32_t nodes_min = std::max<uint32_t>(req.nodes_min, 1);
    uint32_t ntasks = req.ntasks;
    if (ntasks == 0) {
        ntasks = req.ntasks_per_node > 0 ? req.ntasks_per_node * nodes_min : nodes_min;
    }
    if (req.nodes_min == 0) {
        return fill_in_order(req, ntasks, eligible, capacity);
    }
    const uint32_t nodes_max = req.nodes_max > 0 ? req.nodes_max : req.nodes_min;
    for (uint32_t count = nodes_min; count <= nodes_max && count <= eligible.size(); ++count) {
        if (count > ntasks) {
            break;  // every node needs at least one task
        }
        if (auto placement = spread_evenly(req, ntasks, count, eligible, capacity)) {
            return placement;
        }
    }
    return std::nullopt;
}

bool has_gpu_type(const ResourceRequest& request, const NodeCapacity& node) {
    return request.gpu_type.empty() || request.gpu_type == node.gpu_type;
}

bool has_gres(const ResourceRequest& request, const NodeCapacity& node) {
    return std::all_of(request.gres_per_node.begin(), request.gres_per_node.end(),
                       [&](const GresUse& use) {
                           const auto kind = static_cast<size_t>(use.kind);
                           return kind < node.gres.size() && node.gres[kind] >= use.per_node;
                       });
}

std::vector<int> gpu_fit_order(const std::vector<int>& eligible,
                               const std::function<int64_t(int node)>& free_gpus,
                               const std::function<GpuSetLocality(int node)>& reachable) {
    std::vector<std::pair<GpuNodeRank, int>> ranked;
    ranked.reserve(eligible.size());
    for (int index : eligible) {
        ranked.emplace_back(gpu_node_rank(reachable(index), free_gpus(index)), index);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int> out;
    out.reserve(ranked.size());
    for (const auto& entry : ranked) {
        out.push_back(entry.second);
    }
    return out;
}

uint32_t tasks_that_fit(const ResourceRequest& req,
                        int64_t free_cpus,
                        int64_t free_memory_mib,
                        int64_t free_gpus) {
    if (req.memory_mib_per_node > free_memory_mib || req.gpus_per_node > free_gpus || free_cpus <= 0
        || free_cpus < req.min_cpus_per_node) {
        return 0;
    }
    // Overcommitted, a node's tasks share the CPUs of one.
    uint64_t cap = req.overcommit ? (free_cpus >= req.cpus_per_task ? UINT32_MAX : 0)
                                  : static_cast<uint64_t>(free_cpus) / req.cpus_per_task;
    if (req.memory_mib_per_cpu > 0) {
        const int64_t per_task = req.memory_mib_per_cpu * req.cpus_per_task;
        cap = req.overcommit
                      ? (free_memory_mib >= per_task ? cap : 0)
                      : std::min<uint64_t>(
                              cap, static_cast<uint64_t>(std::max<int64_t>(free_memory_mib, 0)
                                                         / per_task));
    }
    if (req.ntasks_per_node > 0) {
        cap = std::min<uint64_t>(cap, req.ntasks_per_node);
    }
    return static_cast<uint32_t>(std::min<uint64_t>(cap, UINT32_MAX));
}

uint32_t tasks_that_fit_on(const ResourceRequest& req,
                           const NodeCapacity& node,
                           int64_t free_cpus,
                           int64_t free_memory_mib,
                           int64_t free_gpus) {
    if (req.whole_cores && node.threads_per_core > 1) {
        ResourceRequest in_threads = req;
        in_threads.whole_cores = false;
        in_threads.cpus_per_task *= static_cast<uint32_t>(node.threads_per_core);
        return tasks_that_fit_on(in_threads, node, free_cpus, free_memory_mib, free_gpus);
    }
    if (req.whole_node && (free_cpus < node.cpus || free_gpus < node.gpus)) {
        return 0;
    }
    if (req.whole_node_memory && free_memory_mib < node.memory_mib) {
        return 0;
    }
    return tasks_that_fit(req, free_cpus, free_memory_mib, free_gpus);
}

bool widens(const ResourceRequest& req) {
    return req.whole_node || req.whole_node_memory || req.whole_cores;
}

void widen_allocation(const ResourceRequest& req,
                      const std::vector<NodeCapacity>& nodes,
                      Placement& placement) {
    for (size_t i = 0; i < placement.nodes.size(); ++i) {
        const NodeCapacity& node = nodes[static_cast<size_t>(placement.nodes[i])];
        if (req.whole_cores) {
            placement.cpus_per_node[i] =
                    std::min(placement.cpus_per_node[i] * node.threads_per_core, node.cpus);
        }
        if (req.whole_node) {
            placement.cpus_per_node[i] = std::max(placement.cpus_per_node[i], node.cpus);
            placement.gpus_per_node = std::max(placement.gpus_per_node, node.gpus);
        }
        if (req.whole_node_memory) {
            placement.memory_mib_per_node =
                    std::max(placement.memory_mib_per_node, node.memory_mib);
        }
    }
    if (req.whole_cores && req.memory_mib_per_cpu > 0 && !placement.cpus_per_node.empty()) {
        placement.memory_mib_per_node =
                req.memory_mib_per_cpu
                * *std::max_element(placement.cpus_per_node.begin(), placement.cpus_per_node.end());
    }
}

Status check_feasible(const ResourceRequest& request,
                      const std::vector<NodeCapacity>& nodes,
                      const std::vector<int>& eligible) {
    auto empty = [&](int index) -> uint32_t {
        const NodeCapacity& node = nodes[static_cast<size_t>(index)];
        if (!has_gpu_type(request, node) || !has_gres(request, node)) {
            return 0;
        }
        return tasks_that_fit_on(request, node, node.cpus, node.memory_mib, node.gpus);
    };
    if (place_tasks(request, eligible, empty)) {
        return Status::ok();
    }
    int32_t max_cpus = 0;
    int64_t max_mem = 0;
    int32_t max_gpus = 0;
    for (int index : eligible) {
        const NodeCapacity& node = nodes[static_cast<size_t>(index)];
        max_cpus = std::max(max_cpus, node.cpus);
        max_mem = std::max(max_mem, node.memory_mib);
        max_gpus = std::max(max_gpus, node.gpus);
    }
    uint32_t ntasks =
            request.ntasks > 0 ? request.ntasks : std::max<uint32_t>(request.nodes_min, 1);
    return Status::infeasible(fmt::format(
            "Requested node configuration is not available: {} node(s), {} task(s) x {} CPU(s), "
            "{} MiB and {}{}{} GPU(s) per node requested; the partition has {} node(s) of at "
            "most {} CPUs, {} MiB and {} GPUs",
            std::max<uint32_t>(request.nodes_min, 1), ntasks, request.cpus_per_task,
            request.memory_mib_per_node, request.gpus_per_node, request.gpu_type.empty() ? "" : " ",
            request.gpu_type, eligible.size(), max_cpus, max_mem, max_gpus));
}

}  // namespace cohort::sched
