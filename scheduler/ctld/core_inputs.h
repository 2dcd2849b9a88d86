// What the pure core is given of the controller's job records: the core has its own small
// input types, so that the controller, `cohort sim` and the golden scenarios feed the same
// rules from their own tables.
#pragma once

#include <functional>
#include <string>

#include "common/protocol/messages.h"
#include "scheduler/ctld/job.h"
#include "scheduler/priority/priority_model.h"
#include "scheduler/snapshot.h"
#include "scheduler/step_layout.h"

namespace cohort::ctld {

// CPUs the job asks for, as submitted (sched::requested_cpus over its raw counts).
int64_t requested_cpus_of(const JobRequest& spec);

// Views `job`, which must outlive the result.
sched::PriorityJob priority_job_of(const Job& job);

// A job's generic resources per node ("nvme:20") as the core counts them, by their index in
// `gres_names` (ClusterConfig::gres_names). Names not there are left out: submit refused them.
std::vector<sched::GresUse> gres_uses_of(const std::string& gres,
                                         const std::vector<std::string>& gres_names);

// What a running (or completing) job holds, for planning; `index_of` gives a node's index in
// the snapshot (-1: not configured, skipped).
sched::RunningAllocation running_allocation_of(
        const Job& job,
        const std::function<int(const std::string&)>& index_of,
        const std::vector<std::string>& gres_names,
        int64_t now);

// The running job a step is laid out in, its open steps holding `held_by_steps`.
sched::StepAllocation step_allocation_of(const Job& job, std::vector<uint32_t> held_by_steps);
sched::StepShapeRequest step_shape_of(const protocol::StepCreateRequest& request);

}  // namespace cohort::ctld
