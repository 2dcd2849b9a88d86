// Network-aware placement on a recorded-style two-level tree: 16 nodes, four leaf switches of
// four nodes, two pods of two leaves, one top switch; and on blocks of four nodes. How the
// planning pass places jobs on a network end to end (--switches and its wait, one leaf per
// job) is in the golden scenarios (tests/data/scenarios/).
#include "scheduler/placement/network_fit.h"

#include <set>

#include <gtest/gtest.h>

namespace cohort::sched {
namespace {

std::vector<std::string> node_names(int count) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
        names.push_back("n" + std::to_string(i));
    }
    return names;
}

std::vector<std::string> nodes_named(int first, int count) {
    std::vector<std::string> names;
    for (int i = first; i < first + count; ++i) {
        names.push_back("n" + std::to_string(i));
    }
    return names;
}

NetworkConfig two_level_tree() {
    NetworkConfig config;
    for (int leaf = 0; leaf < 4; ++leaf) {
        config.switches.push_back({"leaf" + std::to_string(leaf), nodes_named(leaf * 4, 4), {}});
    }
    config.switches.push_back({"pod0", {}, {"leaf0", "leaf1"}});
    config.switches.push_back({"pod1", {}, {"leaf2", "leaf3"}});
    config.switches.push_back({"top", {}, {"pod0", "pod1"}});
    return config;
}

NetworkConfig four_blocks() {
    NetworkConfig config;
    for (int block = 0; block < 4; ++block) {
        config.blocks.push_back({"b" + std::to_string(block), nodes_named(block * 4, 4)});
    }
    return config;
}

std::vector<int> all_nodes() {
    std::vector<int> out;
    for (int i = 0; i < 16; ++i) {
        out.push_back(i);
    }
    return out;
}

ResourceRequest whole_nodes(uint32_t count) {
    ResourceRequest request;
    request.nodes_min = count;
    request.ntasks_per_node = 1;
    return request;
}

// One task per node; `busy` nodes take none.
TaskCapacity free_except(std::set<int> busy) {
    return [busy = std::move(busy)](int node) -> uint32_t {
        return busy.count(node) ? 0 : 1;
    };
}

std::set<int> leaves_of(const NetworkTopology& network, const Placement& placement) {
    std::set<int> leaves;
    for (int node : placement.nodes) {
        leaves.insert(network.node_leaf[static_cast<size_t>(node)]);
    }
    return leaves;
}

std::set<int> nodes_of(const Placement& placement) {
    return {placement.nodes.begin(), placement.nodes.end()};
}

TEST(NetworkTopology, IndexesTheTree) {
    const NetworkTopology net = build_network(two_level_tree(), node_names(16));
    ASSERT_EQ(net.switch_names.size(), 7u);
    EXPECT_EQ(net.switch_level, (std::vector<int>{0, 0, 0, 0, 1, 1, 2}));
    EXPECT_EQ(net.switch_parent, (std::vector<int>{4, 4, 5, 5, 6, 6, -1}));
    EXPECT_EQ(net.switch_leaves[5], (std::vector<int>{2, 3}));
    EXPECT_EQ(net.switch_leaves[6].size(), 4u);
    EXPECT_EQ(net.node_leaf[0], 0);
    EXPECT_EQ(net.node_leaf[13], 3);
    EXPECT_EQ(leaf_switches_spanned(net, {0, 1, 5, 13}), 3);
}

TEST(NetworkFit, AJobThatFitsOneLeafGetsOneLeafNotTheFirstFreeNodes) {
    const NetworkTopology net = build_network(two_level_tree(), node_names(16));
    // leaf0 has 3 free nodes, leaf1 2: first fit would span both; leaf2 holds all 4.
    const TaskCapacity cap = free_except({0, 4, 5});
    auto placement = place_on_network(whole_nodes(4), all_nodes(), cap, net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(nodes_of(*placement), (std::set<int>{8, 9, 10, 11}));
    EXPECT_EQ(fewest_leaf_switches(whole_nodes(4), all_nodes(), cap, net), 1);
}

TEST(NetworkFit, TwoLeavesComeFromUnderOnePodWhenOneAllowsIt) {
    const NetworkTopology net = build_network(two_level_tree(), node_names(16));
    // Free: leaf0 3, leaf1 2, leaf2 3, leaf3 3. Six nodes need two leaves; only pod1 has two
    // leaves with six free nodes between them.
    const TaskCapacity cap = free_except({0, 4, 5, 8, 12});
    auto placement = place_on_network(whole_nodes(6), all_nodes(), cap, net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(leaves_of(net, *placement), (std::set<int>{2, 3}));
}

TEST(NetworkFit, TheLastLeafIsTheSmallestThatCompletesTheJob) {
    const NetworkTopology net = build_network(two_level_tree(), node_names(16));
    // Free: leaf0 4, leaf1 1, pod1 all 8. Five nodes: pod0 has least room and holds it on two
    // leaves, with leaf1's one node as the tail, so pod1 stays whole.
    const TaskCapacity cap = free_except({4, 5, 6});
    auto placement = place_on_network(whole_nodes(5), all_nodes(), cap, net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(nodes_of(*placement), (std::set<int>{0, 1, 2, 3, 7}));
}

TEST(NetworkFit, SwitchLimitHoldsTheJobOnlyWhileItBinds) {
    const NetworkTopology net = build_network(two_level_tree(), node_names(16));
    ResourceRequest request = whole_nodes(4);
    request.max_leaf_switches = 1;
    const TaskCapacity cap = free_except({0, 4, 8, 12});  // three free per leaf
    EXPECT_FALSE(place_on_network(request, all_nodes(), cap, net, true));
    auto placement = place_on_network(request, all_nodes(), cap, net, false);
    ASSERT_TRUE(placement);
    EXPECT_EQ(leaf_switches_spanned(net, placement->nodes), 2);
}

TEST(NetworkFit, AOneNodeCpuJobGoesToTheFullestLeaf) {
    const NetworkTopology net = build_network(two_level_tree(), node_names(16));
    ResourceRequest request;
    request.ntasks = 1;
    auto placement = place_on_network(request, all_nodes(), free_except({8, 9, 10}), net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->nodes, (std::vector<int>{11}));
}

TEST(NetworkFit, SegmentsStayInsideBlocks) {
    const NetworkTopology net = build_network(four_blocks(), node_names(16));
    ResourceRequest request = whole_nodes(4);
    request.segment_nodes = 2;
    // b0 has 2 free, b1 3, b2 and b3 4: the fullest blocks give the segments.
    const TaskCapacity cap = free_except({0, 1, 4});
    auto placement = place_on_network(request, all_nodes(), cap, net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(nodes_of(*placement), (std::set<int>{2, 3, 5, 6}));

    request.segment_nodes = 4;
    placement = place_on_network(request, all_nodes(), cap, net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(nodes_of(*placement), (std::set<int>{8, 9, 10, 11}));

    // No block has four free nodes: a segment of four cannot start now.
    EXPECT_FALSE(place_on_network(request, all_nodes(), free_except({0, 4, 8, 12}), net, true));
}

TEST(NetworkFit, WithoutSegmentsAJobTakesTheFullestBlockThatHoldsIt) {
    const NetworkTopology net = build_network(four_blocks(), node_names(16));
    auto placement =
            place_on_network(whole_nodes(3), all_nodes(), free_except({0, 1, 4}), net, true);
    ASSERT_TRUE(placement);
    EXPECT_EQ(nodes_of(*placement), (std::set<int>{5, 6, 7}));
}

TEST(NetworkFit, AFlatNetworkPlacesAsBefore) {
    const TaskCapacity cap = free_except({0});
    auto plain = place_tasks(whole_nodes(3), all_nodes(), cap);
    auto flat = place_on_network(whole_nodes(3), all_nodes(), cap, NetworkTopology{}, true);
    ASSERT_TRUE(plain && flat);
    EXPECT_EQ(plain->nodes, flat->nodes);
}

}  // namespace
}  // namespace cohort::sched
