// srun inside a heterogeneous job: which components a step runs in, with what command.
#include "cli/het_step.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

// A hetjob of two components, 40 and 41, as its batch script's environment names them.
class HetStep : public ::testing::Test {
protected:
    void SetUp() override {
        setenv("SLURM_JOB_ID_HET_GROUP_0", "40", 1);
        setenv("SLURM_JOB_ID_HET_GROUP_1", "41", 1);
    }

    void TearDown() override {
        unsetenv("SLURM_JOB_ID_HET_GROUP_0");
        unsetenv("SLURM_JOB_ID_HET_GROUP_1");
    }

    static HetSegment segment(const std::string& group,
                              uint32_t ntasks,
                              std::vector<std::string> argv) {
        HetSegment out;
        out.het_group = group;
        out.shape.ntasks = ntasks;
        out.argv = std::move(argv);
        return out;
    }
};

TEST_F(HetStep, ColonsSplitTheCommandLineIntoParts) {
    const auto parts = split_het_segments({"-n1", "a", "x:y", ":", "-n2", "b", ":"});
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0], (std::vector<std::string>{"-n1", "a", "x:y"}));
    EXPECT_EQ(parts[1], (std::vector<std::string>{"-n2", "b"}));
    EXPECT_TRUE(parts[2].empty());
}

TEST_F(HetStep, OneComponentIsAPlainStepInItsJob) {
    auto step = step_job_of(40, {segment("1", 0, {"hostname"})});
    ASSERT_TRUE(step) << step.status().message();
    EXPECT_EQ(step->job_id, 41u);
    EXPECT_TRUE(step->parts.empty());
    step = step_job_of(40, {segment("", 0, {"hostname"})});
    ASSERT_TRUE(step);
    EXPECT_EQ(step->job_id, 40u);
}

TEST_F(HetStep, SeveralGroupsShareOneShapeAndCommand) {
    auto step = step_job_of(40, {segment("0-1", 2, {"hostname"})});
    ASSERT_TRUE(step) << step.status().message();
    EXPECT_EQ(step->job_id, 40u);
    ASSERT_EQ(step->parts.size(), 2u);
    EXPECT_EQ(step->parts[0].job_id, 40u);
    EXPECT_EQ(step->parts[1].job_id, 41u);
    EXPECT_EQ(step->parts[1].ntasks, 2u);
    EXPECT_TRUE(step->argv_by_job.empty());
}

TEST_F(HetStep, EachColonPartRunsInTheNextComponentAndAPartWithoutACommandRunsTheNextOnes) {
    auto step = step_job_of(40, {segment("", 2, {}), segment("", 1, {"hostname"})});
    ASSERT_TRUE(step) << step.status().message();
    ASSERT_EQ(step->parts.size(), 2u);
    EXPECT_EQ(step->parts[0].ntasks, 2u);
    EXPECT_EQ(step->argv_by_job.at(40), std::vector<std::string>{"hostname"});
    EXPECT_EQ(step->argv_by_job.at(41), std::vector<std::string>{"hostname"});
}

TEST_F(HetStep, ComponentsTheJobDoesNotHaveAreRefusedByName) {
    auto step = step_job_of(40, {segment("0,2", 0, {"a"})});
    ASSERT_FALSE(step);
    EXPECT_EQ(step.status().message(),
              "--het-group: invalid value '2' (accepted: the indexes of this job's components; "
              "SLURM_JOB_ID_HET_GROUP_2 is not set)");
    step = step_job_of(40, {segment("x", 0, {"a"})});
    ASSERT_FALSE(step);
    EXPECT_EQ(step.status().message(),
              "--het-group: invalid value 'x' (accepted: component indexes such as 1, 0,2 or 0-2)");
    step = step_job_of(40, {segment("0,1", 0, {"a"}), segment("", 0, {"b"})});
    ASSERT_FALSE(step);
    EXPECT_NE(step.status().message().find("one component for each part of srun A : B"),
              std::string::npos);
}

}  // namespace
}  // namespace cohort::cli
