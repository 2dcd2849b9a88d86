// The scheduling pass: pending jobs in priority order over per-node availability profiles.
// A job starts where it fits now without delaying any reservation; waiting jobs get
// reservations (one for EASY, K or all for conservative) at their earliest start.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>

#include "scheduler/backfill/backfill_pass.h"
#include "scheduler/backfill/node_timelines.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// How much of the pass one step may do; the next step resumes where it stopped.
struct PassBudget {
    size_t max_jobs = std::numeric_limits<size_t>::max();  // jobs tested in this step
    std::function<bool()> out_of_time;  // asked after each job; the caller owns the clock
};

// One scheduling pass, resumable: running jobs hold their nodes until their expected end,
// nodes that are not up take nothing, reservation windows keep other jobs off their nodes.
// The pass owns its snapshot, so the caller may change its own tables between steps; what
// a step decides holds for the snapshot the pass was built from.
//
// With `committed`, the running jobs' holds come from it (kept by the caller between passes,
// which must outlive the pass and not change during it) and snapshot.running is not read;
// without, the pass builds them from snapshot.running.
class PlanPass {
public:
    PlanPass(Snapshot snapshot,
             const BackfillOptions& options,
             const NodeTimelines* committed = nullptr);
    ~PlanPass();
    PlanPass(PlanPass&&) noexcept;
    PlanPass& operator=(PlanPass&&) noexcept;

    // Decides for the next pending jobs in priority order, as many as the budget allows.
    Decisions step(const PassBudget& budget);

    bool done() const;
    size_t jobs_tested() const;
    const Snapshot& snapshot() const;
    // Hands the snapshot back, so that a caller planning over the same nodes again need not
    // copy them; the pass is spent.
    Snapshot release_snapshot() &&;

private:
    class Planner;
    std::unique_ptr<Planner> planner_;
};

// The whole pass in one step. kNone keeps strict priority order.
Decisions plan(const Snapshot& snapshot, const BackfillOptions& options);

}  // namespace cohort::sched
