// The spool record a node keeps for each step part: what the next agent adopts from, and what
// `cohort stop` ends.
#include "launcher/step_record.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "launcher/batch_record.h"

namespace cohort::agent {
namespace {

class StepRecordTest : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/cohort-step-record-XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        dir_ = pattern;
    }

    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string dir_;
};

TEST_F(StepRecordTest, RoundTripsEveryField) {
    StepRecord record;
    record.job_id = 42;
    record.step_id = 3;
    record.local_job = 43;
    record.attempt = 2;
    record.node_index = 1;
    record.client_host = "10.0.0.5";
    record.client_port = 40123;
    record.owner_uid = 1000;
    record.job_end_time = 1'800'000'000;
    record.job_signal = "B:USR1@60";
    record.signal = "USR2@30";
    record.warned = true;
    record.step_manager = 777;
    record.step_manager_start = 12345;
    record.shm_dir = "/dev/shm/cohort-42.3-abcdef";
    record.tasks = {{2, 1001, 555, 7, 9}, {3, 1002, 556, -1, -1}};
    const std::string path = step_record_path(dir_, 42, 3);
    ASSERT_TRUE(write_step_record(path, record).is_ok());

    auto read = read_step_record(path);
    ASSERT_TRUE(read) << read.status().message();
    EXPECT_EQ(read->job_id, 42u);
    EXPECT_EQ(read->step_id, 3u);
    EXPECT_EQ(read->local_job, 43u);
    EXPECT_EQ(read->attempt, 2u);
    EXPECT_EQ(read->node_index, 1u);
    EXPECT_EQ(read->client_host, "10.0.0.5");
    EXPECT_EQ(read->client_port, 40123);
    EXPECT_EQ(read->owner_uid, 1000u);
    EXPECT_EQ(read->job_end_time, 1'800'000'000);
    EXPECT_EQ(read->job_signal, "B:USR1@60");
    EXPECT_EQ(read->signal, "USR2@30");
    EXPECT_TRUE(read->warned);
    EXPECT_EQ(read->step_manager, 777);
    EXPECT_EQ(read->step_manager_start, 12345u);
    EXPECT_EQ(read->shm_dir, "/dev/shm/cohort-42.3-abcdef");
    ASSERT_EQ(read->tasks.size(), 2u);
    EXPECT_EQ(read->tasks[0].rank, 2u);
    EXPECT_EQ(read->tasks[0].shepherd, 1001);
    EXPECT_EQ(read->tasks[0].shepherd_start, 555u);
    EXPECT_EQ(read->tasks[0].out_fd, 7);
    EXPECT_EQ(read->tasks[0].err_fd, 9);
    EXPECT_EQ(read->tasks[1].out_fd, -1);
    EXPECT_EQ(step_record_paths(dir_), std::vector<std::string>{path});
}

TEST_F(StepRecordTest, ARecordThatIsNotOneIsRefusedWithItsPath) {
    const std::string path = step_record_path(dir_, 1, 0);
    std::ofstream(path) << "{\"job_id\": 1}\n";
    auto read = read_step_record(path);
    ASSERT_FALSE(read);
    EXPECT_NE(read.status().message().find(path), std::string::npos) << read.status().message();
}

// Only processes that are still the ones recorded count: a pid reused by another process
// (another start time) is not ended by `cohort stop`.
TEST_F(StepRecordTest, RecordedProcessesAreTheLiveOnesWithTheirStartTime) {
    const pid_t self = getpid();
    const uint64_t started = process_start_ticks(self);
    ASSERT_NE(started, 0u);
    StepRecord record;
    record.job_id = 5;
    record.tasks = {{0, self, started, -1, -1}, {1, self, started + 1, -1, -1}};
    record.step_manager = self;
    record.step_manager_start = started + 2;
    ASSERT_TRUE(write_step_record(step_record_path(dir_, 5, 0), record).is_ok());
    EXPECT_EQ(recorded_processes(dir_), std::vector<pid_t>{self});
}

}  // namespace
}  // namespace cohort::agent
