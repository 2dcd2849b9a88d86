// A step's shape inside its job's allocation.
#include "scheduler/step_layout.h"

#include <gtest/gtest.h>

namespace cohort::sched {
namespace {

StepAllocation three_nodes_of_four_cpus() {
    StepAllocation job;
    job.job_id = 12;
    job.nodes = {"n1", "n2", "n3"};
    job.cpus_per_node = {4, 4, 4};
    job.tasks_per_node = {2, 2, 2};
    job.ntasks = 6;
    job.held_by_steps = {0, 0, 0};
    return job;
}

TEST(StepLayout, AStepThatAsksNothingTakesTheJobsOwnGeometry) {
    auto shape = lay_out_step(three_nodes_of_four_cpus(), {});
    ASSERT_TRUE(shape) << shape.status().message();
    EXPECT_EQ(shape->nodes, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(shape->tasks_per_node, (std::vector<uint32_t>{2, 2, 2}));
    EXPECT_EQ(shape->cpus_per_task, 1u);
}

TEST(StepLayout, FewerNodesGoWhereOtherStepsHoldTheFewestCpus) {
    StepAllocation job = three_nodes_of_four_cpus();
    job.held_by_steps = {3, 0, 1};
    StepShapeRequest request;
    request.ntasks = 2;
    request.cpus_per_task = 2;
    auto shape = lay_out_step(job, request);
    ASSERT_TRUE(shape) << shape.status().message();
    EXPECT_EQ(shape->nodes, (std::vector<size_t>{1, 2}));
    EXPECT_EQ(shape->tasks_per_node, (std::vector<uint32_t>{1, 1}));
}

TEST(StepLayout, TooBigNeverFitsButHeldCpusOnlyMakeItWait) {
    StepAllocation job = three_nodes_of_four_cpus();
    StepShapeRequest request;
    request.ntasks = 3;
    request.cpus_per_task = 8;
    auto never = lay_out_step(job, request);
    ASSERT_FALSE(never);
    EXPECT_EQ(never.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(never.status().message(),
              "--ntasks: 1 tasks x 8 CPUs on n1 exceed the 4 CPUs job "
              "12 holds there");

    job.held_by_steps = {4, 4, 4};
    request.cpus_per_task = 1;
    auto later = lay_out_step(job, request);
    ASSERT_FALSE(later);
    EXPECT_EQ(later.status().code(), StatusCode::kUnavailable);
    request.overlap = true;
    EXPECT_TRUE(lay_out_step(job, request));
}

TEST(StepLayout, ANodelistOutsideTheAllocationIsNamed) {
    StepShapeRequest request;
    request.nodelist = "n[2-4]";
    auto shape = lay_out_step(three_nodes_of_four_cpus(), request);
    ASSERT_FALSE(shape);
    EXPECT_EQ(shape.status().message(),
              "--nodelist: node 'n4' is not in the allocation of job 12 (accepted: n[1-3])");
    request.nodelist = "n[2-3]";
    shape = lay_out_step(three_nodes_of_four_cpus(), request);
    ASSERT_TRUE(shape);
    EXPECT_EQ(shape->nodes, (std::vector<size_t>{1, 2}));
}

}  // namespace
}  // namespace cohort::sched
