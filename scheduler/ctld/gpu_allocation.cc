// Which GPUs (and the CPUs next to them) a starting job gets on each of its nodes, and how a
// step's tasks share them. The core decided the nodes; the GPU set on each node is chosen
// here from the layout the agent registered, by the same selector the core ranked them with.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "scheduler/ctld/controller.h"

namespace cohort::ctld {
namespace {

// Every CPU id of the node: its NUMA nodes' CPUs, else 0..cpus-1.
std::vector<int> all_cpus(const NodeEntry& node) {
    std::set<int> ids;
    for (const auto& numa : node.info.resources.topology.numa_nodes) {
        ids.insert(numa.cpus.begin(), numa.cpus.end());
    }
    if (ids.empty()) {
        for (int c = 0; c < node.info.resources.cpus; ++c) {
            ids.insert(c);
        }
    }
    return {ids.begin(), ids.end()};
}

protocol::NodeGpuAlloc alloc_of(const NodeEntry& node,
                                const std::vector<int>& gpus,
                                const std::vector<int>& cpus) {
    protocol::NodeGpuAlloc alloc;
    alloc.gpus.assign(gpus.begin(), gpus.end());
    alloc.cpus.assign(cpus.begin(), cpus.end());
    const auto& topo_gpus = node.info.resources.topology.gpus;
    for (int g : gpus) {
        if (static_cast<size_t>(g) < topo_gpus.size()) {
            alloc.pci_bus_ids.push_back(topo_gpus[static_cast<size_t>(g)].pci_bus_id);
            alloc.vendor = topo_gpus[static_cast<size_t>(g)].vendor;
        }
    }
    return alloc;
}

std::vector<int> as_ints(const std::vector<int32_t>& v) {
    return {v.begin(), v.end()};
}

}  // namespace

std::vector<int> free_gpus(const NodeEntry& node) {
    std::set<int> held;
    for (const auto& [job, alloc] : node.gpu_jobs) {
        held.insert(alloc.gpus.begin(), alloc.gpus.end());
    }
    std::vector<int> free;
    for (int g = 0; g < node.info.resources.gpus; ++g) {
        if (held.count(g) == 0) {
            free.push_back(g);
        }
    }
    return free;
}

sched::NodeFree free_gpus_and_cpus(const NodeEntry& node) {
    std::set<int> cpus_held;
    for (const auto& [job, alloc] : node.gpu_jobs) {
        cpus_held.insert(alloc.cpus.begin(), alloc.cpus.end());
    }
    sched::NodeFree free;
    free.gpus = free_gpus(node);
    for (int c : all_cpus(node)) {
        if (cpus_held.count(c) == 0) {
            free.cpus.push_back(c);
        }
    }
    return free;
}

void Controller::assign_gpus(Job& job, int32_t gpus_per_node) {
    job.gpu_alloc.clear();
    if (gpus_per_node <= 0) {
        return;
    }
    std::vector<int> rail_gpus;  // the GPUs chosen on the first node that had a layout
    for (size_t i = 0; i < job.nodes.size(); ++i) {
        const NodeEntry* node = nodes_.find(job.nodes[i]);
        if (node == nullptr) {
            job.gpu_alloc.emplace_back();
            continue;
        }
        const sched::NodeFree free = free_gpus_and_cpus(*node);
        // The job's CPUs on the node, spread over its GPUs and bound next to them.
        const int cpus_per_gpu = static_cast<int>(job.cpus_per_node.at(i)) / gpus_per_node;
        sched::GpuRequest request{gpus_per_node, cpus_per_gpu,
                                  static_cast<int>(job.tasks_per_node.at(i))};
        // The same local GPUs as on the job's first node where they are as good: rails align.
        auto chosen = sched::select_gpus_aligned(*node->gpu_layout, free, request, rail_gpus);
        if (!chosen && chosen.status().code() == StatusCode::kUnavailable) {
            // CPU ids are short (other jobs' bound CPUs): the GPUs still count, unbound.
            request.cpus_per_gpu = 0;
            chosen = sched::select_gpus_aligned(*node->gpu_layout, free, request, rail_gpus);
        }
        if (chosen) {
            if (rail_gpus.empty()) {
                rail_gpus = chosen->gpus;
            }
            job.gpu_alloc.push_back(alloc_of(*node, chosen->gpus, chosen->cpus));
            continue;
        }
        // No layout for these GPUs (an agent that counts GPUs it cannot describe): the
        // lowest free indexes, as the core counted them.
        spdlog::warn("job {}: no topology-chosen GPUs on {} ({}); taking the lowest free",
                     job.job_id, node->info.name, chosen.status().message());
        std::vector<int> gpus(
                free.gpus.begin(),
                free.gpus.begin()
                        + std::min<ptrdiff_t>(gpus_per_node,
                                              static_cast<ptrdiff_t>(free.gpus.size())));
        job.gpu_alloc.push_back(alloc_of(*node, gpus, {}));
    }
}

Result<protocol::NodeGpuAlloc> take_step_gpus(const NodeEntry& node,
                                              const protocol::NodeGpuAlloc& job_alloc,
                                              const std::set<int32_t>& held,
                                              int32_t count) {
    const auto holds = static_cast<int32_t>(job_alloc.gpus.size());
    if (count > holds) {
        return Status::invalid(fmt::format(
                "--gpus: the step asks for {} GPU(s) on {}, where the job holds {} (accepted: at "
                "most {})",
                count, node.info.name, holds, holds));
    }
    sched::NodeFree free{{}, as_ints(job_alloc.cpus)};
    for (int32_t g : job_alloc.gpus) {
        if (held.count(g) == 0) {
            free.gpus.push_back(g);
        }
    }
    if (static_cast<int32_t>(free.gpus.size()) < count) {
        return Status::unavailable(fmt::format(
                "{}: {} of the job's {} GPU(s) on {} are free, the step asks for {}",
                protocol::kStepCreationDisabled, free.gpus.size(), holds, node.info.name, count));
    }
    std::vector<int> gpus(free.gpus.begin(), free.gpus.begin() + count);
    std::vector<int> cpus;
    if (node.gpu_layout && count > 0) {
        // Each GPU with its share of the job's CPUs, local ones first; without enough CPUs,
        // the GPUs alone.
        const int cpus_per_gpu = static_cast<int>(job_alloc.cpus.size()) / std::max(holds, 1);
        auto chosen = sched::select_gpus(*node.gpu_layout, free, {count, cpus_per_gpu, count});
        if (!chosen) {
            chosen = sched::select_gpus(*node.gpu_layout, free, {count, 0, count});
        }
        if (chosen) {
            gpus = chosen->gpus;
            cpus = chosen->cpus;
        }
    }
    protocol::NodeGpuAlloc alloc = alloc_of(node, gpus, cpus);
    alloc.vendor = job_alloc.vendor;
    return alloc;
}

Result<protocol::NodeGpuBinding> bind_step_gpus(const NodeEntry& node,
                                                const protocol::NodeGpuAlloc& alloc,
                                                const GpuOptions& gpu,
                                                uint32_t tasks) {
    protocol::NodeGpuBinding binding;
    binding.alloc = alloc;
    const std::vector<int> map = gpu_bind_map(gpu.bind);
    binding.per_task = gpu.bind == "closest" || gpu.per_task > 0 || !map.empty();
    const int k = static_cast<int>(alloc.gpus.size());
    if (k == 0 || tasks == 0) {
        return binding;
    }
    for (int id : map) {
        if (id >= k) {
            return Status::invalid(
                    fmt::format("--gpu-bind: map_gpu id {} is not among the {} "
                                "GPUs of the job on {} (accepted: 0-{})",
                                id, k, node.info.name, k - 1));
        }
    }
    // Split the job's GPUs and CPUs over the tasks the way the job was chosen: GPUs in order,
    // each task's CPUs from its GPUs' local CPUs first.
    const sched::NodeFree own{as_ints(alloc.gpus), as_ints(alloc.cpus)};
    const sched::GpuRequest request{k, static_cast<int>(alloc.cpus.size()) / k,
                                    static_cast<int>(tasks)};
    auto split = sched::select_gpus(*node.gpu_layout, own, request);
    for (uint32_t t = 0; t < tasks; ++t) {
        protocol::TaskGpuBinding task;
        if (split && t < split->tasks.size()) {
            const sched::TaskBinding& b = split->tasks[t];
            task.gpus.assign(b.gpus.begin(), b.gpus.end());
            task.cpus.assign(b.cpus.begin(), b.cpus.end());
            if (b.nic >= 0 && static_cast<size_t>(b.nic) < node.gpu_layout->nics.size()) {
                task.nic = node.gpu_layout->nics[static_cast<size_t>(b.nic)];
            }
        }
        if (!map.empty()) {
            const int32_t mapped = alloc.gpus[static_cast<size_t>(map[t % map.size()])];
            task.gpus = {mapped};
            const auto& layout = *node.gpu_layout;
            if (static_cast<size_t>(mapped) < layout.gpus.size()) {
                const int nic = layout.gpus[static_cast<size_t>(mapped)].nic;
                task.nic = nic < 0 ? "" : layout.nics[static_cast<size_t>(nic)];
            }
        } else if (!binding.per_task || task.gpus.empty()) {
            task.gpus = alloc.gpus;
        }
        binding.tasks.push_back(std::move(task));
    }
    return binding;
}

}  // namespace cohort::ctld
