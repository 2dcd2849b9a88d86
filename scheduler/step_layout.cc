// Laying out a step's tasks on its job's nodes.
#include "scheduler/step_layout.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/hostlist.h"

namespace cohort::sched {
namespace {

// Which of the job's nodes a step may use: those `nodelist` names, in the job's order, or
// all of them (the layout takes the first ones it needs).
Result<std::vector<size_t>> candidate_nodes(const StepAllocation& job,
                                            const std::string& nodelist) {
    std::vector<size_t> chosen;
    if (nodelist.empty()) {
        for (size_t i = 0; i < job.nodes.size(); ++i) {
            chosen.push_back(i);
        }
        return chosen;
    }
    auto named = expand_hostlist(nodelist);
    if (!named) {
        return named.status().with_context("--nodelist");
    }
    for (const auto& name : *named) {
        auto it = std::find(job.nodes.begin(), job.nodes.end(), name);
        if (it == job.nodes.end()) {
            return Status::invalid(
                    fmt::format("--nodelist: node '{}' is not in the allocation "
                                "of job {} (accepted: {})",
                                name, job.job_id, compress_hostlist(job.nodes)));
        }
        chosen.push_back(static_cast<size_t>(it - job.nodes.begin()));
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
}

}  // namespace

Result<StepShape> lay_out_step(const StepAllocation& job, const StepShapeRequest& request) {
    const auto job_nodes = static_cast<uint32_t>(job.nodes.size());
    uint32_t nodes = request.nodes;
    if (nodes > job_nodes) {
        return Status::invalid(
                fmt::format("--nodes: {} nodes requested but the allocation of "
                            "job {} has {}",
                            nodes, job.job_id, job_nodes));
    }
    auto chosen = candidate_nodes(job, request.nodelist);
    if (!chosen) {
        return chosen.status();
    }
    const std::vector<uint32_t>& held = job.held_by_steps;
    if (request.nodelist.empty()) {
        // A step of fewer nodes than the job goes where other steps hold the fewest CPUs.
        std::stable_sort(chosen->begin(), chosen->end(),
                         [&](size_t a, size_t b) { return held[a] < held[b]; });
    } else {
        if (nodes != 0 && nodes != chosen->size()) {
            return Status::invalid(
                    fmt::format("--nodes: {} does not match the {} nodes of "
                                "--nodelist '{}'",
                                nodes, chosen->size(), request.nodelist));
        }
        nodes = static_cast<uint32_t>(chosen->size());
    }
    StepShape shape;
    shape.cpus_per_task = request.cpus_per_task != 0 ? request.cpus_per_task
                                                     : std::max<uint32_t>(job.cpus_per_task, 1);
    const uint32_t cpt = shape.cpus_per_task;
    std::vector<uint32_t>& tasks = shape.tasks_per_node;
    const bool job_geometry =
            request.ntasks == 0 && request.ntasks_per_node == 0 && nodes == 0 && job.ntasks != 0;
    if (job_geometry) {
        tasks = job.tasks_per_node;  // the job's own geometry
    } else {
        if (nodes == 0) {
            nodes = request.ntasks != 0 ? std::min(job_nodes, request.ntasks) : job_nodes;
        }
        const uint32_t ntasks = request.ntasks != 0
                                        ? request.ntasks
                                        : nodes * std::max<uint32_t>(request.ntasks_per_node, 1);
        if (ntasks < nodes) {
            return Status::invalid(
                    fmt::format("--ntasks: {} tasks on {} nodes (accepted: at "
                                "least one task per node)",
                                ntasks, nodes));
        }
        for (uint32_t i = 0; i < nodes; ++i) {
            tasks.push_back(ntasks / nodes + (i < ntasks % nodes ? 1 : 0));
        }
    }
    const std::string& asked =
            !request.distribution.empty() ? request.distribution : job.distribution;
    auto distribution = parse_distribution("--distribution", asked);
    if (!distribution) {
        return distribution.status();
    }
    shape.distribution = *distribution;
    if (distribution->kind == TaskDistribution::Kind::kPlane) {
        // Planes deal blocks of N ranks, so the per-node counts follow from N.
        uint32_t ntasks = job_geometry ? job.ntasks : 0;
        for (uint32_t count : tasks) {
            ntasks += job_geometry ? 0 : count;
        }
        tasks = distribution_counts(ntasks, static_cast<uint32_t>(tasks.size()), *distribution);
        const auto used = static_cast<size_t>(
                std::count_if(tasks.begin(), tasks.end(), [](uint32_t n) { return n > 0; }));
        if (used < tasks.size()) {
            return Status::invalid(
                    fmt::format("--distribution: {} deals {} tasks to {} of the "
                                "{} nodes (accepted: a plane size that gives "
                                "every node a task, or fewer nodes with -N)",
                                distribution->name(), ntasks, used, tasks.size()));
        }
    }
    for (size_t i = 0; i < tasks.size(); ++i) {
        const size_t at = (*chosen)[i];
        const uint32_t cpus_alloc = at < job.cpus_per_node.size() ? job.cpus_per_node[at] : 0;
        const uint64_t wanted = static_cast<uint64_t>(tasks[i]) * cpt;
        if (wanted > cpus_alloc) {
            return Status::invalid(
                    fmt::format("--ntasks: {} tasks x {} CPUs on {} exceed the {} "
                                "CPUs job {} holds there",
                                tasks[i], cpt, job.nodes[at], cpus_alloc, job.job_id));
        }
        if (!request.overlap && wanted + held[at] > cpus_alloc) {
            // It fits the allocation, not what the job's running steps leave: srun waits.
            return Status::unavailable(
                    fmt::format("job {}'s running steps hold {} of its {} "
                                "CPUs on {} (--overlap shares them)",
                                job.job_id, held[at], cpus_alloc, job.nodes[at]));
        }
        shape.nodes.push_back(at);
    }
    return shape;
}

}  // namespace cohort::sched
