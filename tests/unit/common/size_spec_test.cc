// Tests for parsing memory sizes and counts.
#include "common/size_spec.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

int64_t mib_ok(std::string_view text) {
    Result<int64_t> result = parse_memory_mib(text);
    EXPECT_TRUE(result.is_ok()) << text << ": " << result.status().message();
    return result.is_ok() ? *result : -1;
}

void expect_bad_size(std::string_view text) {
    Result<int64_t> result = parse_memory_mib(text);
    ASSERT_FALSE(result.is_ok()) << "'" << text << "' was accepted as " << *result;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(result.status().message(),
              "invalid size '" + std::string(text) +
                      "' (accepted: a number with an optional K, M, G or T suffix, e.g. 4000, "
                      "500M, 16G)");
}

TEST(ParseMemoryMib, NoSuffixIsMib) {
    EXPECT_EQ(mib_ok("4000"), 4000);
    EXPECT_EQ(mib_ok("0"), 0);
    EXPECT_EQ(mib_ok("0032"), 32);
}

TEST(ParseMemoryMib, SuffixesAre1024BasedAndCaseInsensitive) {
    EXPECT_EQ(mib_ok("500M"), 500);
    EXPECT_EQ(mib_ok("500m"), 500);
    EXPECT_EQ(mib_ok("16G"), 16384);
    EXPECT_EQ(mib_ok("2g"), 2048);
    EXPECT_EQ(mib_ok("80G"), 81920);
    EXPECT_EQ(mib_ok("1T"), 1048576);
    EXPECT_EQ(mib_ok("3t"), 3 * 1048576);
    EXPECT_EQ(mib_ok("2048K"), 2);
    EXPECT_EQ(mib_ok("0G"), 0);
}

TEST(ParseMemoryMib, OptionalBAfterUnit) {
    EXPECT_EQ(mib_ok("16GB"), 16384);
    EXPECT_EQ(mib_ok("16gb"), 16384);
    EXPECT_EQ(mib_ok("16Gb"), 16384);
    EXPECT_EQ(mib_ok("500MB"), 500);
    EXPECT_EQ(mib_ok("1TB"), 1048576);
    EXPECT_EQ(mib_ok("1024KB"), 1);
}

TEST(ParseMemoryMib, KilobytesRoundUpToWholeMib) {
    EXPECT_EQ(mib_ok("1K"), 1);
    EXPECT_EQ(mib_ok("1023K"), 1);
    EXPECT_EQ(mib_ok("1024K"), 1);
    EXPECT_EQ(mib_ok("1025K"), 2);
    EXPECT_EQ(mib_ok("0K"), 0);
}

TEST(ParseMemoryMib, RejectsEmptyBlankAndSigns) {
    expect_bad_size("");
    expect_bad_size(" 1G");
    expect_bad_size("1G ");
    expect_bad_size("1 G");
    expect_bad_size("-1");
    expect_bad_size("-1G");
    expect_bad_size("+1G");
}

TEST(ParseMemoryMib, RejectsUnknownOrExtraSuffixes) {
    expect_bad_size("12Q");
    expect_bad_size("G");
    expect_bad_size("GB");
    expect_bad_size("4000B");  // bytes? refused rather than read as MiB
    expect_bad_size("1GBB");
    expect_bad_size("1GiB");
    expect_bad_size("1P");
    expect_bad_size("1.5G");
    expect_bad_size("16G2");
}

TEST(ParseMemoryMib, RejectsOverflow) {
    expect_bad_size("99999999999999999999");
    expect_bad_size("9223372036854775807G");
    expect_bad_size("9223372036854775807T");
    expect_bad_size("8796093022208T");  // 2^43 TiB = 2^63 MiB, one past INT64_MAX
    EXPECT_EQ(mib_ok("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(mib_ok("8796093022207T"), 8796093022207 * 1048576);
    EXPECT_EQ(mib_ok("9223372036854775807K"), 9007199254740992);
}

TEST(ParsePositiveCount, AcceptsWholeNumbersFromOne) {
    EXPECT_EQ(*parse_positive_count("1"), 1);
    EXPECT_EQ(*parse_positive_count("256"), 256);
    EXPECT_EQ(*parse_positive_count("08"), 8);
    EXPECT_EQ(*parse_positive_count("9223372036854775807"), INT64_MAX);
}

TEST(ParsePositiveCount, RejectsWithMessage) {
    for (const char* text : {"0", "-1", "", " 1", "1 ", "+1", "1.0", "1e3", "four", "8x",
                             "99999999999999999999", "-0"}) {
        Result<int64_t> result = parse_positive_count(text);
        ASSERT_FALSE(result.is_ok()) << "'" << text << "' was accepted";
        EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
        EXPECT_EQ(result.status().message(),
                  "invalid count '" + std::string(text) + "' (accepted: a whole number >= 1)");
    }
}

TEST(ParseCount, HonoursMinimum) {
    EXPECT_EQ(*parse_count("0", 0), 0);
    EXPECT_EQ(*parse_count("5", 5), 5);
    EXPECT_FALSE(parse_count("4", 5).is_ok());
    EXPECT_EQ(parse_count("4", 5).status().message(),
              "invalid count '4' (accepted: a whole number >= 5)");
    EXPECT_EQ(parse_count("-1", 0).status().message(),
              "invalid count '-1' (accepted: a whole number >= 0)");
}

TEST(ParseCount, NegativeMinimumAllowsNegativeNumbers) {
    EXPECT_EQ(*parse_count("-3", -5), -3);
    EXPECT_EQ(*parse_count("-5", -5), -5);
    EXPECT_FALSE(parse_count("-6", -5).is_ok());
    EXPECT_FALSE(parse_count("-", -5).is_ok());
    EXPECT_FALSE(parse_count("--1", -5).is_ok());
}

}  // namespace
}  // namespace cohort
