// A step's shape inside its job's allocation (srun within sbatch/salloc): which of the job's
// nodes it uses, how many tasks on each, and CPUs per task, or why it cannot run there (now,
// or at all). Pure: the controller adds where each node is and which GPUs each task binds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/task_distribution.h"

namespace cohort::sched {

// The running job a step is laid out in.
struct StepAllocation {
    uint64_t job_id = 0;
    std::vector<std::string> nodes;        // the job's nodes
    std::vector<uint32_t> cpus_per_node;   // what it holds on each
    std::vector<uint32_t> tasks_per_node;  // its own geometry, for a step that asks nothing
    uint32_t ntasks = 0;                   // its --ntasks; 0: not given
    uint32_t cpus_per_task = 1;
    std::string distribution;             // its --distribution; "": block
    std::vector<uint32_t> held_by_steps;  // CPUs its open (not --overlap) steps hold, per node
};

// What the step asks for; 0 and "" mean "not given".
struct StepShapeRequest {
    uint32_t nodes = 0;
    uint32_t ntasks = 0;
    uint32_t ntasks_per_node = 0;
    uint32_t cpus_per_task = 0;
    std::string nodelist;
    std::string distribution;
    bool overlap = false;  // shares the CPUs other steps hold
};

struct StepShape {
    std::vector<size_t> nodes;  // indexes into StepAllocation::nodes, in rank order
    std::vector<uint32_t> tasks_per_node;
    uint32_t cpus_per_task = 1;
    TaskDistribution distribution;
};

// kInvalidArgument when the step can never fit the allocation; kUnavailable when it fits once
// other steps free the CPUs they hold (srun waits for those).
Result<StepShape> lay_out_step(const StepAllocation& job, const StepShapeRequest& request);

}  // namespace cohort::sched
