// Simulation metrics.
#include "scheduler/sim/metrics.h"

#include <algorithm>

namespace cohort::sim {

Metrics compute_metrics(const SimResult& result, int64_t procs) {
    constexpr double kTau = 10.0;
    Metrics m;
    m.jobs = static_cast<int64_t>(result.jobs.size());
    if (result.jobs.empty()) {
        return m;
    }
    std::vector<int64_t> waits;
    waits.reserve(result.jobs.size());
    int64_t first_submit = INT64_MAX;
    int64_t last_end = INT64_MIN;
    double work = 0;
    double wait_sum = 0;
    double bsld_sum = 0;
    for (const JobOutcome& job : result.jobs) {
        const int64_t wait = job.start - job.submit;
        waits.push_back(wait);
        wait_sum += static_cast<double>(wait);
        const double run = static_cast<double>(job.run);
        bsld_sum += std::max(1.0, (static_cast<double>(wait) + run) / std::max(run, kTau));
        work += run * static_cast<double>(job.procs);
        first_submit = std::min(first_submit, job.submit);
        last_end = std::max(last_end, job.start + job.run);
        m.max_wait_s = std::max(m.max_wait_s, wait);
    }
    const double n = static_cast<double>(result.jobs.size());
    m.mean_wait_s = wait_sum / n;
    m.mean_bsld = bsld_sum / n;
    m.mean_response_s = (wait_sum +
                         [&] {
                             double runs = 0;
                             for (const JobOutcome& job : result.jobs) {
                                 runs += static_cast<double>(job.run);
                             }
                             return runs;
                         }())
                        / n;
    std::nth_element(waits.begin(), waits.begin() + waits.size() / 2, waits.end());
    m.median_wait_s = static_cast<double>(waits[waits.size() / 2]);
    m.makespan_s = last_end - first_submit;
    m.utilization = work / (static_cast<double>(procs) * static_cast<double>(m.makespan_s));
    for (double ms : result.pass_ms) {
        m.mean_pass_ms += ms;
        m.max_pass_ms = std::max(m.max_pass_ms, ms);
    }
    if (!result.pass_ms.empty()) {
        m.mean_pass_ms /= static_cast<double>(result.pass_ms.size());
    }
    return m;
}

}  // namespace cohort::sim
