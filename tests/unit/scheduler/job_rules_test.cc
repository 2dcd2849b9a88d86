// The per-job rules shared by the controller, `cohort sim` and the golden scenarios.
#include "scheduler/job_rules.h"

#include <gtest/gtest.h>

#include "scheduler/priority/fairshare_usage.h"
#include "tests/fixtures/manual_clock.h"

namespace cohort::sched {
namespace {

using Verdict = Eligibility::Verdict;

TEST(CheckEligibility, ChecksBeginTimeDependencyReservationThenThrottleInThatOrder) {
    ArrayThrottle throttle;
    EligibilityFacts job;
    job.begin_time = 200;
    job.dependency = DependencyStatus::kNeverSatisfied;
    job.wants_reservation = true;
    EXPECT_EQ(check_eligibility(job, 100, throttle).reason, "BeginTime");
    EXPECT_EQ(check_eligibility(job, 200, throttle).verdict, Verdict::kCancel);
    job.kill_on_invalid_dep = false;
    const Eligibility kept = check_eligibility(job, 200, throttle);
    EXPECT_EQ(kept.verdict, Verdict::kWait);
    EXPECT_EQ(kept.reason, "DependencyNeverSatisfied");
    job.dependency = DependencyStatus::kWaiting;
    EXPECT_EQ(check_eligibility(job, 200, throttle).reason, "Dependency");
    job.dependency = DependencyStatus::kSatisfied;
    EXPECT_EQ(check_eligibility(job, 200, throttle).reason, "ReservationDeleted");
    job.reservation_exists = true;
    EXPECT_EQ(check_eligibility(job, 200, throttle).verdict, Verdict::kOffer);
}

TEST(ArrayThrottle, OffersNoMoreTasksThanTheThrottleLessTheRunningOnes) {
    ArrayThrottle throttle;
    throttle.count(7, 3, true);  // one of three running
    throttle.count(7, 3, false);
    throttle.count(7, 3, false);
    throttle.count(7, 3, false);
    throttle.count(9, 0, false);  // not throttled
    EligibilityFacts task;
    task.array_id = 7;
    EXPECT_EQ(check_eligibility(task, 0, throttle).verdict, Verdict::kOffer);
    EXPECT_EQ(check_eligibility(task, 0, throttle).verdict, Verdict::kOffer);
    EXPECT_EQ(check_eligibility(task, 0, throttle).reason, "JobArrayTaskLimit");
    task.array_id = 9;
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(check_eligibility(task, 0, throttle).verdict, Verdict::kOffer);
    }
}

TEST(ExpectedEnd, IsStartPlusLimitButNeverThePast) {
    EXPECT_EQ(expected_end(1000, 600, 1200), 1600);
    EXPECT_EQ(expected_end(1000, 600, 1700), 1701);  // past its limit: being ended
    EXPECT_EQ(expected_end(1000, -1, 1200), 1200 + kForever);
    // EASY++: past its prediction (300 s), it is planned with its requested time (900 s).
    EXPECT_EQ(expected_end(1000, 300, 1400, 900), 1900);
    EXPECT_EQ(expected_end(1000, 300, 2000, 900), 2001);
}

TEST(RequestedCpus, CountsTasksTimesCpusPerTask) {
    ResourceRequest request;
    EXPECT_EQ(requested_cpus(request), 1);
    request.nodes_min = 4;
    request.ntasks_per_node = 8;
    request.cpus_per_task = 2;
    EXPECT_EQ(requested_cpus(request), 64);
    request.ntasks = 5;
    EXPECT_EQ(requested_cpus(request), 10);
}

TEST(FairShareUsage, ChargesEachSecondOnceAndDecaysAsTheClockAdvances) {
    testing::ManualClock clock;  // the core takes `now`; the clock stands for the controller's
    const int64_t start = clock.unix_seconds();
    FairShareUsage usage(3600);
    const UsageLedger::Key alice{"alice", "root"};
    usage.decay_to(clock.unix_seconds());
    clock.advance_s(900);
    usage.charge(1, alice, 4, start, clock.unix_seconds());  // 4 CPUs for 900 s
    usage.charge(1, alice, 4, start, clock.unix_seconds());  // the same seconds: nothing
    EXPECT_DOUBLE_EQ(usage.ledger().usage("alice", "root"), 3600);
    clock.advance_s(900);
    usage.charge(1, alice, 4, start, clock.unix_seconds());
    EXPECT_DOUBLE_EQ(usage.ledger().usage("alice", "root"), 7200);
    clock.advance_s(3600 - 1800);  // one half-life after the first decay
    usage.decay_to(clock.unix_seconds());
    EXPECT_DOUBLE_EQ(usage.ledger().usage("alice", "root"), 3600);
    usage.forget(1);
    const int64_t restart = clock.unix_seconds();
    clock.advance_s(10);
    usage.charge(1, alice, 1, restart, clock.unix_seconds());  // the same id afresh
    EXPECT_DOUBLE_EQ(usage.ledger().usage("alice", "root"), 3610);
}

TEST(FairShareUsage, RestoredUsageAlreadyChargedTheRunningJobsItNames) {
    FairShareUsage usage(0);
    const UsageLedger::Key alice{"alice", "root"};
    // Accounting charged job 1 (2 CPUs since 1000) up to 2000; job 2 started at 1500 but is
    // not named, so nothing of it was in the usage read.
    usage.restore(2000, {{alice, 2000.0}}, {1});
    usage.charge(1, alice, 2, 1000, 2010);
    usage.charge(2, alice, 1, 1500, 2010);
    EXPECT_DOUBLE_EQ(usage.ledger().usage("alice", "root"), 2000 + 2 * 10 + 1 * 510);
}

}  // namespace
}  // namespace cohort::sched
