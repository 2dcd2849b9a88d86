// Tests for expanding output filename patterns.
#include "common/filename_pattern.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

FilenamePatternContext batch_job() {
    FilenamePatternContext ctx;
    ctx.job_id = 1234;
    ctx.job_name = "train";
    ctx.node_name = "n001";
    ctx.user = "alice";
    return ctx;
}

TEST(ExpandFilenamePattern, PlainTextUnchanged) {
    EXPECT_EQ(expand_filename_pattern("", batch_job()), "");
    EXPECT_EQ(expand_filename_pattern("slurm.out", batch_job()), "slurm.out");
}

TEST(ExpandFilenamePattern, JobCodes) {
    FilenamePatternContext ctx = batch_job();
    EXPECT_EQ(expand_filename_pattern("hello-%j.out", ctx), "hello-1234.out");
    EXPECT_EQ(expand_filename_pattern("logs/%x-%j.err", ctx), "logs/train-1234.err");
    EXPECT_EQ(expand_filename_pattern("%u/%x", ctx), "alice/train");
    EXPECT_EQ(expand_filename_pattern("100%%", ctx), "100%");
    EXPECT_EQ(expand_filename_pattern("%r", ctx), "0");
    ctx.restart_count = 3;
    EXPECT_EQ(expand_filename_pattern("run-%j-%r.log", ctx), "run-1234-3.log");
}

TEST(ExpandFilenamePattern, BatchStep) {
    FilenamePatternContext ctx = batch_job();
    EXPECT_EQ(expand_filename_pattern("%s", ctx), "batch");
    EXPECT_EQ(expand_filename_pattern("%J", ctx), "1234");
}

TEST(ExpandFilenamePattern, NumberedStep) {
    FilenamePatternContext ctx = batch_job();
    ctx.step_id = 2;
    EXPECT_EQ(expand_filename_pattern("%s", ctx), "2");
    EXPECT_EQ(expand_filename_pattern("%J.out", ctx), "1234.2.out");
    EXPECT_EQ(expand_filename_pattern("%8J", ctx), "00001234.2") << "pads the job id only";
    EXPECT_EQ(expand_filename_pattern("%3s", ctx), "002");
}

TEST(ExpandFilenamePattern, NonArrayJob) {
    FilenamePatternContext ctx = batch_job();
    EXPECT_EQ(expand_filename_pattern("%A", ctx), "1234");
    EXPECT_EQ(expand_filename_pattern("%a", ctx), "4294967294");
    EXPECT_EQ(expand_filename_pattern("%b", ctx), "4");
}

TEST(ExpandFilenamePattern, ArrayTask) {
    FilenamePatternContext ctx = batch_job();
    ctx.job_id = 1241;
    ctx.array_job_id = 1234;
    ctx.array_task_id = 17;
    EXPECT_EQ(expand_filename_pattern("sweep_%A_%a.out", ctx), "sweep_1234_17.out");
    EXPECT_EQ(expand_filename_pattern("%j", ctx), "1241");
    EXPECT_EQ(expand_filename_pattern("%b", ctx), "7");
    EXPECT_EQ(expand_filename_pattern("%3a", ctx), "017");
}

TEST(ExpandFilenamePattern, NodeAndTask) {
    FilenamePatternContext ctx = batch_job();
    ctx.node_name = "n001.cluster.example.org";
    ctx.node_index = 3;
    EXPECT_EQ(expand_filename_pattern("%N-%n", ctx), "n001-3");
    EXPECT_EQ(expand_filename_pattern("%t.out", ctx), "%t.out") << "no task: left for srun";
    EXPECT_EQ(expand_filename_pattern("%3t.out", ctx), "%3t.out");
    ctx.task_id = 5;
    EXPECT_EQ(expand_filename_pattern("%t.out", ctx), "5.out");
    EXPECT_EQ(expand_filename_pattern("%3t-%2n", ctx), "005-03");
}

TEST(ExpandFilenamePattern, ZeroPaddingCappedAtTen) {
    FilenamePatternContext ctx = batch_job();
    ctx.job_id = 128;
    EXPECT_EQ(expand_filename_pattern("%4j", ctx), "0128");
    EXPECT_EQ(expand_filename_pattern("%2j", ctx), "128");
    EXPECT_EQ(expand_filename_pattern("%0j", ctx), "128");
    EXPECT_EQ(expand_filename_pattern("%10j", ctx), "0000000128");
    EXPECT_EQ(expand_filename_pattern("%15j", ctx), "0000000128");
    EXPECT_EQ(expand_filename_pattern("%99999999999999999999j", ctx), "0000000128");
    EXPECT_EQ(expand_filename_pattern("%5r", ctx), "00000");
}

TEST(ExpandFilenamePattern, WidthIgnoredOnTextCodes) {
    FilenamePatternContext ctx = batch_job();
    EXPECT_EQ(expand_filename_pattern("%8x-%8u-%8N", ctx), "train-alice-n001");
}

TEST(ExpandFilenamePattern, UnknownCodesLeftAsWritten) {
    FilenamePatternContext ctx = batch_job();
    EXPECT_EQ(expand_filename_pattern("%q", ctx), "%q");
    EXPECT_EQ(expand_filename_pattern("%5q-%j", ctx), "%5q-1234");
    EXPECT_EQ(expand_filename_pattern("%S", ctx), "%S");
    EXPECT_EQ(expand_filename_pattern("end%", ctx), "end%");
    EXPECT_EQ(expand_filename_pattern("end%3", ctx), "end%3");
}

TEST(ExpandFilenamePattern, BackslashDisablesExpansion) {
    FilenamePatternContext ctx = batch_job();
    EXPECT_EQ(expand_filename_pattern(R"(\%j.out)", ctx), "%j.out");
    EXPECT_EQ(expand_filename_pattern(R"(out-%j\)", ctx), "out-%j");
    EXPECT_EQ(expand_filename_pattern(R"(a\\b%x)", ctx), "ab%x");
}

}  // namespace
}  // namespace cohort
