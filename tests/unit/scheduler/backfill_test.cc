// The availability profile and the EASY pass.
#include <gtest/gtest.h>

#include "scheduler/backfill/backfill_pass.h"
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
    profile.reserve(0, 100, 8);   // 2 free until 100
    profile.reserve(150, 50, 8);  // 10 free in [100,150), then 2 until 200
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
    EXPECT_TRUE(backfill_pass(fcfs, queue, 0, {BackfillPolicy::kNone}).start_now.empty());
    std::vector<size_t> started = backfill_pass(easy, queue, 0, {BackfillPolicy::kEasy}).start_now;
    EXPECT_EQ(started, (std::vector<size_t>{1}));    // job 3 would delay the head past t=100
    EXPECT_EQ(easy.earliest_start(0, 100, 8), 100);  // the head's start is untouched
}

TEST(Easy, HeadsThatFitStartInOrder) {
    AvailabilityProfile profile(10, 0);
    std::vector<QueuedJob> queue = {{1, 4, 10}, {2, 4, 10}, {3, 4, 10}};
    EXPECT_EQ(backfill_pass(profile, queue, 0, {BackfillPolicy::kEasy}).start_now,
              (std::vector<size_t>{0, 1}));
    EXPECT_EQ(profile.free_at(0), 2);
}

TEST(Conservative, EveryWaitingJobKeepsItsReservation) {
    // 10 processors, 6 busy until t=100; no job fits now. Conservative plans all three:
    // 8x100 at 100, 6x100 at 200, and 4x150 beside it at 200.
    AvailabilityProfile base(10, 0);
    base.reserve(0, 100, 6);
    std::vector<QueuedJob> queue = {{1, 8, 100}, {2, 6, 100}, {3, 4, 150}};
    AvailabilityProfile easy = base;
    AvailabilityProfile conservative = base;
    EXPECT_TRUE(backfill_pass(easy, queue, 0, {BackfillPolicy::kEasy}).start_now.empty());
    BackfillPlan plan = backfill_pass(conservative, queue, 0, {BackfillPolicy::kConservative});
    EXPECT_TRUE(plan.start_now.empty());
    ASSERT_EQ(plan.reserved.size(), 3u);
    EXPECT_EQ(plan.reserved[0].start, 100);
    EXPECT_EQ(plan.reserved[1].start, 200);
    EXPECT_EQ(plan.reserved[2].start, 200);
    EXPECT_EQ(conservative.free_at(0), 4);  // planning reservations were taken out
}

TEST(Conservative, ABackfilledJobDelaysNoReservation) {
    // Job 1 (8x100) is reserved at 100. Job 2 (2x300) fits now beside that reservation
    // (2 + 8 = 10). After it, job 3 (4x50) no longer fits now and is planned at 200.
    AvailabilityProfile profile(10, 0);
    profile.reserve(0, 100, 6);
    std::vector<QueuedJob> queue = {{1, 8, 100}, {2, 2, 300}, {3, 4, 50}};
    BackfillPlan plan = backfill_pass(profile, queue, 0, {BackfillPolicy::kConservative});
    EXPECT_EQ(plan.start_now, (std::vector<size_t>{1}));
    ASSERT_EQ(plan.reserved.size(), 2u);
    EXPECT_EQ(plan.reserved[0].start, 100);
    EXPECT_EQ(plan.reserved[1].start, 200);
}

}  // namespace
}  // namespace cohort::sched
