// Job ids as users type them, in the forms squeue prints.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace cohort::cli {

// "123", or "123+1" for a heterogeneous job's component: components have consecutive ids
// from their leader's, so "123+1" is job 124. nullopt when the text is neither.
inline std::optional<uint64_t> parse_job_id(const std::string& text) {
    const auto number = [](const std::string& digits) -> std::optional<uint64_t> {
        if (digits.empty() || digits.size() > 19
            || !std::isdigit(static_cast<unsigned char>(digits.front()))) {
            return std::nullopt;
        }
        char* end = nullptr;
        const uint64_t value = std::strtoull(digits.c_str(), &end, 10);
        return *end == '\0' ? std::optional<uint64_t>(value) : std::nullopt;
    };
    const size_t plus = text.find('+');
    const auto leader = number(text.substr(0, plus));
    if (!leader || *leader == 0) {
        return std::nullopt;
    }
    if (plus == std::string::npos) {
        return leader;
    }
    const auto offset = number(text.substr(plus + 1));
    return offset && *offset < 1000000 ? std::optional<uint64_t>(*leader + *offset) : std::nullopt;
}

}  // namespace cohort::cli
