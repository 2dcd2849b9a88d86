// The backfill policies of the scheduling pass and their one parser, shared by the config,
// `cohort sim` and the golden scenarios.
#pragma once

#include <string_view>

#include "common/status.h"

namespace cohort {

enum class BackfillPolicy {
    kNone,          // strict queue order: stop at the first job that does not fit
    kEasy,          // a reservation for the first waiting job
    kConservative,  // reservations for the first `reservations` waiting jobs (all by default)
};

// "none", "easy" or "conservative"; the error names `field`, the value and what is accepted.
Result<BackfillPolicy> parse_backfill_policy(std::string_view text, std::string_view field);

std::string_view backfill_policy_name(BackfillPolicy policy);

}  // namespace cohort
