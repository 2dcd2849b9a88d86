// Signal names and --signal=[{R|B}:]SIG[@TIME], as sbatch takes them: which signal a job gets
// before its time limit, how long before, and which of its processes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cohort {

// "USR1", "SIGUSR1" or "10"; errors name `option`.
Result<int> parse_signal_name(std::string_view option, std::string_view text);

struct WarningSignal {
    int signal = 0;                   // 0: none
    int64_t seconds_before = 60;      // before the time limit; Slurm's default
    bool batch_shell_only = false;    // B: the batch shell, not the job's steps
    bool at_preemption_only = false;  // R: only when preempted or requeued, not at the limit
};

// "" gives no signal. Errors name `option`, the value and what is accepted.
Result<WarningSignal> parse_warning_signal(std::string_view option, std::string_view text);

}  // namespace cohort
