// Jobs' time limits on a node, judged by a manual clock.
#include "launcher/time_limits.h"

#include <gtest/gtest.h>

#include "tests/fixtures/manual_clock.h"

namespace cohort::agent {
namespace {

TEST(TimeLimits, AJobExpiresWhenTheClockReachesItsEndTimeAndOnlyOnce) {
    testing::ManualClock clock;
    const int64_t start = clock.unix_seconds();
    TimeLimits limits;
    limits.set(1, start + 60);
    limits.set(2, start + 30);
    limits.set(3, start + 90);
    EXPECT_EQ(limits.next_end(), start + 30);

    clock.advance_s(29);
    EXPECT_TRUE(limits.take_expired(clock.unix_seconds()).empty());
    clock.advance_s(31);  // 60 s in: jobs 2 and 1, earliest first
    EXPECT_EQ(limits.take_expired(clock.unix_seconds()), (std::vector<uint64_t>{2, 1}));
    EXPECT_TRUE(limits.take_expired(clock.unix_seconds()).empty());
    EXPECT_EQ(limits.next_end(), start + 90);

    limits.erase(3);  // the job ended first
    clock.advance_s(60);
    EXPECT_TRUE(limits.take_expired(clock.unix_seconds()).empty());
    EXPECT_FALSE(limits.next_end().has_value());
}

TEST(TimeLimits, SettingAgainMovesTheEndTime) {
    TimeLimits limits;
    limits.set(1, 100);
    limits.set(1, 500);
    EXPECT_TRUE(limits.has(1));
    EXPECT_TRUE(limits.take_expired(400).empty());
    EXPECT_EQ(limits.take_expired(500), std::vector<uint64_t>{1});
    EXPECT_FALSE(limits.has(1));
}

}  // namespace
}  // namespace cohort::agent
