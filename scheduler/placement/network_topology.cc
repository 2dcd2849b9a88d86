// Turning the configured switch tree and blocks into indexes over the snapshot's nodes.
#include "scheduler/placement/network_topology.h"

#include <algorithm>
#include <map>
#include <set>

namespace cohort::sched {
namespace {

// Levels from the leaves up: a switch sits one above its highest child.
int level_of(int sw, const std::vector<std::vector<int>>& children, std::vector<int>& level) {
    auto& known = level[static_cast<size_t>(sw)];
    if (known >= 0) {
        return known;
    }
    int highest = -1;
    for (int child : children[static_cast<size_t>(sw)]) {
        highest = std::max(highest, level_of(child, children, level));
    }
    known = highest + 1;
    return known;
}

}  // namespace

NetworkTopology build_network(const NetworkConfig& config,
                              const std::vector<std::string>& node_names) {
    NetworkTopology network;
    std::map<std::string, int> node_index;
    for (size_t i = 0; i < node_names.size(); ++i) {
        node_index.emplace(node_names[i], static_cast<int>(i));
    }
    network.node_leaf.assign(node_names.size(), -1);
    network.node_block.assign(node_names.size(), -1);

    std::map<std::string, int> switch_index;
    for (const SwitchConfig& sw : config.switches) {
        switch_index.emplace(sw.name, static_cast<int>(network.switch_names.size()));
        network.switch_names.push_back(sw.name);
    }
    const size_t count = config.switches.size();
    network.switch_parent.assign(count, -1);
    std::vector<std::vector<int>> children(count);
    for (size_t s = 0; s < count; ++s) {
        for (const std::string& child : config.switches[s].switches) {
            const int c = switch_index.at(child);
            network.switch_parent[static_cast<size_t>(c)] = static_cast<int>(s);
            children[s].push_back(c);
        }
        for (const std::string& node : config.switches[s].nodes) {
            if (auto it = node_index.find(node); it != node_index.end()) {
                network.node_leaf[static_cast<size_t>(it->second)] = static_cast<int>(s);
            }
        }
    }
    network.switch_level.assign(count, -1);
    network.switch_leaves.resize(count);
    for (size_t s = 0; s < count; ++s) {
        const int sw = static_cast<int>(s);
        if (level_of(sw, children, network.switch_level) == 0) {
            for (int at = sw; at >= 0; at = network.switch_parent[static_cast<size_t>(at)]) {
                network.switch_leaves[static_cast<size_t>(at)].push_back(sw);
            }
        }
    }
    for (size_t b = 0; b < config.blocks.size(); ++b) {
        int members = 0;
        for (const std::string& node : config.blocks[b].nodes) {
            if (auto it = node_index.find(node); it != node_index.end()) {
                network.node_block[static_cast<size_t>(it->second)] = static_cast<int>(b);
                ++members;
            }
        }
        network.block_nodes.push_back(members);
    }
    return network;
}

int leaf_switches_spanned(const NetworkTopology& network, const std::vector<int>& nodes) {
    std::set<int> leaves;
    int unswitched = 0;
    for (int node : nodes) {
        const size_t n = static_cast<size_t>(node);
        const int leaf = n < network.node_leaf.size() ? network.node_leaf[n] : -1;
        if (leaf < 0) {
            ++unswitched;
        } else {
            leaves.insert(leaf);
        }
    }
    return static_cast<int>(leaves.size()) + unswitched;
}

}  // namespace cohort::sched
