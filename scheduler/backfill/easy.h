// EASY backfilling (Lifka's, as in the pyss simulator): start queue heads while they fit,
// then reserve the first waiting job at its earliest start and start any later job that
// fits now without touching that reservation. Pure: a profile and `now` in, starts out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scheduler/backfill/profile.h"

namespace cohort::sched {

struct QueuedJob {
    uint64_t id = 0;
    int64_t amount = 0;    // processors (or nodes) it needs
    int64_t estimate = 0;  // seconds; its time limit
};

enum class BackfillPolicy { kNone, kEasy };

// Indexes into `queue` (in queue order) of the jobs to start at `now`. Their estimates are
// reserved in `profile` from `now`; the head's planning reservation is not left behind.
std::vector<size_t> easy_pass(AvailabilityProfile& profile, const std::vector<QueuedJob>& queue,
        int64_t now, BackfillPolicy policy);

}  // namespace cohort::sched
