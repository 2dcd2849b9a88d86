// Adapters from the controller's job records to the core's input types.
#include "scheduler/ctld/core_inputs.h"

#include <algorithm>

#include "common/generic_gres.h"
#include "scheduler/job_rules.h"

namespace cohort::ctld {

int64_t requested_cpus_of(const JobRequest& spec) {
    sched::ResourceRequest request;
    request.nodes_min = spec.nodes_min;
    request.ntasks = spec.ntasks;
    request.ntasks_per_node = spec.ntasks_per_node;
    request.cpus_per_task = spec.cpus_per_task;
    return sched::requested_cpus(request);
}

std::vector<sched::GresUse> gres_uses_of(const std::string& gres,
                                         const std::vector<std::string>& gres_names) {
    std::vector<sched::GresUse> uses;
    auto parsed = parse_generic_gres("--gres", gres);
    for (const GresCount& count : parsed ? *parsed : std::vector<GresCount>{}) {
        const auto kind = std::lower_bound(gres_names.begin(), gres_names.end(), count.name);
        if (kind != gres_names.end() && *kind == count.name) {
            uses.push_back({static_cast<int>(kind - gres_names.begin()), count.count});
        }
    }
    return uses;
}

sched::RunningAllocation running_allocation_of(
        const Job& job,
        const std::function<int(const std::string&)>& index_of,
        const std::vector<std::string>& gres_names,
        int64_t now) {
    sched::RunningAllocation running;
    for (size_t i = 0; i < job.nodes.size(); ++i) {
        if (const int index = index_of(job.nodes[i]); index >= 0) {
            running.nodes.push_back(index);
            running.cpus_per_node.push_back(static_cast<int32_t>(job.cpus_per_node.at(i)));
        }
    }
    running.memory_mib_per_node = job.mem_per_node_mib;
    running.gpus_per_node = job.resources.gpus_per_node;
    for (const protocol::NodeGpuAlloc& alloc : job.gpu_alloc) {  // --exclusive: all of them
        running.gpus_per_node =
                std::max(running.gpus_per_node, static_cast<int32_t>(alloc.gpus.size()));
    }
    if (!job.spec.gres.empty()) {
        running.gres_per_node = gres_uses_of(job.spec.gres.str(), gres_names);
    }
    running.expected_end = sched::expected_end(job.start_time, job.time_limit_s, now);
    return running;
}

sched::PriorityJob priority_job_of(const Job& job) {
    sched::PriorityJob view;
    view.user = job.user_name;
    view.account = job.spec.account;
    view.partition = job.partition;
    view.qos = job.spec.qos;
    view.eligible_since = std::max(job.submit_time, job.spec.begin_time);
    view.cpus = requested_cpus_of(job.spec);
    view.nice = job.spec.nice;
    return view;
}

sched::StepAllocation step_allocation_of(const Job& job, std::vector<uint32_t> held_by_steps) {
    sched::StepAllocation allocation;
    allocation.job_id = job.job_id;
    allocation.nodes = job.nodes;
    allocation.cpus_per_node = job.cpus_per_node;
    allocation.tasks_per_node = job.tasks_per_node;
    // With its GPU options applied; --ntasks-per-node alone gives as many on each node, as
    // SLURM_NTASKS tells srun in a batch script.
    const TaskGeometry geometry = job.geometry();
    allocation.ntasks = geometry.ntasks != 0 ? geometry.ntasks
                                             : geometry.ntasks_per_node
                                                       * static_cast<uint32_t>(job.nodes.size());
    allocation.cpus_per_task = geometry.cpus_per_task;
    allocation.distribution = job.spec.distribution;
    allocation.held_by_steps = std::move(held_by_steps);
    return allocation;
}

sched::StepShapeRequest step_shape_of(const protocol::StepCreateRequest& request) {
    sched::StepShapeRequest shape;
    shape.nodes = request.nodes;
    shape.ntasks = request.ntasks;
    shape.ntasks_per_node = request.ntasks_per_node;
    shape.cpus_per_task = request.cpus_per_task;
    shape.nodelist = request.nodelist;
    shape.distribution = request.distribution;
    shape.overlap = request.overlap;
    return shape;
}

}  // namespace cohort::ctld
