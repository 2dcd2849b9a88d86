// Names of the backfill policies.
#include "common/backfill_policy.h"

#include <array>

#include <fmt/format.h>

namespace cohort {
namespace {

constexpr std::array<std::string_view, 3> kNames = {"none", "easy", "conservative"};

}  // namespace

Result<BackfillPolicy> parse_backfill_policy(std::string_view text, std::string_view field) {
    for (size_t i = 0; i < kNames.size(); ++i) {
        if (text == kNames[i]) {
            return static_cast<BackfillPolicy>(i);
        }
    }
    return Status::invalid(
            fmt::format("{}: invalid value '{}' (accepted: none, easy, "
                        "conservative)",
                        field, text));
}

std::string_view backfill_policy_name(BackfillPolicy policy) {
    return kNames.at(static_cast<size_t>(policy));
}

}  // namespace cohort
