// The scheduling pass: pending jobs in priority order, each started on the first nodes
// with room. Backfill and fair-share replace it behind the same plan() signature.
#pragma once

#include "scheduler/snapshot.h"

namespace cohort::sched {

// Priority of a pending job: older first (age capped), shifted by --nice; higher runs first.
int64_t job_priority(const PendingJob& job, int64_t now);

// REQUIRES: snapshot.nodes usage reflects every running job. Does not modify the snapshot.
Decisions plan(const Snapshot& snapshot);

}  // namespace cohort::sched
