// The "network" key of the cluster configuration: a switch tree and blocks.
#include "common/network_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cohort {
namespace {

using nlohmann::json;

const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3"};

Result<NetworkConfig> read(const char* text) {
    return read_network(json::parse(text), kNodes);
}

TEST(NetworkConfig, ReadsATreeAndBlocksAndWritesThemBack) {
    auto network = read(R"({"network": {
        "switches": [{"name": "leaf0", "nodes": "n[0-1]"}, {"name": "leaf1", "nodes": "n[2-3]"},
                     {"name": "spine", "switches": "leaf[0-1]"}],
        "blocks": [{"name": "rack0", "nodes": "n[0-3]"}],
        "max_switch_wait": "00:10:00"}})");
    ASSERT_TRUE(network) << network.status().message();
    ASSERT_EQ(network->switches.size(), 3u);
    EXPECT_EQ(network->switches[1].nodes, (std::vector<std::string>{"n2", "n3"}));
    EXPECT_EQ(network->switches[2].switches, (std::vector<std::string>{"leaf0", "leaf1"}));
    EXPECT_EQ(network->blocks.at(0).nodes.size(), 4u);
    EXPECT_EQ(network->max_switch_wait_s, 600);

    auto again = read_network(json{{"network", write_network(*network)}}, kNodes);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->switches.size(), 3u);
    EXPECT_EQ(again->switches[2].switches, network->switches[2].switches);
    EXPECT_EQ(again->max_switch_wait_s, 600);
}

TEST(NetworkConfig, TopologyAddressNamesTheSwitchesAboveANode) {
    auto network = read(R"({"network": {
        "switches": [{"name": "leaf0", "nodes": "n[0-1]"}, {"name": "leaf1", "nodes": "n2"},
                     {"name": "spine", "switches": "leaf[0-1]"}]}})");
    ASSERT_TRUE(network) << network.status().message();
    const TopologyAddress n1 = topology_address(*network, "n1");
    EXPECT_EQ(n1.address, "spine.leaf0.n1");
    EXPECT_EQ(n1.pattern, "switch.switch.node");
    const TopologyAddress n3 = topology_address(*network, "n3");
    EXPECT_EQ(n3.address, "n3");
    EXPECT_EQ(n3.pattern, "node");
}

TEST(NetworkConfig, NoNetworkKeyIsAFlatNetwork) {
    auto network = read(R"({"nodes": "n[0-3]"})");
    ASSERT_TRUE(network);
    EXPECT_TRUE(network->empty());
}

TEST(NetworkConfig, RejectsBadTreesWithTheKeyAndValue) {
    const std::vector<std::pair<const char*, const char*>> cases = {
            {R"({"network": {"switches": [{"name": "s", "nodes": "n9"}]}})", "unknown node 'n9'"},
            {R"({"network": {"switches": [{"name": "a", "nodes": "n0"},
                                          {"name": "b", "nodes": "n0"}]}})",
             "node 'n0' is in both 'a' and 'b'"},
            {R"({"network": {"switches": [{"name": "a", "nodes": "n0"},
                                          {"name": "a", "nodes": "n1"}]}})",
             "switch 'a' is defined twice"},
            {R"({"network": {"switches": [{"name": "a", "switches": "b"},
                                          {"name": "b", "switches": "a"}]}})",
             "its own ancestor"},
            {R"({"network": {"switches": [{"name": "a", "nodes": "n0"},
                                          {"name": "x", "switches": "a"},
                                          {"name": "y", "switches": "a"}]}})",
             "switch 'a' is under both 'x' and 'y'"},
            {R"({"network": {"switches": [{"name": "top", "switches": "leaf9"}]}})",
             "unknown switch 'leaf9'"},
            {R"({"network": {"switches": [{"name": "s"}]}})", "give either \"nodes\""},
            {R"({"network": {"switches": [{"nodes": "n0"}]}})", "network.switches[0].name"},
            {R"({"network": {"blocks": [{"name": "b", "nodes": "n[0-1]"},
                                        {"name": "c", "nodes": "n1"}]}})",
             "node 'n1' is in both 'b' and 'c'"},
            {R"({"network": {"max_switch_wait": "soon"}})", "max_switch_wait"},
            {R"({"network": []})", "network: expected an object"},
    };
    for (const auto& [text, expected] : cases) {
        auto network = read(text);
        ASSERT_FALSE(network) << text;
        EXPECT_NE(network.status().message().find(expected), std::string::npos)
                << network.status().message();
    }
}

}  // namespace
}  // namespace cohort
