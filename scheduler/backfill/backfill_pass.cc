// One backfill pass.
#include "scheduler/backfill/backfill_pass.h"

namespace cohort::sched {

BackfillPlan backfill_pass(AvailabilityProfile& profile,
                           const std::vector<QueuedJob>& queue,
                           int64_t now,
                           const BackfillOptions& options) {
    const size_t max_reservations = options.policy == BackfillPolicy::kEasy ? 1
                                    : options.policy == BackfillPolicy::kConservative
                                            ? options.reservations
                                            : 0;
    BackfillPlan plan;
    for (size_t i = 0; i < queue.size(); ++i) {
        const QueuedJob& job = queue[i];
        // Reservations are made before later jobs are tried, so a later job can never push
        // an earlier job's planned start back.
        if (profile.fits(now, job.estimate, job.amount)) {
            profile.reserve(now, job.estimate, job.amount);
            plan.start_now.push_back(i);
            continue;
        }
        if (options.policy == BackfillPolicy::kNone) {
            break;
        }
        if (plan.reserved.size() < max_reservations) {
            int64_t start = profile.earliest_start(now, job.estimate, job.amount);
            if (start != INT64_MAX) {
                profile.reserve(start, job.estimate, job.amount);
                plan.reserved.push_back({i, start});
            }
        }
    }
    for (const PlannedStart& planned : plan.reserved) {
        const QueuedJob& job = queue[planned.position];
        profile.release(planned.start, job.estimate, job.amount);
    }
    return plan;
}

}  // namespace cohort::sched
