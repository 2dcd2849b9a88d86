// Job array specifications (--array): "0-15", "0,6,16-32", "0-15:4", "1,3,5-9:2%4".
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort::sched {

inline constexpr uint32_t kMaxArraySize = 1001;  // indexes 0..1000, as Slurm's MaxArraySize

struct ArraySpec {
    std::vector<uint32_t> indexes;  // ascending, unique
    uint32_t max_running = 0;       // the %N throttle; 0: unlimited
    uint32_t step = 1;              // the number after the first ':', for SLURM_ARRAY_TASK_STEP
};

// Errors name the spec and what is accepted.
Result<ArraySpec> parse_array_spec(std::string_view text, uint32_t max_size = kMaxArraySize);

}  // namespace cohort::sched
