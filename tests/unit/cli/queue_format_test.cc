// squeue's -o/-O formats and --sort keys over job records.
#include "cli/queue_format.h"

#include <cstdlib>
#include <ctime>

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

protocol::JobRecord pending(uint64_t id, const std::string& name, int64_t priority) {
    protocol::JobRecord job;
    job.job_id = id;
    job.spec.name = name;
    job.user_name = "alice";
    job.partition = "batch";
    job.reason = "Priority";
    job.priority = priority;
    job.time_limit_s = 3600;
    return job;
}

TEST(QueueFormat, DefaultMatchesSqueuesColumns) {
    const auto fields = default_queue_format();
    EXPECT_EQ(queue_header(fields),
              "             JOBID PARTITION     NAME     USER ST       TIME  NODES "
              "NODELIST(REASON)");
    EXPECT_EQ(queue_line(fields, pending(7, "averyveryverylongname", 1), 0),
              "                 7     batch averyver    alice PD       0:00      1 (Priority)");
}

TEST(QueueFormat, WidthsCutAndPadLeftOrRight) {
    auto fields = parse_queue_format("%5j|%.5j|%j|%i|%T|%l");
    ASSERT_TRUE(fields) << fields.status().message();
    EXPECT_EQ(queue_line(*fields, pending(3, "averyveryverylongname", 1), 0),
              "avery|avery|averyveryverylongname|3|PENDING|1:00:00");
    EXPECT_EQ(queue_line(*fields, pending(3, "b", 1), 0), "b    |    b|b|3|PENDING|1:00:00");
    EXPECT_EQ(queue_header(*fields), "NAME | NAME|NAME|JOBID|STATE|TIME_LIMIT");
}

TEST(QueueFormat, ArrayTasksShowTheirIdsAndRunningJobsTheirNodes) {
    protocol::JobRecord job = pending(41, "sweep", 1);
    job.array_job_id = 40;
    job.array_task_id = 1;
    job.state = JobState::kRunning;
    job.start_time = 1000;
    job.nodes = {"n1", "n2"};
    job.cpus_per_node = {4, 4};
    auto fields = parse_queue_format("%i %A %F %K %t %M %D %C %R");
    ASSERT_TRUE(fields);
    EXPECT_EQ(queue_line(*fields, job, 1065), "40_1 41 40 1 R 1:05 2 8 n[1-2]");
}

// As squeue's %e: when the time limit would end a job that has not ended, NONE without one.
// %b as squeue prints it: GPUs and generic resources per node, N/A when none; a listing of
// columns only does not hold them.
TEST(QueueFormat, TresPerNodeShowsWhatTheJobAsksOfEachNode) {
    auto fields = parse_queue_format("%i %b");
    ASSERT_TRUE(fields);
    protocol::JobRecord job = pending(5, "train", 1);
    EXPECT_EQ(queue_line(*fields, job, 0), "5 N/A");
    job.spec.gpu.per_node = 2;
    job.spec.gres = "nvme:10";
    EXPECT_EQ(queue_line(*fields, job, 0), "5 gres:gpu:2,gres:nvme:10");
    EXPECT_FALSE(columns_only_suffice(*fields, {}));
    EXPECT_TRUE(columns_only_suffice(*parse_queue_format("%i %T"), {}));
    auto named = parse_queue_fields("JobID,tres-per-node");
    ASSERT_TRUE(named) << named.status().message();
    EXPECT_EQ(queue_header(*named).find("TRES_PER_NODE") != std::string::npos, true);
}

TEST(QueueFormat, EndTimeIsWhenTheLimitWouldEndTheJob) {
    setenv("TZ", "UTC", 1);
    tzset();
    auto fields = parse_queue_format("%S %e");
    ASSERT_TRUE(fields);
    protocol::JobRecord job = pending(5, "train", 1);
    EXPECT_EQ(queue_line(*fields, job, 0), "N/A N/A");  // no start planned yet
    job.expected_start = 1'800'000'000;
    EXPECT_EQ(queue_line(*fields, job, 0), "2027-01-15T08:00:00 2027-01-15T09:00:00");
    job.state = JobState::kRunning;
    job.start_time = 1'800'000'600;
    EXPECT_EQ(queue_line(*fields, job, 0), "2027-01-15T08:10:00 2027-01-15T09:10:00");
    job.time_limit_s = -1;
    EXPECT_EQ(queue_line(*fields, job, 0), "2027-01-15T08:10:00 NONE");
    job.state = JobState::kCompleted;
    job.end_time = 1'800'000'700;
    EXPECT_EQ(queue_line(*fields, job, 0), "2027-01-15T08:10:00 2027-01-15T08:11:40");
}

TEST(QueueFormat, NamedFieldsAsSqueueCapitalO) {
    auto fields = parse_queue_fields("JobID:6,name:.8,State");
    ASSERT_TRUE(fields) << fields.status().message();
    EXPECT_EQ(queue_line(*fields, pending(9, "train", 1), 0), "9        trainPENDING");
}

TEST(QueueFormat, BadFieldsNameTheValueAndWhatIsAccepted) {
    auto code = parse_queue_format("%i %w");
    ASSERT_FALSE(code);
    EXPECT_NE(code.status().message().find("--format: invalid field '%w' in '%i %w'"),
              std::string::npos);
    EXPECT_NE(code.status().message().find("%j job name"), std::string::npos);
    auto name = parse_queue_fields("JobID,Colour");
    ASSERT_FALSE(name);
    EXPECT_NE(name.status().message().find("--Format: invalid field 'Colour' (accepted: JobID,"),
              std::string::npos);
    EXPECT_FALSE(parse_queue_fields("Name:x"));
    EXPECT_FALSE(parse_sort_keys("i,zz"));
}

TEST(QueueSort, KeysInOrderWithDescending) {
    std::vector<protocol::JobRecord> jobs = {pending(1, "b", 10), pending(2, "a", 30),
                                             pending(3, "a", 20)};
    auto keys = parse_sort_keys("j,-Q");
    ASSERT_TRUE(keys);
    sort_jobs(jobs, *keys, 0);
    EXPECT_EQ(jobs[0].job_id, 2u);
    EXPECT_EQ(jobs[1].job_id, 3u);
    EXPECT_EQ(jobs[2].job_id, 1u);
    sort_jobs(jobs, *parse_sort_keys("-i"), 0);
    EXPECT_EQ(jobs[0].job_id, 3u);
}

TEST(QueueFormat, ColumnsOnlyListingsSufficeForEveryColumnButTheWorkDirectory) {
    auto no_keys = std::vector<SortKey>{};
    EXPECT_TRUE(columns_only_suffice(default_queue_format(), no_keys));
    EXPECT_TRUE(columns_only_suffice(*parse_queue_format("%i %j %u %T %M %l %D %R %P %m"),
                                     *parse_sort_keys("-t,i")));
    EXPECT_FALSE(columns_only_suffice(*parse_queue_format("%i %Z"), no_keys));
    EXPECT_FALSE(columns_only_suffice(*parse_queue_fields("JobID,WorkDir"), no_keys));
    EXPECT_FALSE(columns_only_suffice(default_queue_format(), *parse_sort_keys("Z")));
}

}  // namespace
}  // namespace cohort::cli
