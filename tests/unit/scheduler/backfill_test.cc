// The availability profile and the EASY pass.
#include <gtest/gtest.h>

#include "scheduler/backfill/easy.h"
#include "scheduler/backfill/profile.h"

namespace cohort::sched {
namespace {

TEST(Profile, ReserveAndReleaseRestoreTheStepFunction) {
    AvailabilityProfile profile(10, 0);
    profile.reserve(0, 100, 4);
    profile.reserve(50, 100, 6);
    EXPECT_EQ(profile.free_at(0), 6);
    EXPECT_EQ(profile.free_at(60), 0);
    EXPECT_EQ(profile.free_at(120), 4);
    EXPECT_EQ(profile.free_at(150), 10);
    profile.release(50, 100, 6);
    profile.release(0, 100, 4);
    EXPECT_EQ(profile.free_at(60), 10);
    EXPECT_EQ(profile.breakpoints(), 1u);  // merged back into one segment
}

TEST(Profile, EarliestStartFindsTheFirstHoleLongEnough) {
    AvailabilityProfile profile(10, 0);
    profile.reserve(0, 100, 8);    // 2 free until 100
    profile.reserve(150, 50, 8);   // 10 free in [100,150), then 2 until 200
    EXPECT_EQ(profile.earliest_start(0, 10, 2), 0);
    EXPECT_EQ(profile.earliest_start(0, 40, 5), 100);  // fits in the 50 s hole
    EXPECT_EQ(profile.earliest_start(0, 60, 5), 200);  // the hole is too short
    EXPECT_EQ(profile.earliest_start(0, 1, 11), INT64_MAX);
}

TEST(Profile, AdvancingTheOriginForgetsThePast) {
    AvailabilityProfile profile(10, 0);
    profile.reserve(0, 100, 3);
    profile.advance_origin(50);
    EXPECT_EQ(profile.free_at(50), 7);
    profile.release(0, 100, 3);  // the forgotten half is ignored
    EXPECT_EQ(profile.free_at(60), 10);
}

TEST(Easy, ShortJobFillsTheHoleFcfsLeavesIdle) {
    // 10 processors, 6 busy until t=100. Head needs 8; a 4-wide 50 s job fits before it.
    AvailabilityProfile easy(10, 0);
    easy.reserve(0, 100, 6);
    std::vector<QueuedJob> queue = {{1, 8, 100}, {2, 4, 50}, {3, 4, 500}};
    AvailabilityProfile fcfs = easy;
    EXPECT_TRUE(easy_pass(fcfs, queue, 0, BackfillPolicy::kNone).empty());
    std::vector<size_t> started = easy_pass(easy, queue, 0, BackfillPolicy::kEasy);
    EXPECT_EQ(started, (std::vector<size_t>{1}));  // job 3 would delay the head past t=100
    EXPECT_EQ(easy.earliest_start(0, 100, 8), 100);  // the head's start is untouched
}

TEST(Easy, HeadsThatFitStartInOrder) {
    AvailabilityProfile profile(10, 0);
    std::vector<QueuedJob> queue = {{1, 4, 10}, {2, 4, 10}, {3, 4, 10}};
    EXPECT_EQ(easy_pass(profile, queue, 0, BackfillPolicy::kEasy),
            (std::vector<size_t>{0, 1}));
    EXPECT_EQ(profile.free_at(0), 2);
}

}  // namespace
}  // namespace cohort::sched
