// The controller's node table: liveness by the injected clock, and what jobs hold.
#include "scheduler/ctld/node_table.h"

#include <gtest/gtest.h>

#include "tests/fixtures/manual_clock.h"

namespace cohort::ctld {
namespace {

ClusterConfig two_nodes() {
    ClusterConfig config;
    config.nodes = {"n1", "n2"};
    config.partitions = {PartitionConfig{}};
    config.partitions[0].name = "batch";
    config.partitions[0].nodes = {"n1", "n2"};
    return config;
}

void register_node(NodeTable& table, const std::string& name, const Clock& clock) {
    NodeEntry* node = table.find(name);
    ASSERT_NE(node, nullptr);
    node->registered = true;
    node->responding = true;
    node->info.resources.cpus = 4;
    refresh_node_state(*node);
    table.heard_from(*node, clock);
}

TEST(NodeTable, ANodeIsSilentOnlyOnceTheTimeoutHasPassedSinceItWasLastHeard) {
    testing::ManualClock clock;
    NodeTable table(two_nodes());
    register_node(table, "n1", clock);
    const int64_t timeout_ms = 30'000;

    clock.advance_ms(timeout_ms);  // exactly the timeout: not yet
    EXPECT_TRUE(table.silent_nodes(clock.steady_ms(), timeout_ms).empty());
    clock.advance_ms(1);
    auto silent = table.silent_nodes(clock.steady_ms(), timeout_ms);
    ASSERT_EQ(silent.size(), 1u);  // n2 never registered and holds no job: not expected
    EXPECT_EQ(silent[0]->info.name, "n1");

    table.heard_from(*table.find("n1"), clock);  // a heartbeat resets it
    clock.advance_ms(timeout_ms);
    EXPECT_TRUE(table.silent_nodes(clock.steady_ms(), timeout_ms).empty());
    table.find("n1")->info.state = NodeState::kDown;  // already down: not reported again
    clock.advance_ms(timeout_ms * 10);
    EXPECT_TRUE(table.silent_nodes(clock.steady_ms(), timeout_ms).empty());
}

TEST(NodeTable, ClaimAndReleaseMoveTheNodeStateThroughMixedAndAllocated) {
    testing::ManualClock clock;
    NodeTable table(two_nodes());
    register_node(table, "n1", clock);
    register_node(table, "n2", clock);
    Job job;
    job.job_id = 7;
    job.nodes = {"n2"};
    job.cpus_per_node = {2};
    table.claim(job);
    EXPECT_EQ(table.find("n2")->info.state, NodeState::kMixed);
    EXPECT_EQ(table.find("n2")->info.cpus_alloc, 2);
    job.job_id = 8;
    table.claim(job);
    EXPECT_EQ(table.find("n2")->info.state, NodeState::kAllocated);
    table.release(job);
    table.release(job);  // twice: counted once
    EXPECT_EQ(table.find("n2")->info.cpus_alloc, 2);
    EXPECT_EQ(table.index_of("n2"), 1);
    EXPECT_EQ(table.index_of("n9"), -1);
    EXPECT_EQ(table.total_cpus(), 8);
    const auto capacities = table.capacities();
    ASSERT_EQ(capacities.size(), 2u);
    EXPECT_TRUE(capacities[1].up);
    EXPECT_EQ(table.find("n1")->info.partitions, std::vector<std::string>{"batch"});
}

TEST(NodeTable, ADrainedNodeTakesNoJobAndShowsWhetherItStillRunsOne) {
    testing::ManualClock clock;
    NodeTable table(two_nodes());
    register_node(table, "n1", clock);
    NodeEntry& n1 = *table.find("n1");
    n1.info.drain = true;
    EXPECT_FALSE(table.capacities()[0].up);
    EXPECT_EQ(node_state_label(n1.info.state, n1.info.drain, /*has_jobs=*/false), "DRAINED");
    EXPECT_EQ(node_state_label(NodeState::kMixed, true, true), "DRAINING");
    EXPECT_EQ(node_state_label(NodeState::kDown, true, false), "DOWN");
    EXPECT_EQ(node_state_label(NodeState::kIdle, false, false), "IDLE");
}

}  // namespace
}  // namespace cohort::ctld
