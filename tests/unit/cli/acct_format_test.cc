// sacct's field lists and the three forms of its output.
#include "cli/acct_format.h"

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

protocol::JobRecord finished_job() {
    protocol::JobRecord job;
    job.job_id = 42;
    job.spec.name = "a_rather_long_name";
    job.spec.account = "phys";
    job.partition = "debug";
    job.state = JobState::kFailed;
    job.exit_code = 3;
    job.start_time = 1000;
    job.end_time = 1000 + 3725;
    job.nodes = {"node1", "node2"};
    job.cpus_per_node = {4, 4};
    return job;
}

TEST(AcctFormat, ParsableFormsSeparateWithBars) {
    auto fields = parse_acct_format("jobid,State,exitcode,Elapsed,NodeList");
    ASSERT_TRUE(fields) << fields.status().message();
    protocol::StepRecord step;
    step.step_id = 0;
    step.state = JobState::kCompleted;
    step.start_time = 1000;
    step.end_time = 1010;
    step.nodes = {"node1"};
    EXPECT_EQ(acct_header(*fields, AcctStyle::kParsable2),
              std::vector<std::string>{"JobID|State|ExitCode|Elapsed|NodeList"});
    EXPECT_EQ(acct_line(*fields, AcctStyle::kParsable2, finished_job(), nullptr, 0),
              "42|FAILED|3:0|01:02:05|node[1-2]");
    EXPECT_EQ(acct_line(*fields, AcctStyle::kParsable, finished_job(), &step, 0),
              "42.0|COMPLETED|0:0|00:00:10|node1|");
}

TEST(AcctFormat, TresAsSacctWritesThem) {
    auto fields = parse_acct_format("AllocTRES,ReqTRES");
    ASSERT_TRUE(fields) << fields.status().message();
    protocol::JobRecord job = finished_job();  // 2 nodes of 4 CPUs
    job.mem_per_node_mib = 8192;
    job.gpu_alloc = {{{0, 1}, {}, {}, "nvidia"}, {{0, 1}, {}, {}, "nvidia"}};
    job.spec.nodes_min = 2;
    job.spec.ntasks = 8;
    job.spec.mem_mib = 8192;
    EXPECT_EQ(acct_line(*fields, AcctStyle::kParsable2, job, nullptr, 0),
              "billing=8,cpu=8,gres/gpu=4,mem=16G,node=2|billing=8,cpu=8,mem=16G,node=2");
    auto weights = parse_billing_weights("CPU=0.5,GRES/gpu=4");
    ASSERT_TRUE(weights);
    EXPECT_EQ(acct_line(*fields, AcctStyle::kParsable2, job, nullptr, 0, *weights),
              "billing=20,cpu=8,gres/gpu=4,mem=16G,node=2|billing=4,cpu=8,mem=16G,node=2");
    // Other generic resources are per node, in name order among the rest.
    job.spec.gres = "fpga:1,nvme:20";
    EXPECT_EQ(acct_line(*fields, AcctStyle::kParsable2, job, nullptr, 0),
              "billing=8,cpu=8,gres/fpga=2,gres/gpu=4,gres/nvme=40,mem=16G,node=2|"
              "billing=8,cpu=8,gres/fpga=2,gres/nvme=40,mem=16G,node=2");
}

// A step holds its CPUs and nodes, and its job's memory and GPUs on those nodes.
TEST(AcctFormat, AStepsTresAreItsJobsOnItsNodes) {
    auto fields = parse_acct_format("JobID,AllocTRES");
    ASSERT_TRUE(fields);
    protocol::JobRecord job = finished_job();
    job.mem_per_node_mib = 8192;
    job.gpu_alloc = {{{0, 1}, {}, {}, "nvidia"}, {{2}, {}, {}, "nvidia"}};
    protocol::StepRecord step;
    step.step_id = 1;
    step.start_time = 1000;
    step.end_time = 1100;
    step.nodes = {"node2"};
    step.cpus_per_node = {3};
    EXPECT_EQ(acct_line(*fields, AcctStyle::kParsable2, job, &step, 0),
              "42.1|cpu=3,gres/gpu=1,mem=8G,node=1");
    EXPECT_EQ(step_gpu_seconds(job, step, 0), 100);
    step.nodes = {"node1", "node2"};
    step.cpus_per_node = {1, 1};
    step.end_time = 0;  // running: up to now
    EXPECT_EQ(step_gpu_seconds(job, step, 1010), 3 * 10);
}

TEST(AcctFormat, TheDefaultTableCutsWideValuesWithAPlus) {
    const std::vector<AcctField> fields = default_acct_format();
    const std::vector<std::string> header = acct_header(fields, AcctStyle::kTable);
    ASSERT_EQ(header.size(), 2u);
    EXPECT_EQ(header[0],
              "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ");
    EXPECT_EQ(header[1],
              "------------ ---------- ---------- ---------- ---------- ---------- -------- ");
    EXPECT_EQ(acct_line(fields, AcctStyle::kTable, finished_job(), nullptr, 0),
              "42           a_rather_+      debug       phys          8     FAILED      3:0 ");
}

TEST(AcctFormat, WidthsAndUnknownFields) {
    auto wide = parse_acct_format("JobName%20");
    ASSERT_TRUE(wide);
    EXPECT_EQ(wide->front().width, 20u);
    auto unknown = parse_acct_format("JobID,Colour");
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.status().message().find("--format: invalid field 'Colour' (accepted: JobID,"),
              std::string::npos);
    EXPECT_FALSE(parse_acct_format("JobName%x"));
}

}  // namespace
}  // namespace cohort::cli
