// Slurm-style time limits: parsing `--time` values into seconds and formatting durations back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cohort {

// A time limit with no bound (`INFINITE`, `UNLIMITED` or `-1`).
inline constexpr int64_t kUnlimitedSeconds = -1;

// Parses `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S` or `INFINITE`/`UNLIMITED`/`-1`
// (case-insensitive) into seconds; the unbounded forms give kUnlimitedSeconds. Unlike Slurm the
// seconds are kept, not rounded up to minutes. As in Slurm, fields after the first are not
// range-checked (`0:90` is 90 minutes), so scripts that Slurm accepts keep working.
// "0" gives 0: sbatch reads `--time=0` as "no limit", and that mapping is the caller's choice.
// On failure the message names the value but not the field; callers add it with with_context().
Result<int64_t> parse_time_limit(std::string_view text);

// Formats like Slurm's displays: `M:SS`, `H:MM:SS` or `D-HH:MM:SS`, and `UNLIMITED` for
// kUnlimitedSeconds. Other negative values give `INVALID`.
std::string format_duration(int64_t seconds);

// The fixed form scontrol and sacct print: `HH:MM:SS` or `D-HH:MM:SS` (`00:05:00`), and
// `UNLIMITED` for kUnlimitedSeconds.
std::string format_clock(int64_t seconds);

}  // namespace cohort
