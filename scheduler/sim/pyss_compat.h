// `cohort sim --compat pyss`: the job filter and event order of the HUJI pyss simulator
// (used by Tsafrir et al. and the SC'15 backfilling artifact), driving Cohort's EASY pass on
// a machine of MaxProcs processors, so published figures can be reproduced exactly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/backfill/backfill_pass.h"
#include "scheduler/sim/sim_job.h"
#include "scheduler/sim/swf.h"

namespace cohort::sim {

struct FilteredTrace {
    std::vector<SimJob> jobs;
    std::map<std::string, int64_t> skipped;  // reason -> count
};

// pyss's rules: size = requested procs (else allocated), dropped when either is above
// `max_procs` or both are <= 0, or when run, requested time or submit is not positive
// (submit may be 0); run time clipped to the requested time, which is the estimate.
FilteredTrace pyss_filter(const SwfTrace& trace, int64_t max_procs);

// The waiting queue's order: submit time, or shortest estimate first (ties by submit).
enum class QueueOrder {
    kFcfs,
    kSjf
};

struct JobOutcome {
    int64_t id = 0;
    int64_t submit = 0;
    int64_t start = 0;
    int64_t run = 0;
    int64_t procs = 0;
};

struct SimResult {
    std::vector<JobOutcome> jobs;
    std::vector<double> pass_ms;  // wall time of each scheduling pass
};

// Replays `jobs` (in submit order) on `procs` processors: submissions before terminations at
// equal times; a submission triggers a pass only if the new job fits now; every
// termination triggers one.
SimResult simulate_pyss(const std::vector<SimJob>& jobs,
                        int64_t procs,
                        const sched::BackfillOptions& backfill,
                        QueueOrder order = QueueOrder::kFcfs);

}  // namespace cohort::sim
