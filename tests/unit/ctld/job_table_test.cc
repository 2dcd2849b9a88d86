// The controller's job table: durability of submissions and what dependencies see.
#include "scheduler/ctld/job_table.h"

#include <gtest/gtest.h>

namespace cohort::ctld {
namespace {

Job table_job(uint64_t id, JobState state, uint64_t array_id = 0, uint32_t count = 0) {
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
    jobs.add_submitted(table_job(1, JobState::kPending));
    EXPECT_FALSE(jobs.is_committed(1));
    jobs.committed(1);
    EXPECT_TRUE(jobs.is_committed(1));
    jobs.load(table_job(2, JobState::kRunning));  // from the store: durable
    EXPECT_TRUE(jobs.is_committed(2));
    EXPECT_EQ(jobs.size(), 2u);
}

TEST(JobTable, AFinishedJobLeavesMemoryButDependenciesStillSeeItsState) {
    JobTable jobs;
    jobs.load(table_job(1, JobState::kFailed));
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
        jobs.load(table_job(id, JobState::kPending, 10, 3));
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

// Array 100 has indexes 0-9 (ids 100-109); tasks 0-2 were split off, 3-9 are one record.
TEST(JobTable, TasksStillInTheirArraysRecordAreSeenByDependencies) {
    JobTable jobs;
    ArrayRemainder remainder{table_job(100, JobState::kPending, 100, 10), {}, {}};
    remainder.all = sched::parse_array_spec("0-9")->indexes;
    remainder.pending = sched::parse_array_spec("3-9")->indexes;
    jobs.load(std::move(remainder));
    for (uint64_t id = 100; id < 103; ++id) {
        jobs.load(table_job(id, JobState::kCompleted, 100, 10));
    }
    EXPECT_EQ(jobs.unsplit_task(105), (std::pair<uint64_t, uint32_t>{100, 5}));
    EXPECT_FALSE(jobs.unsplit_task(102));  // split off
    EXPECT_FALSE(jobs.unsplit_task(110));  // beyond the array
    ASSERT_TRUE(jobs.other_job(105));
    EXPECT_EQ(jobs.other_job(105)->state, JobState::kPending);  // afterok:105 waits
    EXPECT_EQ(jobs.other_job(100)->state, JobState::kRunning);  // the array: some ran

    Job& task = jobs.split_task(100, 3);
    EXPECT_EQ(task.job_id, 103u);
    EXPECT_EQ(task.array_task_id, 3u);
    EXPECT_EQ(jobs.remainders().at(100).pending.to_string(), "4-9");

    jobs.remainders().at(100).job.state = JobState::kCancelled;
    jobs.forget_remainder(100);
    EXPECT_TRUE(jobs.remainders().empty());
    EXPECT_EQ(jobs.other_job(107)->state, JobState::kCancelled);  // ended with the record
    EXPECT_EQ(jobs.other_job(103)->state, JobState::kPending);    // split off before
}

// Lookups by id go through a hash index beside the ordered map: both must always hold the
// same jobs, whichever way a job came in or left.
TEST(JobTable, LookupsByIdFindEveryJobTheWalkSees) {
    JobTable jobs;
    ArrayRemainder remainder{table_job(100, JobState::kPending, 100, 4), {}, {}};
    remainder.all = sched::parse_array_spec("0-3")->indexes;
    remainder.pending = remainder.all;
    jobs.add_submitted(std::move(remainder));
    for (uint64_t id = 1; id <= 50; ++id) {
        jobs.add_submitted(table_job(id, JobState::kPending));
    }
    jobs.load(table_job(7, JobState::kRunning));  // read again from the store: replaced
    jobs.split_task(100, 0);
    jobs.split_task(100, 3);
    for (uint64_t id = 2; id <= 50; id += 2) {
        jobs.forget(id);
    }
    jobs.forget(999);  // never there: nothing changes

    std::vector<uint64_t> walked;
    for (const auto& [id, job] : jobs) {
        walked.push_back(id);
        ASSERT_NE(jobs.find(id), jobs.end()) << id;
        EXPECT_EQ(&jobs.find(id)->second, &job) << id;
        EXPECT_EQ(&jobs.at(id), &job) << id;
    }
    EXPECT_EQ(walked.size(), 27u);  // 25 odd ids and tasks 100, 103
    EXPECT_EQ(walked.back(), 103u);
    EXPECT_EQ(jobs.at(7).state, JobState::kRunning);
    EXPECT_EQ(jobs.find(2), jobs.end());
    EXPECT_EQ(jobs.find(101), jobs.end());  // still in its array's record
    EXPECT_THROW(jobs.at(2), std::out_of_range);
    const JobTable& read_only = jobs;
    EXPECT_EQ(read_only.find(3)->second.job_id, 3u);
    EXPECT_EQ(read_only.find(4), read_only.end());
}

}  // namespace
}  // namespace cohort::ctld
