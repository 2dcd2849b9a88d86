// The scheduling pass: pending jobs in priority order over per-node availability profiles.
// A job starts where it fits now without delaying any reservation; waiting jobs get
// reservations (one for EASY, K or all for conservative) at their earliest start.
#pragma once

#include "scheduler/backfill/backfill_pass.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// Priority of a pending job: older first (age capped), shifted by --nice; higher runs first.
int64_t job_priority(const PendingJob& job, int64_t now);

// Running jobs hold their nodes until their expected end; nodes that are not up take
// nothing. Does not modify the snapshot. kNone keeps strict priority order.
Decisions plan(const Snapshot& snapshot, const BackfillOptions& options);

}  // namespace cohort::sched
