// Open steps and the CPUs they hold in their job.
#include "scheduler/ctld/step_table.h"

#include <gtest/gtest.h>

namespace cohort::ctld {
namespace {

protocol::StepRecord step(uint32_t id,
                          std::vector<std::string> nodes,
                          std::vector<uint32_t> cpus,
                          bool overlap = false) {
    protocol::StepRecord s;
    s.job_id = 5;
    s.step_id = id;
    s.nodes = std::move(nodes);
    s.cpus_per_node = std::move(cpus);
    s.overlap = overlap;
    return s;
}

TEST(StepTable, OpenStepsHoldTheirCpusUntilClosedAndOverlapHoldsNone) {
    Job job;
    job.job_id = 5;
    job.nodes = {"a", "b"};
    StepTable steps;
    steps.open(step(0, {"b"}, {3}));
    steps.open(step(1, {"a", "b"}, {1, 1}));
    steps.open(step(2, {"a"}, {4}, true));
    EXPECT_EQ(steps.cpus_held(job), (std::vector<uint32_t>{1, 4}));
    ASSERT_TRUE(steps.close(5, 0));
    EXPECT_FALSE(steps.close(5, 0));
    EXPECT_EQ(steps.cpus_held(job), (std::vector<uint32_t>{1, 1}));
    EXPECT_EQ(steps.close_all_of(5).size(), 2u);
    EXPECT_FALSE(steps.is_open(5, 1));
    EXPECT_EQ(steps.cpus_held(job), (std::vector<uint32_t>{0, 0}));
}

}  // namespace
}  // namespace cohort::ctld
