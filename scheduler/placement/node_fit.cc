// Node-level first-fit placement with Slurm's task distribution rules.
#include "scheduler/placement/node_fit.h"

#include <algorithm>
#include <string>

namespace cohort::sched {
namespace {

uint32_t nodes_max_of(const ResourceRequest& req) {
    if (req.nodes_max > 0) {
        return req.nodes_max;
    }
    return req.nodes_min > 0 ? req.nodes_min : UINT32_MAX;
}

}  // namespace

// With a node count fixed (-N), tasks spread evenly; without one, they fill nodes in order.
std::optional<Placement> place_tasks(const ResourceRequest& req, const std::vector<int>& eligible,
        const TaskCapacity& capacity) {
    const uint32_t nodes_min = std::max<uint32_t>(req.nodes_min, 1);
    const uint32_t nodes_max = nodes_max_of(req);
    uint32_t ntasks = req.ntasks;
    if (ntasks == 0) {
        ntasks = req.ntasks_per_node > 0 ? req.ntasks_per_node * nodes_min : nodes_min;
    }
    for (uint32_t count = nodes_min; count <= nodes_max && count <= eligible.size(); ++count) {
        if (count > ntasks) {
            break;  // every node needs at least one task
        }
        Placement placement;
        const bool spread = req.nodes_min > 0;
        const uint32_t base = ntasks / count;
        const uint32_t extra = ntasks % count;
        uint32_t remaining = ntasks;
        for (int index : eligible) {
            if (placement.nodes.size() == count || remaining == 0) {
                break;
            }
            uint32_t cap = capacity(index);
            uint32_t nodes_left = count - static_cast<uint32_t>(placement.nodes.size());
            uint32_t want = spread ? base + (placement.nodes.size() < extra ? 1 : 0)
                                   : std::min(cap, remaining - (nodes_left - 1));
            if (cap == 0 || cap < want || want == 0) {
                continue;
            }
            placement.nodes.push_back(index);
            placement.tasks_per_node.push_back(want);
            placement.cpus_per_node.push_back(static_cast<int32_t>(want * req.cpus_per_task));
            remaining -= want;
        }
        if (placement.nodes.size() == count && remaining == 0) {
            placement.memory_mib_per_node = req.memory_mib_per_node;
            return placement;
        }
    }
    return std::nullopt;
}

uint32_t tasks_that_fit(const ResourceRequest& req, int64_t free_cpus, int64_t free_memory_mib) {
    if (req.memory_mib_per_node > free_memory_mib || free_cpus <= 0) {
        return 0;
    }
    uint64_t cap = static_cast<uint64_t>(free_cpus) / req.cpus_per_task;
    if (req.ntasks_per_node > 0) {
        cap = std::min<uint64_t>(cap, req.ntasks_per_node);
    }
    return static_cast<uint32_t>(std::min<uint64_t>(cap, UINT32_MAX));
}

std::optional<Placement> fit_now(const ResourceRequest& request,
        const std::vector<NodeCapacity>& nodes, const std::vector<int>& eligible) {
    return place_tasks(request, eligible, [&](int index) {
        const NodeCapacity& node = nodes[index];
        return node.up ? tasks_that_fit(request, node.cpus_free(), node.memory_free_mib()) : 0u;
    });
}

Status check_feasible(const ResourceRequest& request, const std::vector<NodeCapacity>& nodes,
        const std::vector<int>& eligible) {
    auto empty = [&](int index) {
        return tasks_that_fit(request, nodes[index].cpus, nodes[index].memory_mib);
    };
    if (place_tasks(request, eligible, empty)) {
        return Status::ok();
    }
    int32_t max_cpus = 0;
    int64_t max_mem = 0;
    for (int index : eligible) {
        max_cpus = std::max(max_cpus, nodes[index].cpus);
        max_mem = std::max(max_mem, nodes[index].memory_mib);
    }
    uint32_t ntasks = request.ntasks > 0 ? request.ntasks : std::max<uint32_t>(request.nodes_min, 1);
    return Status::infeasible("Requested node configuration is not available: "
            + std::to_string(std::max<uint32_t>(request.nodes_min, 1)) + " node(s), "
            + std::to_string(ntasks) + " task(s) x " + std::to_string(request.cpus_per_task)
            + " CPU(s), " + std::to_string(request.memory_mib_per_node)
            + " MiB per node requested; the partition has " + std::to_string(eligible.size())
            + " node(s) of at most " + std::to_string(max_cpus) + " CPUs and "
            + std::to_string(max_mem) + " MiB");
}

}  // namespace cohort::sched
