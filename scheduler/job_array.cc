// Parsing --array.
#include "scheduler/job_array.h"

#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

namespace cohort::sched {
namespace {

Status bad(std::string_view text, const std::string& why) {
    return Status::invalid(
            "--array: invalid specification '" + std::string(text) + "': " + why
            + " (accepted: N, N-M, N-M:STEP, lists of them separated by ',', and %MAX)");
}

bool parse_number(std::string_view digits, uint32_t& out) {
    if (digits.empty()) {
        return false;
    }
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

Result<ArraySpec> parse_array_spec(std::string_view text, uint32_t max_size) {
    ArraySpec spec;
    std::string_view ranges = text;
    if (size_t percent = text.find('%'); percent != std::string_view::npos) {
        if (!parse_number(text.substr(percent + 1), spec.max_running) || spec.max_running == 0) {
            return bad(text, "the throttle after '%' must be a whole number >= 1");
        }
        ranges = text.substr(0, percent);
    }
    if (ranges.empty()) {
        return bad(text, "no indexes");
    }
    bool first_range = true;
    for (size_t start = 0; start <= ranges.size();) {
        size_t comma = ranges.find(',', start);
        std::string_view item = ranges.substr(
                start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        uint32_t step = 1;
        if (size_t colon = item.find(':'); colon != std::string_view::npos) {
            if (!parse_number(item.substr(colon + 1), step) || step == 0) {
                return bad(text, "the step after ':' must be a whole number >= 1");
            }
            item = item.substr(0, colon);
        }
        uint32_t low = 0;
        uint32_t high = 0;
        if (size_t dash = item.find('-'); dash != std::string_view::npos) {
            if (!parse_number(item.substr(0, dash), low)
                || !parse_number(item.substr(dash + 1), high)) {
                return bad(text, "'" + std::string(item) + "' is not a range N-M");
            }
            if (high < low) {
                return bad(text, "range '" + std::string(item) + "' is reversed");
            }
        } else if (parse_number(item, low)) {
            high = low;
        } else {
            return bad(text, "'" + std::string(item) + "' is not an index");
        }
        if (high >= max_size) {
            return bad(text,
                       fmt::format("index {} is above the maximum of {}", high, max_size - 1));
        }
        if (first_range) {
            spec.step = step;
            first_range = false;
        }
        for (uint64_t i = low; i <= high; i += step) {
            spec.indexes.push_back(static_cast<uint32_t>(i));
        }
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    std::sort(spec.indexes.begin(), spec.indexes.end());
    spec.indexes.erase(std::unique(spec.indexes.begin(), spec.indexes.end()), spec.indexes.end());
    return spec;
}

}  // namespace cohort::sched
