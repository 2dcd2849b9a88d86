// First-fit by priority.
#include "scheduler/first_fit.h"

#include <algorithm>

#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

constexpr int64_t kBasePriority = 1'000'000;
constexpr int64_t kMaxAgeMinutes = 7 * 24 * 60;

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

Decisions plan(const Snapshot& snapshot) {
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

    Decisions decisions;
    std::vector<NodeCapacity> nodes = snapshot.nodes;
    bool blocked = false;  // a higher-priority job is waiting for resources
    for (const PendingJob* job : order) {
        auto placement = fit_now(job->request, nodes, job->eligible_nodes);
        if (!placement) {
            decisions.waits.push_back({job->id, blocked ? WaitReason::kPriority
                                                        : WaitReason::kResources});
            blocked = true;
            continue;
        }
        for (size_t i = 0; i < placement->nodes.size(); ++i) {
            NodeCapacity& node = nodes[placement->nodes[i]];
            node.cpus_used += placement->cpus_per_node[i];
            node.memory_used_mib += placement->memory_mib_per_node;
        }
        decisions.starts.push_back({job->id, std::move(*placement)});
    }
    return decisions;
}

}  // namespace cohort::sched
