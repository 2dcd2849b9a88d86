// Parsing memory sizes (`--mem=16G`) and counts (`--ntasks=8`) given by users.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace cohort {

// Parses `N[K|M|G|T][B]` (case-insensitive, 1024-based) into MiB; no suffix means MiB, as in
// Slurm. K rounds up to a whole MiB so a request is never shrunk. 0 is allowed (`--mem=0` means
// all of a node's memory to the caller). A bare `B` is refused: `4000B` reads as bytes.
Result<int64_t> parse_memory_mib(std::string_view text);

// Parses a decimal integer >= min (a leading '-' only makes sense when min < 0). No blanks,
// '+' or suffixes.
Result<int64_t> parse_count(std::string_view text, int64_t min);

// parse_count(text, 1): task, node and CPU counts.
Result<int64_t> parse_positive_count(std::string_view text);

}  // namespace cohort
