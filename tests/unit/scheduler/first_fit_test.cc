// The first-fit pass and the never/not-now checks of the pure core.
#include <gtest/gtest.h>

#include "scheduler/first_fit.h"
#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

std::vector<NodeCapacity> nodes(int count, int cpus) {
    std::vector<NodeCapacity> out;
    for (int i = 0; i < count; ++i) {
        out.push_back({"node" + std::to_string(i + 1), cpus, 8192, true, 0, 0});
    }
    return out;
}

std::vector<int> all(int count) {
    std::vector<int> out;
    for (int i = 0; i < count; ++i) {
        out.push_back(i);
    }
    return out;
}

PendingJob job(uint64_t id, ResourceRequest request, int64_t submit = 0) {
    return {id, submit, 0, request, all(4)};
}

TEST(NodeFit, FixedNodeCountSpreadsTasksEvenly) {
    ResourceRequest request;
    request.nodes_min = 2;
    request.ntasks = 3;
    auto placement = fit_now(request, nodes(4, 4), all(4));
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->tasks_per_node, (std::vector<uint32_t>{2, 1}));
}

TEST(NodeFit, WithoutNodeCountTasksFillNodesInOrder) {
    ResourceRequest request;
    request.ntasks = 6;
    auto placement = fit_now(request, nodes(4, 4), all(4));
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->nodes, (std::vector<int>{0, 1}));
    EXPECT_EQ(placement->tasks_per_node, (std::vector<uint32_t>{4, 2}));
}

TEST(NodeFit, BusyNodesAreSkipped) {
    auto cluster = nodes(4, 2);
    cluster[0].cpus_used = 2;
    ResourceRequest request;
    auto placement = fit_now(request, cluster, all(4));
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->nodes, (std::vector<int>{1}));
}

TEST(NodeFit, InfeasibleNamesWhatWasAskedAndWhatExists) {
    ResourceRequest request;
    request.nodes_min = 9;
    Status status = check_feasible(request, nodes(4, 2), all(4));
    EXPECT_EQ(status.code(), StatusCode::kInfeasible);
    EXPECT_NE(status.message().find("9 node(s)"), std::string::npos);
    EXPECT_NE(status.message().find("4 node(s) of at most 2 CPUs"), std::string::npos);
    request.nodes_min = 0;
    request.cpus_per_task = 3;
    EXPECT_FALSE(check_feasible(request, nodes(4, 2), all(4)));
    request.cpus_per_task = 2;
    EXPECT_TRUE(check_feasible(request, nodes(4, 2), all(4)));
}

TEST(Plan, StartsInPriorityOrderAndReportsWhyOthersWait) {
    Snapshot snapshot;
    snapshot.now = 1000;
    snapshot.nodes = nodes(1, 2);
    ResourceRequest two;
    two.ntasks = 2;
    snapshot.pending = {job(2, two, 500), job(1, two, 100), job(3, ResourceRequest{}, 900)};
    for (auto& p : snapshot.pending) {
        p.eligible_nodes = {0};
    }
    Decisions decisions = plan(snapshot);
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].job_id, 1u);  // oldest first
    ASSERT_EQ(decisions.waits.size(), 2u);
    EXPECT_EQ(decisions.waits[0].job_id, 2u);
    EXPECT_EQ(decisions.waits[0].reason, WaitReason::kResources);
    EXPECT_EQ(decisions.waits[1].reason, WaitReason::kPriority);
}

TEST(Plan, NiceLowersPriority) {
    PendingJob a{1, 0, 0, {}, {0}};
    PendingJob b{2, 0, 100, {}, {0}};
    EXPECT_GT(job_priority(a, 60), job_priority(b, 60));
}

TEST(Plan, DoesNotOverCommitANode) {
    Snapshot snapshot;
    snapshot.nodes = nodes(2, 2);
    for (uint64_t id = 1; id <= 6; ++id) {
        snapshot.pending.push_back({id, 0, 0, {}, {0, 1}});
    }
    Decisions decisions = plan(snapshot);
    EXPECT_EQ(decisions.starts.size(), 4u);
    EXPECT_EQ(decisions.waits.size(), 2u);
}

}  // namespace
}  // namespace cohort::sched
