// The EASY pass.
#include "scheduler/backfill/easy.h"

namespace cohort::sched {

std::vector<size_t> easy_pass(AvailabilityProfile& profile, const std::vector<QueuedJob>& queue,
        int64_t now, BackfillPolicy policy) {
    std::vector<size_t> started;
    size_t head = 0;
    while (head < queue.size() && profile.free_at(now) >= queue[head].amount) {
        profile.reserve(now, queue[head].estimate, queue[head].amount);
        started.push_back(head++);
    }
    if (policy == BackfillPolicy::kNone || queue.size() - head <= 1) {
        return started;
    }
    // Reserve for the head first, so no backfilled job can push its start back.
    const QueuedJob& first = queue[head];
    const int64_t shadow = profile.earliest_start(now, first.estimate, first.amount);
    profile.reserve(shadow, first.estimate, first.amount);
    for (size_t i = head + 1; i < queue.size(); ++i) {
        if (profile.fits(now, queue[i].estimate, queue[i].amount)) {
            profile.reserve(now, queue[i].estimate, queue[i].amount);
            started.push_back(i);
        }
    }
    profile.release(shadow, first.estimate, first.amount);
    return started;
}

}  // namespace cohort::sched
