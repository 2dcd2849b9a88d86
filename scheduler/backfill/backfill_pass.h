// Backfilling over an availability profile: jobs are taken in queue order; one that fits now
// starts, one that does not gets a reservation at its earliest start while fewer than
// `reservations` jobs hold one, and later jobs start now only where they touch no
// reservation. One reservation is EASY (Lifka's, as in pyss); all of them is conservative.
// Pure: a profile and `now` in, starts and planned starts out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/backfill_policy.h"
#include "scheduler/backfill/profile.h"

namespace cohort::sched {

struct QueuedJob {
    uint64_t id = 0;
    int64_t amount = 0;    // processors (or nodes) it needs
    int64_t estimate = 0;  // seconds; its time limit
};

using cohort::BackfillPolicy;

// The order in which jobs that hold no reservation are tried once the reservations are
// taken: priority order, or shortest estimate first (SJBF, which packs more small jobs into
// the holes in front of the reservations).
enum class CandidateOrder {
    kPriority,
    kShortestFirst
};

struct BackfillOptions {
    BackfillPolicy policy = BackfillPolicy::kEasy;
    size_t reservations = std::numeric_limits<size_t>::max();  // kConservative's K
    CandidateOrder candidates = CandidateOrder::kPriority;
};

struct PlannedStart {
    size_t position = 0;  // in the queue
    int64_t start = 0;
};

struct BackfillPlan {
    std::vector<size_t> start_now;       // queue positions, in queue order
    std::vector<PlannedStart> reserved;  // the expected starts of waiting jobs
};

// The jobs in `start_now` are reserved in `profile` from `now` for their estimates; the
// planning reservations of waiting jobs are taken out again before returning.
BackfillPlan backfill_pass(AvailabilityProfile& profile,
                           const std::vector<QueuedJob>& queue,
                           int64_t now,
                           const BackfillOptions& options);

}  // namespace cohort::sched
