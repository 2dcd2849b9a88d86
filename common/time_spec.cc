// Slurm-style time limits: parsing `--time` values into seconds and formatting durations back.
#include "common/time_spec.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace cohort {
namespace {

Status invalid_time(std::string_view text) {
    return Status::invalid("invalid time '" + std::string(text) +
                           "' (accepted: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, INFINITE or "
                           "UNLIMITED)");
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
        if (c != b[i]) {
            return false;
        }
    }
    return true;
}

// A non-empty run of decimal digits that fits in int64; anything else (sign, blank) fails.
bool parse_field(std::string_view field, int64_t& out) {
    if (field.empty()) {
        return false;
    }
    int64_t value = 0;
    for (char c : field) {
        if (c < '0' || c > '9') {
            return false;
        }
        if (__builtin_mul_overflow(value, 10, &value)
            || __builtin_add_overflow(value, c - '0', &value)) {
            return false;
        }
    }
    out = value;
    return true;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        size_t pos = text.find(sep, start);
        parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
        if (pos == std::string_view::npos) {
            return parts;
        }
        start = pos + 1;
    }
}

}  // namespace

Result<int64_t> parse_time_limit(std::string_view text) {
    if (iequals(text, "INFINITE") || iequals(text, "UNLIMITED") || text == "-1") {
        return kUnlimitedSeconds;
    }
    int64_t days = 0;
    std::string_view clock = text;
    bool has_days = false;
    if (size_t dash = text.find('-'); dash != std::string_view::npos) {
        if (!parse_field(text.substr(0, dash), days)) {
            return invalid_time(text);
        }
        clock = text.substr(dash + 1);
        has_days = true;
    }
    std::vector<std::string_view> parts = split(clock, ':');
    if (parts.size() > 3) {
        return invalid_time(text);
    }
    std::array<int64_t, 3> fields{};
    for (size_t i = 0; i < parts.size(); ++i) {
        if (!parse_field(parts[i], fields[i])) {
            return invalid_time(text);
        }
    }
    // Without days the fields are M, M:S or H:M:S; with days they are H, H:M or H:M:S.
    int64_t hours = 0;
    int64_t minutes = 0;
    int64_t seconds = 0;
    if (has_days || parts.size() == 3) {
        hours = fields[0];
        minutes = parts.size() > 1 ? fields[1] : 0;
        seconds = parts.size() > 2 ? fields[2] : 0;
    } else {
        minutes = fields[0];
        seconds = parts.size() > 1 ? fields[1] : 0;
    }
    int64_t total = 0;
    const std::array<std::pair<int64_t, int64_t>, 4> terms{
            {{days, 86400}, {hours, 3600}, {minutes, 60}, {seconds, 1}}};
    for (const auto& [count, unit] : terms) {
        int64_t part = 0;
        if (__builtin_mul_overflow(count, unit, &part)
            || __builtin_add_overflow(total, part, &total)) {
            return invalid_time(text);
        }
    }
    return total;
}

std::string format_duration(int64_t seconds) {
    if (seconds == kUnlimitedSeconds) {
        return "UNLIMITED";
    }
    if (seconds < 0) {
        return "INVALID";
    }
    const int64_t days = seconds / 86400;
    const int64_t hours = seconds / 3600 % 24;
    const int64_t minutes = seconds / 60 % 60;
    const int64_t secs = seconds % 60;
    char buf[64];
    if (days > 0) {
        std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                      static_cast<long long>(hours), static_cast<long long>(minutes),
                      static_cast<long long>(secs));
    } else if (hours > 0) {
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(hours),
                      static_cast<long long>(minutes), static_cast<long long>(secs));
    } else {
        std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(minutes),
                      static_cast<long long>(secs));
    }
    return buf;
}

std::string format_clock(int64_t seconds) {
    if (seconds == kUnlimitedSeconds) {
        return "UNLIMITED";
    }
    seconds = std::max<int64_t>(seconds, 0);
    const int64_t days = seconds / 86400;
    const std::string clock =
            fmt::format("{:02}:{:02}:{:02}", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    return days > 0 ? fmt::format("{}-{}", days, clock) : clock;
}

}  // namespace cohort
