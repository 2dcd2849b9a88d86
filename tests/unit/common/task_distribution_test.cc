// Rank-to-node distributions: block, cyclic and plane=N over per-node task counts.
#include "common/task_distribution.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TaskDistribution parsed(const std::string& text) {
    auto dist = parse_distribution("--distribution", text);
    EXPECT_TRUE(dist) << dist.status().message();
    return dist ? *dist : TaskDistribution{};
}

TEST(TaskDistribution, ParsesBlockCyclicAndPlane) {
    EXPECT_EQ(parsed("").name(), "block");
    EXPECT_EQ(parsed("block").name(), "block");
    EXPECT_EQ(parsed("cyclic").name(), "cyclic");
    EXPECT_EQ(parsed("plane=4").name(), "plane=4");
    EXPECT_EQ(parsed("plane=4").slurm_name(), "plane");
}

TEST(TaskDistribution, RejectsAnythingElseNamingFieldValueAndAccepted) {
    for (const char* bad : {"Cyclic", "plane", "plane=0", "plane=x", "arbitrary", "block:cyclic",
                            "cyclic,Pack", "plane=99999999999"}) {
        auto dist = parse_distribution("--distribution", bad);
        ASSERT_FALSE(dist) << bad;
        const std::string& message = dist.status().message();
        EXPECT_EQ(message.rfind("--distribution: invalid value '" + std::string(bad) + "'", 0), 0u)
                << message;
        EXPECT_NE(message.find("accepted: block, cyclic, plane=N"), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(TaskDistribution, BlockFillsEachNodeInTurn) {
    RankMap map = map_ranks({2, 2}, parsed("block"));
    EXPECT_EQ(map.ranks_on_node, (std::vector<std::vector<uint32_t>>{{0, 1}, {2, 3}}));
    EXPECT_EQ(map.node_of, (std::vector<uint32_t>{0, 0, 1, 1}));
    EXPECT_EQ(map.local_of, (std::vector<uint32_t>{0, 1, 0, 1}));
}

TEST(TaskDistribution, CyclicDealsOneRankPerNode) {
    RankMap map = map_ranks({2, 2}, parsed("cyclic"));
    EXPECT_EQ(map.ranks_on_node, (std::vector<std::vector<uint32_t>>{{0, 2}, {1, 3}}));
    EXPECT_EQ(map.node_of, (std::vector<uint32_t>{0, 1, 0, 1}));
    EXPECT_EQ(map.local_of, (std::vector<uint32_t>{0, 0, 1, 1}));
    // Uneven counts: a full node is skipped.
    map = map_ranks({1, 3}, parsed("cyclic"));
    EXPECT_EQ(map.ranks_on_node, (std::vector<std::vector<uint32_t>>{{0}, {1, 2, 3}}));
    map = map_ranks(distribution_counts(5, 2, parsed("cyclic")), parsed("cyclic"));
    EXPECT_EQ(map.ranks_on_node, (std::vector<std::vector<uint32_t>>{{0, 2, 4}, {1, 3}}));
}

TEST(TaskDistribution, PlaneDealsBlocksOfN) {
    const TaskDistribution plane = parsed("plane=2");
    EXPECT_EQ(distribution_counts(8, 2, plane), (std::vector<uint32_t>{4, 4}));
    EXPECT_EQ(distribution_counts(6, 2, plane), (std::vector<uint32_t>{4, 2}));
    EXPECT_EQ(distribution_counts(3, 3, plane), (std::vector<uint32_t>{2, 1, 0}));
    RankMap map = map_ranks({4, 2}, plane);
    EXPECT_EQ(map.ranks_on_node, (std::vector<std::vector<uint32_t>>{{0, 1, 4, 5}, {2, 3}}));
}

TEST(TaskDistribution, EvenCountsPutTheExtraTasksFirst) {
    EXPECT_EQ(distribution_counts(5, 2, parsed("block")), (std::vector<uint32_t>{3, 2}));
    EXPECT_EQ(distribution_counts(4, 4, parsed("cyclic")), (std::vector<uint32_t>{1, 1, 1, 1}));
    EXPECT_TRUE(distribution_counts(4, 0, parsed("block")).empty());
}

}  // namespace
}  // namespace cohort
