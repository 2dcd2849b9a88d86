// Adapters from the controller's job records to the core's input types.
#include "scheduler/ctld/core_inputs.h"

#include <algorithm>

#include "scheduler/job_rules.h"

namespace cohort::ctld {

int64_t requested_cpus_of(const protocol::JobSpec& spec) {
    sched::ResourceRequest request;
    request.nodes_min = spec.nodes_min;
    request.ntasks = spec.ntasks;
    request.ntasks_per_node = spec.ntasks_per_node;
    request.cpus_per_task = spec.cpus_per_task;
    return sched::requested_cpus(request);
}

sched::PriorityJob priority_job_of(const protocol::JobRecord& job) {
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

}  // namespace cohort::ctld
