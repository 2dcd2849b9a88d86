// The node-level backfill planner.
#include "scheduler/plan.h"

#include <algorithm>
#include <set>

#include "scheduler/backfill/profile.h"
#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

constexpr int64_t kBasePriority = 1'000'000;
constexpr int64_t kMaxAgeMinutes = 7 * 24 * 60;

// What every node has free over time: CPUs and memory.
struct NodeTimeline {
    AvailabilityProfile cpus;
    AvailabilityProfile memory;
};

class Planner {
public:
    Planner(const Snapshot& snapshot, const BackfillOptions& options)
        : snapshot_(snapshot), options_(options) {
        timelines_.reserve(snapshot.nodes.size());
        for (const NodeCapacity& node : snapshot.nodes) {
            timelines_.push_back({AvailabilityProfile(node.cpus, snapshot.now),
                    AvailabilityProfile(node.memory_mib, snapshot.now)});
        }
        for (const RunningAllocation& running : snapshot.running) {
            const int64_t duration = std::max<int64_t>(running.expected_end - snapshot.now, 1);
            for (size_t i = 0; i < running.nodes.size(); ++i) {
                NodeTimeline& timeline = timelines_[static_cast<size_t>(running.nodes[i])];
                timeline.cpus.reserve(snapshot.now, duration, running.cpus_per_node[i]);
                timeline.memory.reserve(snapshot.now, duration, running.memory_mib_per_node);
            }
        }
    }

    Decisions run(const std::vector<const PendingJob*>& order) {
        const size_t max_reservations = options_.policy == BackfillPolicy::kEasy ? 1
                : options_.policy == BackfillPolicy::kConservative       ? options_.reservations
                                                                         : 0;
        Decisions decisions;
        bool blocked = false;  // a higher-priority job waits
        for (const PendingJob* job : order) {
            const int64_t duration = job->time_limit_s < 0
                    ? kForever
                    : std::clamp<int64_t>(job->time_limit_s, 1, kForever);
            if (!(blocked && options_.policy == BackfillPolicy::kNone)) {
                if (auto placement = place_at(*job, snapshot_.now, duration)) {
                    hold(*placement, snapshot_.now, duration);
                    decisions.starts.push_back({job->id, std::move(*placement)});
                    continue;
                }
            }
            decisions.waits.push_back(
                    {job->id, blocked ? WaitReason::kPriority : WaitReason::kResources});
            blocked = true;
            if (decisions.reservations.size() < max_reservations) {
                reserve_earliest(*job, duration, decisions);
            }
        }
        return decisions;
    }

private:
    std::optional<Placement> place_at(const PendingJob& job, int64_t start, int64_t duration) {
        return place_tasks(job.request, job.eligible_nodes, [&](int index) -> uint32_t {
            if (!snapshot_.nodes[static_cast<size_t>(index)].up) {
                return 0;
            }
            const NodeTimeline& timeline = timelines_[static_cast<size_t>(index)];
            return tasks_that_fit(job.request, timeline.cpus.min_free(start, duration),
                    timeline.memory.min_free(start, duration));
        });
    }

    void hold(const Placement& placement, int64_t start, int64_t duration) {
        for (size_t i = 0; i < placement.nodes.size(); ++i) {
            NodeTimeline& timeline = timelines_[static_cast<size_t>(placement.nodes[i])];
            timeline.cpus.reserve(start, duration, placement.cpus_per_node[i]);
            timeline.memory.reserve(start, duration, placement.memory_mib_per_node);
        }
    }

    // Tries the times at which anything frees up on the job's nodes, earliest first.
    void reserve_earliest(const PendingJob& job, int64_t duration, Decisions& decisions) {
        std::set<int64_t> candidates;
        for (int index : job.eligible_nodes) {
            const NodeTimeline& timeline = timelines_[static_cast<size_t>(index)];
            for (int64_t t : timeline.cpus.changes_after(snapshot_.now)) {
                candidates.insert(t);
            }
            for (int64_t t : timeline.memory.changes_after(snapshot_.now)) {
                candidates.insert(t);
            }
        }
        for (int64_t t : candidates) {
            if (auto placement = place_at(job, t, duration)) {
                hold(*placement, t, duration);
                decisions.reservations.push_back({job.id, t});
                return;
            }
        }
    }

    const Snapshot& snapshot_;
    BackfillOptions options_;
    std::vector<NodeTimeline> timelines_;
};

}  // namespace

const char* wait_reason_name(WaitReason reason) {
    switch (reason) {
        case WaitReason::kPriority: return "Priority";
        case WaitReason::kResources: return "Resources";
    }
    return "None";
}

int64_t job_priority(const PendingJob& job, int64_t now) {
    int64_t age_minutes = std::clamp<int64_t>((now - job.submit_time) / 60, 0, kMaxAgeMinutes);
    return kBasePriority + age_minutes - job.nice;
}

Decisions plan(const Snapshot& snapshot, const BackfillOptions& options) {
    std::vector<const PendingJob*> order;
    order.reserve(snapshot.pending.size());
    for (const auto& job : snapshot.pending) {
        order.push_back(&job);
    }
    std::stable_sort(order.begin(), order.end(), [&](const PendingJob* a, const PendingJob* b) {
        int64_t pa = job_priority(*a, snapshot.now);
        int64_t pb = job_priority(*b, snapshot.now);
        return pa != pb ? pa > pb : a->id < b->id;
    });
    return Planner(snapshot, options).run(order);
}

}  // namespace cohort::sched
