// The controller's job table: durability of submissions and what dependencies see.
#include "scheduler/ctld/job_table.h"

#include <gtest/gtest.h>

namespace cohort::ctld {
namespace {

Job job(uint64_t id, JobState state, uint64_t array_id = 0, uint32_t count = 0) {
    Job record;
    record.job_id = id;
    record.state = state;
    record.start_time = state == JobState::kPending ? 0 : 1000 + static_cast<int64_t>(id);
    record.array_job_id = array_id;
    record.array_count = count;
    return record;
}

TEST(JobTable, ASubmittedJobIsHiddenUntilCommitted) {
    JobTable jobs;
    jobs.add_submitted(job(1, JobState::kPending));
    EXPECT_FALSE(jobs.is_committed(1));
    jobs.committed(1);
    EXPECT_TRUE(jobs.is_committed(1));
    jobs.load(job(2, JobState::kRunning));  // from the store: durable
    EXPECT_TRUE(jobs.is_committed(2));
    EXPECT_EQ(jobs.size(), 2u);
}

TEST(JobTable, AFinishedJobLeavesMemoryButDependenciesStillSeeItsState) {
    JobTable jobs;
    jobs.load(job(1, JobState::kFailed));
    jobs.remember_final(jobs.at(1));
    jobs.forget(1);
    EXPECT_EQ(jobs.find(1), jobs.end());
    auto seen = jobs.other_job(1);
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->state, JobState::kFailed);
    EXPECT_EQ(seen->start_time, 1001);
    EXPECT_FALSE(jobs.other_job(99));
}

TEST(JobTable, AnArraysIdStandsForAllItsTasks) {
    JobTable jobs;
    for (uint64_t id = 10; id < 13; ++id) {
        jobs.load(job(id, JobState::kPending, 10, 3));
    }
    EXPECT_EQ(jobs.other_job(10)->state, JobState::kPending);
    jobs.at(11).state = JobState::kRunning;
    EXPECT_EQ(jobs.other_job(10)->state, JobState::kRunning);
    for (uint64_t id = 10; id < 13; ++id) {
        jobs.at(id).state = JobState::kCompleted;
        jobs.remember_final(jobs.at(id));
        jobs.forget(id);
    }
    EXPECT_EQ(jobs.other_job(10)->state, JobState::kCompleted);
}

}  // namespace
}  // namespace cohort::ctld
