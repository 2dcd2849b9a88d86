// Network-aware placement end to end: four node agents under two leaf switches of a
// two-level tree (leaf1: node1-2, leaf2: node3-4, spine above both), from `cohort start
// --network FILE`.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

namespace fs = std::filesystem;

std::set<std::string> line_set(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            out.insert(line);
        }
    }
    return out;
}

class NetworkTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // One file per test process: ctest runs each test in its own process, side by side.
        network_file_ =
                new std::string(fs::temp_directory_path()
                                / ("cohort-network-test-" + std::to_string(getpid()) + ".json"));
        std::ofstream(*network_file_) << R"({"switches": [
            {"name": "leaf1", "nodes": "node[1-2]"},
            {"name": "leaf2", "nodes": "node[3-4]"},
            {"name": "spine", "switches": "leaf[1-2]"}]})";
        cluster_ = new LocalCluster(4, {"--cpus", "4", "--network", *network_file_});
    }

    static void TearDownTestSuite() {
        delete cluster_;
        cluster_ = nullptr;
        fs::remove(*network_file_);
        delete network_file_;
    }

    void SetUp() override { ASSERT_TRUE(cluster_->up()) << "the local instance did not start"; }

    void TearDown() override {
        if (HasFailure()) {
            cluster_->dump_logs();
        }
    }

    // A whole-node job that sleeps; a one-node job goes to the fullest leaf, node1 when all
    // are empty. Returns its id once it runs.
    uint64_t occupy_one_node() const {
        CommandResult submitted =
                cluster_->cohort({"batch", "--parsable", "-N1", "-c4", "--wrap", "sleep 120"});
        EXPECT_EQ(submitted.exit_code, 0) << submitted.err;
        const uint64_t id = std::stoull(submitted.out);
        for (int i = 0; i < 100 && cluster_->job_state(id) != "RUNNING"; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        EXPECT_EQ(cluster_->job_state(id), "RUNNING");
        return id;
    }

    void release(uint64_t id) const {
        cluster_->cohort({"cancel", std::to_string(id)});
        EXPECT_NE(cluster_->wait_final_state(id, std::chrono::seconds(30)), "");
    }

    static LocalCluster* cluster_;
    static std::string* network_file_;
};

LocalCluster* NetworkTest::cluster_ = nullptr;
std::string* NetworkTest::network_file_ = nullptr;

TEST_F(NetworkTest, ATwoNodeJobTakesAWholeLeafNotTheFirstFreeNodes) {
    const uint64_t busy = occupy_one_node();
    // First fit would give node2 and node3, one under each leaf.
    CommandResult result = cluster_->cohort({"run", "-N2", "-c4", "printenv", "SLURMD_NODENAME"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(line_set(result.out), (std::set<std::string>{"node3", "node4"}));
    release(busy);
}

TEST_F(NetworkTest, SwitchesHoldsTheJobUntilItsMaxWaitThenItRunsOnMore) {
    const uint64_t busy = occupy_one_node();
    // Three nodes never fit under one leaf of two. With a long wait the job stays pending and
    // says what it waits for.
    CommandResult held = cluster_->cohort(
            {"batch", "--parsable", "-N3", "-c4", "--switches=1@10:00", "--wrap", "true"});
    ASSERT_EQ(held.exit_code, 0) << held.err;
    const std::string held_id = std::to_string(std::stoull(held.out));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    CommandResult shown = cluster_->cohort({"show", "job", held_id});
    EXPECT_NE(shown.out.find("JobState=PENDING"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("Switches=1@10:00"), std::string::npos) << shown.out;
    cluster_->cohort({"cancel", held_id});

    // With a wait of 3 s it runs on node2-4 once the wait is over.
    const auto begin = std::chrono::steady_clock::now();
    CommandResult result = cluster_->cohort(
            {"run", "-N3", "-c4", "--switches=1@0:03", "printenv", "SLURMD_NODENAME"});
    const auto waited = std::chrono::steady_clock::now() - begin;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(line_set(result.out), (std::set<std::string>{"node2", "node3", "node4"}));
    EXPECT_GE(waited, std::chrono::milliseconds(2500));
    release(busy);
}

TEST_F(NetworkTest, TasksSeeWhereTheirNodeSits) {
    CommandResult result = cluster_->cohort(
            {"run", "-N4", "sh", "-c", "echo $SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(line_set(result.out),
              (std::set<std::string>{"spine.leaf1.node1 switch.switch.node",
                                     "spine.leaf1.node2 switch.switch.node",
                                     "spine.leaf2.node3 switch.switch.node",
                                     "spine.leaf2.node4 switch.switch.node"}));
}

TEST_F(NetworkTest, BadNetworkOptionsAreRefusedWithTheValue) {
    CommandResult result = cluster_->cohort({"run", "-N2", "--switches=0", "true"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("--switches: invalid value '0'"), std::string::npos) << result.err;
    result = cluster_->cohort({"run", "-N3", "--segment=2", "true"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("--segment: 2 nodes per segment must divide the node count (-N 3)"),
              std::string::npos)
            << result.err;
}

}  // namespace
}  // namespace cohort::testing
