// Rules about one job that the controller, `cohort sim` and the golden scenarios share:
// whether a pending job may be offered to a pass now, when a running job is expected to
// free its nodes, and how many CPUs a job asks for. Pure: the caller says what time it is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "scheduler/dependency.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// CPUs a job asks for, for the job size factor and for fair-share usage.
int64_t requested_cpus(const ResourceRequest& request);

// When planning assumes a running job frees its nodes: start + estimate, never the past.
// A job that outlives its estimate is planned with `fallback_s` (EASY++: the requested time
// after a prediction overran), and one that outlives that too as ending in a second (it is
// being ended). A negative estimate means no limit.
int64_t expected_end(int64_t start, int64_t estimate_s, int64_t now, int64_t fallback_s);

inline int64_t expected_end(int64_t start, int64_t time_limit_s, int64_t now) {
    return expected_end(start, time_limit_s, now, time_limit_s);
}

// How many more tasks each throttled array (--array=...%N) may start in one pass: its
// throttle less its running tasks, and less each task offered to the pass.
class ArrayThrottle {
public:
    // Counts one task of `array_id` with throttle `max_running` (0: none).
    void count(uint64_t array_id, uint32_t max_running, bool running);
    // Takes room for one more task; false when the array is at its throttle.
    bool take(uint64_t array_id);

private:
    std::map<uint64_t, int64_t> room_;
};

// What decides whether a pending job is offered to the scheduling pass.
struct EligibilityFacts {
    int64_t begin_time = 0;                      // --begin
    std::optional<DependencyStatus> dependency;  // nullopt: it has none
    bool kill_on_invalid_dep = true;
    bool wants_reservation = false;  // --reservation
    bool reservation_exists = false;
    uint64_t array_id = 0;  // 0: not an array task
};

struct Eligibility {
    enum class Verdict {
        kOffer,
        kWait,
        kCancel
    };
    Verdict verdict = Verdict::kOffer;
    std::string_view reason;  // Slurm's pending reason when it is not offered
};

// The checks in Slurm's order: begin time, dependency, reservation, array throttle. An
// offered array task takes room from `throttle`.
Eligibility check_eligibility(const EligibilityFacts& job, int64_t now, ArrayThrottle& throttle);

}  // namespace cohort::sched
