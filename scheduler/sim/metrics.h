// What a simulation run is judged by: utilization, waits, bounded slowdown, pass times.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/sim/pyss_compat.h"

namespace cohort::sim {

struct Metrics {
    int64_t jobs = 0;
    double utilization = 0;  // sum(run x procs) / (procs x (last end - first submit))
    double mean_wait_s = 0;
    double median_wait_s = 0;
    double mean_response_s = 0;  // wait + run
    double mean_bsld = 0;        // bounded slowdown, tau = 10 s
    int64_t max_wait_s = 0;
    int64_t makespan_s = 0;
    double mean_pass_ms = 0;
    double max_pass_ms = 0;
};

Metrics compute_metrics(const SimResult& result, int64_t procs);

}  // namespace cohort::sim
