// Parsing --begin.
#include "common/begin_time.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <optional>
#include <string>

namespace cohort {
namespace {

Status bad(std::string_view text) {
    return Status::invalid("invalid begin time '" + std::string(text)
            + "' (accepted: HH:MM[:SS][AM|PM], MMDD[YY], MM/DD[/YY], YYYY-MM-DD[THH:MM[:SS]], "
              "now[+N[seconds|minutes|hours|days|weeks]], midnight, noon, teatime, today, "
              "tomorrow)");
}

std::optional<int> number(std::string_view digits) {
    int value = 0;
    if (digits.empty()) {
        return std::nullopt;
    }
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
        return std::nullopt;
    }
    return value;
}

struct Hms {
    int hour = 0;
    int minute = 0;
    int second = 0;
};

// "HH:MM" or "HH:MM:SS", each field in range.
std::optional<Hms> parse_hms(std::string_view text) {
    size_t first = text.find(':');
    if (first == std::string_view::npos) {
        return std::nullopt;
    }
    size_t second = text.find(':', first + 1);
    auto hour = number(text.substr(0, first));
    auto minute =
            number(text.substr(first + 1, second == std::string_view::npos ? std::string_view::npos
                                                                           : second - first - 1));
    int sec = 0;
    if (second != std::string_view::npos) {
        auto parsed = number(text.substr(second + 1));
        if (!parsed) {
            return std::nullopt;
        }
        sec = *parsed;
    }
    if (!hour || !minute || *hour > 23 || *minute > 59 || sec > 59) {
        return std::nullopt;
    }
    return Hms{*hour, *minute, sec};
}

std::tm local(int64_t t) {
    std::time_t time = t;
    std::tm tm{};
    localtime_r(&time, &tm);
    return tm;
}

int64_t to_unix(std::tm tm) {
    tm.tm_isdst = -1;
    return static_cast<int64_t>(std::mktime(&tm));
}

// Today at hh:mm:ss, or tomorrow when that is already past.
int64_t next_clock_time(int64_t now, int hour, int minute, int second) {
    std::tm tm = local(now);
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    int64_t t = to_unix(tm);
    if (t <= now) {
        tm.tm_mday += 1;
        t = to_unix(tm);
    }
    return t;
}

Result<int64_t> relative(std::string_view text, std::string_view rest, int64_t now) {
    if (rest.empty()) {
        return now;
    }
    if (rest.front() != '+') {
        return bad(text);
    }
    rest.remove_prefix(1);
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0) {
        ++digits;
    }
    auto count = number(rest.substr(0, digits));
    if (!count) {
        return bad(text);
    }
    std::string unit(rest.substr(digits));
    int64_t scale = 0;
    for (const auto& [name, seconds] : {std::pair<const char*, int64_t>{"", 1},
                                        {"second", 1},
                                        {"minute", 60},
                                        {"hour", 3600},
                                        {"day", 86400},
                                        {"week", 7 * 86400}}) {
        if (unit == name || unit == std::string(name) + "s") {
            scale = seconds;
        }
    }
    if (scale == 0) {
        return bad(text);
    }
    return now + static_cast<int64_t>(*count) * scale;
}

Result<int64_t> clock_time(std::string_view text, int64_t now) {
    std::string body(text);
    int offset = 0;
    if (body.size() > 2) {
        std::string suffix = body.substr(body.size() - 2);
        std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        if (suffix == "AM" || suffix == "PM") {
            offset = suffix == "PM" ? 12 : 0;
            body.resize(body.size() - 2);
        }
    }
    auto hms = parse_hms(body);
    if (!hms) {
        return bad(text);
    }
    int h = hms->hour;
    if (offset != 0 || body.size() != text.size()) {
        if (h < 1 || h > 12) {
            return bad(text);
        }
        h = h % 12 + offset;
    }
    return next_clock_time(now, h, hms->minute, hms->second);
}

Result<int64_t> calendar_date(
        std::string_view text, int year, int month, int day, int hour, int minute, int second) {
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
        return bad(text);
    }
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    return to_unix(tm);
}

}  // namespace

Result<int64_t> parse_begin_time(std::string_view text, int64_t now) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.rfind("now", 0) == 0) {
        return relative(text, std::string_view(lower).substr(3), now);
    }
    if (lower == "today") {
        return now;
    }
    if (lower == "midnight" || lower == "tomorrow") {
        return next_clock_time(now, 0, 0, 0);
    }
    if (lower == "noon") {
        return next_clock_time(now, 12, 0, 0);
    }
    if (lower == "teatime") {
        return next_clock_time(now, 16, 0, 0);
    }
    if (lower.find(':') != std::string::npos && lower.find('-') == std::string::npos) {
        return clock_time(text, now);
    }
    const int this_year = local(now).tm_year + 1900;
    // YYYY-MM-DD[THH:MM[:SS]]
    if (lower.size() >= 10 && lower[4] == '-' && lower[7] == '-') {
        auto year = number(lower.substr(0, 4));
        auto month = number(lower.substr(5, 2));
        auto day = number(lower.substr(8, 2));
        Hms hms;
        if (lower.size() > 10) {
            auto time =
                    lower[10] == 't' ? parse_hms(std::string_view(lower).substr(11)) : std::nullopt;
            if (!time) {
                return bad(text);
            }
            hms = *time;
        }
        if (!year || !month || !day) {
            return bad(text);
        }
        return calendar_date(text, *year, *month, *day, hms.hour, hms.minute, hms.second);
    }
    // MM/DD[/YY], MM.DD[.YY], MMDD[YY]
    std::string digits;
    for (char c : lower) {
        if (c != '/' && c != '.') {
            digits += c;
        }
    }
    const bool separated = digits.size() != lower.size();
    if ((digits.size() == 4 || digits.size() == 6) && number(digits)) {
        if (separated && lower.size() != digits.size() + (digits.size() == 4 ? 1 : 2)) {
            return bad(text);
        }
        int month = *number(digits.substr(0, 2));
        int day = *number(digits.substr(2, 2));
        int year = digits.size() == 6 ? 2000 + *number(digits.substr(4, 2)) : this_year;
        return calendar_date(text, year, month, day, 0, 0, 0);
    }
    return bad(text);
}

Result<int64_t> parse_report_time(std::string_view text, int64_t now) {
    // sacct and sreport also look back: now-7days.
    if (text.size() > 4 && (text.substr(0, 4) == "now-" || text.substr(0, 4) == "NOW-")) {
        auto ahead = parse_begin_time("now+" + std::string(text.substr(4)), now);
        if (!ahead) {
            return bad(text);
        }
        return now - (*ahead - now);
    }
    auto time = parse_begin_time(text, now);
    if (!time || *time <= now) {
        return time;
    }
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool time_of_day =
            lower == "midnight" || lower == "noon" || lower == "teatime"
            || (lower.find(':') != std::string::npos && lower.find('-') == std::string::npos);
    std::tm tm = local(*time);
    if (!time_of_day || tm.tm_yday == local(now).tm_yday) {
        return time;
    }
    tm.tm_mday -= 1;  // moved to tomorrow by --begin's rule: take today's
    return to_unix(tm);
}

}  // namespace cohort
