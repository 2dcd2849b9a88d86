// Hostlist expressions (`node[001-004,7],gpu-[1-2]-[0-3]`): expanding them and compressing back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort {

// More hosts than any cluster has; stops `n[0-999999999]` from exhausting memory.
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
inline constexpr size_t kMaxHostlistHosts = 1'000'000;
#else
// Fuzzing explores forms, not sizes: at a million, eleven-byte inputs held the hostlist,
// config and directive targets to a few hundred runs a second.
inline constexpr size_t kMaxHostlistHosts = 4'096;
#endif

// Expands a hostlist into host names in written order, duplicates kept. Tokens are separated
// by commas outside brackets; `[...]` holds `N` or `N-M` items, zero-padded to the width written
// for N (`[001-004]` gives 3 digits). Several groups form a cartesian product, leftmost slowest,
// and text may follow the last `]` (`n[1-2].ib`). On failure (empty tokens, unbalanced or nested
// brackets, reversed ranges, blanks, more than kMaxHostlistHosts hosts) the message names the
// expression and the bad part.
Result<std::vector<std::string>> expand_hostlist(std::string_view expr);

// The inverse: merges runs of adjacent hosts that share a prefix and a compatible digit width
// into `prefix[1-4,7]`, keeping input order, so expand_hostlist() gives the same list back.
// A host alone, or one without trailing digits, stays as written (`node1`).
std::string compress_hostlist(const std::vector<std::string>& hosts);

// Slurm's compact per-node counts, as SLURM_TASKS_PER_NODE writes them: {2,2,2,1} -> "2(x3),1".
std::string compact_counts(const std::vector<uint32_t>& counts);

}  // namespace cohort
