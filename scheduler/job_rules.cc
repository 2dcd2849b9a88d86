// Eligibility, expected end and requested CPUs of one job.
#include "scheduler/job_rules.h"

#include <algorithm>

namespace cohort::sched {

int64_t requested_cpus(const ResourceRequest& request) {
    const int64_t nodes = std::max<int64_t>(request.nodes_min, 1);
    const int64_t tasks = request.ntasks != 0            ? request.ntasks
                          : request.ntasks_per_node != 0 ? int64_t{request.ntasks_per_node} * nodes
                                                         : nodes;
    return tasks * std::max<int64_t>(request.cpus_per_task, 1);
}

int64_t expected_end(int64_t start, int64_t estimate_s, int64_t now, int64_t fallback_s) {
    if (estimate_s < 0) {
        return now + kForever;
    }
    int64_t end = start + std::min(estimate_s, kForever);
    if (end > now) {
        return end;
    }
    if (fallback_s >= 0) {
        end = start + std::min(fallback_s, kForever);
    }
    return std::max(end, now + 1);
}

void ArrayThrottle::count(uint64_t array_id, uint32_t max_running, bool running) {
    if (max_running == 0) {
        return;
    }
    auto [it, fresh] = room_.emplace(array_id, max_running);
    if (running) {
        it->second--;
    }
}

bool ArrayThrottle::take(uint64_t array_id) {
    auto room = room_.find(array_id);
    if (room == room_.end()) {
        return true;
    }
    if (room->second <= 0) {
        return false;
    }
    room->second--;
    return true;
}

Eligibility check_eligibility(const EligibilityFacts& job, int64_t now, ArrayThrottle& throttle) {
    using Verdict = Eligibility::Verdict;
    if (job.begin_time > now) {
        return {Verdict::kWait, "BeginTime"};
    }
    if (job.dependency == DependencyStatus::kWaiting) {
        return {Verdict::kWait, "Dependency"};
    }
    if (job.dependency == DependencyStatus::kNeverSatisfied) {
        return {job.kill_on_invalid_dep ? Verdict::kCancel : Verdict::kWait,
                "DependencyNeverSatisfied"};
    }
    if (job.wants_reservation && !job.reservation_exists) {
        return {Verdict::kWait, "ReservationDeleted"};  // it ended or was deleted first
    }
    if (job.array_id != 0 && !throttle.take(job.array_id)) {
        return {Verdict::kWait, "JobArrayTaskLimit"};
    }
    return {Verdict::kOffer, {}};
}

}  // namespace cohort::sched
