// `cohort sim --compat rlscheduler`: the heuristic baselines of the RLScheduler paper (SC'20,
// DIR-LAB/deep-batch-scheduler), re-implemented from its description so its published
// bounded-slowdown tables can be reproduced: 1,024-job windows on an empty machine, a head
// job picked by a score and kept while it waits, and its simplified EASY backfilling.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/sim/sim_job.h"
#include "scheduler/sim/swf.h"

namespace cohort::sim {

// Its filter: run < 0 becomes 10 s, then only run > 0 is kept; sorted by job id; procs is
// max(allocated, requested); the estimate is the requested time, or the run time where that
// is -1.
std::vector<SimJob> rlscheduler_filter(const SwfTrace& trace);

enum class RlOrder {
    kFcfs,
    kSjf,
    kF1
};

struct RlMachine {
    int64_t nodes = 0;
    double procs_per_node = 1;  // MaxProcs / MaxNodes
};

RlMachine rlscheduler_machine(const SwfTrace& trace);

// Mean bounded slowdown (tau 10 s) of the `length` jobs from `first` on.
double rlscheduler_window_bsld(const std::vector<SimJob>& jobs,
                               const RlMachine& machine,
                               size_t first,
                               size_t length,
                               RlOrder order,
                               bool backfill);

// The windows of the published tables (filtered-job indexes; numpy seed 1).
const std::vector<size_t>& rlscheduler_windows();

}  // namespace cohort::sim
