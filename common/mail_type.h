// --mail-type, as sbatch takes it: which of a job's events mail its user.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort {

enum MailEvent : uint32_t {
    kMailBegin = 1u << 0,
    kMailEnd = 1u << 1,
    kMailFail = 1u << 2,
    kMailRequeue = 1u << 3,
    kMailInvalidDepend = 1u << 4,
    kMailStageOut = 1u << 5,
    kMailTimeLimit = 1u << 6,
    kMailTimeLimit90 = 1u << 7,
    kMailTimeLimit80 = 1u << 8,
    kMailTimeLimit50 = 1u << 9,
    kMailArrayTasks = 1u << 10,
};

// The events whose mail this cluster gives when they happen. STAGE_OUT is among them because
// it never happens here (no burst buffers), so `--mail-type=ALL`, which names it, warns of
// nothing; the others are accepted and stored for compatibility.
inline constexpr uint32_t kMailSent =
        kMailBegin | kMailEnd | kMailFail | kMailRequeue | kMailInvalidDepend | kMailStageOut;

// Each value is a comma-separated list (BEGIN, END, FAIL, REQUEUE, ALL, INVALID_DEPEND,
// STAGE_OUT, TIME_LIMIT, TIME_LIMIT_90, TIME_LIMIT_80, TIME_LIMIT_50, ARRAY_TASKS, NONE, any
// case); repeated options are OR-ed, and NONE clears what came before it. Errors name the value.
Result<uint32_t> parse_mail_type(const std::vector<std::string>& values);

// As `scontrol show job` prints it: "BEGIN,END", or "NONE".
std::string mail_type_name(uint32_t events);

}  // namespace cohort
