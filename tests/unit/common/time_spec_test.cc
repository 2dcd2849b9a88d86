// Tests for parsing Slurm time limits and formatting durations.
#include "common/time_spec.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

int64_t parse_ok(std::string_view text) {
    Result<int64_t> result = parse_time_limit(text);
    EXPECT_TRUE(result.is_ok()) << text << ": " << result.status().message();
    return result.is_ok() ? *result : -2;
}

void expect_rejected(std::string_view text) {
    Result<int64_t> result = parse_time_limit(text);
    ASSERT_FALSE(result.is_ok()) << "'" << text << "' was accepted as " << *result;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(result.status().message(),
              "invalid time '" + std::string(text)
                      + "' (accepted: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, INFINITE or UNLIMITED)");
}

TEST(ParseTimeLimit, MinutesAlone) {
    EXPECT_EQ(parse_ok("10"), 600);
    EXPECT_EQ(parse_ok("0"), 0);
    EXPECT_EQ(parse_ok("90"), 5400);
    EXPECT_EQ(parse_ok("007"), 420);
}

TEST(ParseTimeLimit, MinutesSeconds) {
    EXPECT_EQ(parse_ok("15:00"), 900);
    EXPECT_EQ(parse_ok("0:30"), 30);
    EXPECT_EQ(parse_ok("1:05"), 65);
}

TEST(ParseTimeLimit, HoursMinutesSeconds) {
    EXPECT_EQ(parse_ok("00:30:00"), 1800);
    EXPECT_EQ(parse_ok("4:00:00"), 14400);
    EXPECT_EQ(parse_ok("48:00:00"), 172800);
    EXPECT_EQ(parse_ok("1:02:03"), 3723);
}

TEST(ParseTimeLimit, DaysForms) {
    EXPECT_EQ(parse_ok("1-12"), 129600);
    EXPECT_EQ(parse_ok("1-0:30"), 86400 + 1800);
    EXPECT_EQ(parse_ok("2-00:00:00"), 172800);
    EXPECT_EQ(parse_ok("0-0:0:1"), 1);
    EXPECT_EQ(parse_ok("3-4:05:06"), 3 * 86400 + 4 * 3600 + 5 * 60 + 6);
}

TEST(ParseTimeLimit, KeepsSecondsInsteadOfRoundingToMinutes) {
    EXPECT_EQ(parse_ok("0:01"), 1);
    EXPECT_EQ(parse_ok("1:00:59"), 3659);
}

TEST(ParseTimeLimit, LaterFieldsAreNotRangeCheckedLikeSlurm) {
    EXPECT_EQ(parse_ok("0:90"), 90);
    EXPECT_EQ(parse_ok("1:99:99"), 3600 + 99 * 60 + 99);
}

TEST(ParseTimeLimit, UnlimitedSpellingsAnyCase) {
    for (const char* text :
         {"INFINITE", "infinite", "Infinite", "UNLIMITED", "unlimited", "UnLimited", "-1"}) {
        EXPECT_EQ(parse_ok(text), kUnlimitedSeconds) << text;
    }
}

TEST(ParseTimeLimit, RejectsEmptyAndBlank) {
    expect_rejected("");
    expect_rejected(" ");
    expect_rejected(" 10");
    expect_rejected("10 ");
}

TEST(ParseTimeLimit, RejectsNegativeAndSigned) {
    expect_rejected("-2");
    expect_rejected("-10:00");
    expect_rejected("+10");
    expect_rejected("1-+2");
}

TEST(ParseTimeLimit, RejectsNonDigits) {
    expect_rejected("10m");
    expect_rejected("1h");
    expect_rejected("abc");
    expect_rejected("1.5");
    expect_rejected("INFINITY");
    expect_rejected("unlimitedx");
}

TEST(ParseTimeLimit, RejectsTooManyOrEmptyFields) {
    expect_rejected("1:99:99:99");
    expect_rejected("1-2:3:4:5");
    expect_rejected("1-2-3");
    expect_rejected("1:");
    expect_rejected(":5");
    expect_rejected("1::2");
    expect_rejected("1-");
    expect_rejected("-");
    expect_rejected(":");
    expect_rejected("1-:30");
}

TEST(ParseTimeLimit, RejectsOverflow) {
    expect_rejected("99999999999999999999");  // does not fit in int64
    expect_rejected("9223372036854775807");   // fits, but not once in seconds
    expect_rejected("106751991167301-0");     // days * 86400 overflows
    expect_rejected("9223372036854775807:9223372036854775807:0");
    EXPECT_EQ(parse_ok("0:9223372036854775807"), INT64_MAX);
}

// scontrol show job's RunTime and TimeLimit, sacct's Elapsed: always HH:MM:SS.
TEST(FormatClock, HoursMinutesSecondsAndDays) {
    EXPECT_EQ(format_clock(0), "00:00:00");
    EXPECT_EQ(format_clock(300), "00:05:00");
    EXPECT_EQ(format_clock(3725), "01:02:05");
    EXPECT_EQ(format_clock(2 * 86400 + 3 * 3600), "2-03:00:00");
    EXPECT_EQ(format_clock(kUnlimitedSeconds), "UNLIMITED");
}

TEST(FormatDuration, MinutesAndSeconds) {
    EXPECT_EQ(format_duration(0), "0:00");
    EXPECT_EQ(format_duration(5), "0:05");
    EXPECT_EQ(format_duration(754), "12:34");
    EXPECT_EQ(format_duration(3599), "59:59");
}

TEST(FormatDuration, Hours) {
    EXPECT_EQ(format_duration(3600), "1:00:00");
    EXPECT_EQ(format_duration(3723), "1:02:03");
    EXPECT_EQ(format_duration(86399), "23:59:59");
}

TEST(FormatDuration, Days) {
    EXPECT_EQ(format_duration(86400), "1-00:00:00");
    EXPECT_EQ(format_duration(172800), "2-00:00:00");
    EXPECT_EQ(format_duration(129600 + 61), "1-12:01:01");
    EXPECT_EQ(format_duration(100 * 86400 + 5), "100-00:00:05");
}

TEST(FormatDuration, UnlimitedAndInvalid) {
    EXPECT_EQ(format_duration(kUnlimitedSeconds), "UNLIMITED");
    EXPECT_EQ(format_duration(-2), "INVALID");
}

TEST(FormatDuration, RoundTripsThroughParse) {
    for (int64_t seconds : {int64_t{0}, int64_t{59}, int64_t{3600}, int64_t{90061}, int64_t{172800},
                            kUnlimitedSeconds}) {
        EXPECT_EQ(parse_ok(format_duration(seconds)), seconds) << format_duration(seconds);
    }
}

}  // namespace
}  // namespace cohort
