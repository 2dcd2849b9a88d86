// Job states and pending reasons, with the names Slurm users and tools expect.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort {

enum class JobState : uint8_t {
    kPending,
    kRunning,
    kCompleting,
    kCompleted,
    kFailed,
    kCancelled,
    kTimeout,
    kNodeFail,
    // An attempt that ended for the job to run again (requeue by hand, by exit code, or
    // after a node failure with the job's earlier attempt recorded as NODE_FAIL). Only attempt
    // records carry it: the job itself goes back to PENDING.
    kRequeued,
    // Ended to make room for a job of a QoS that may preempt it: an attempt record when the
    // job was requeued (preempt_mode requeue), the job's final state when it was cancelled.
    kPreempted,
    // The kernel killed a process of the job for exceeding the job's memory.
    kOutOfMemory,
};

// "PENDING", "RUNNING", ... as squeue -o %T prints them.
std::string_view job_state_name(JobState state);

// "PD", "R", "CG", ... as squeue -o %t prints them.
std::string_view job_state_code(JobState state);

// Accepts long names and compact codes, case-insensitive.
Result<JobState> parse_job_state(std::string_view text);

// A comma-separated list of states, as squeue -t and scancel -t take; "" gives none.
// Errors name `option`.
Result<std::vector<JobState>> parse_job_states(std::string_view option, std::string_view list);

bool is_final(JobState state);

}  // namespace cohort
