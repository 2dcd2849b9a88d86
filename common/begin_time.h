// --begin values, as sbatch reads them, resolved against the local clock at `now`:
// HH:MM[:SS][AM|PM], MMDD[YY], MM/DD[/YY], MM.DD[.YY], YYYY-MM-DD[THH:MM[:SS]],
// now[+N[seconds|minutes|hours|days|weeks]], midnight, noon, teatime, today, tomorrow.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace cohort {

// Unix seconds of the moment meant; a clock time already past today means tomorrow.
Result<int64_t> parse_begin_time(std::string_view text, int64_t now);

// sacct's --starttime/--endtime: the same forms, but a time of day (and midnight, noon,
// teatime) always names today's, even when past.
Result<int64_t> parse_report_time(std::string_view text, int64_t now);

}  // namespace cohort
