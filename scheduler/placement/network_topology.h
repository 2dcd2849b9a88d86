// The cluster's network as the scheduling core sees it: the switch tree and the blocks over
// the snapshot's nodes, as plain indexes.
#pragma once

#include <string>
#include <vector>

#include "common/network_config.h"

namespace cohort::sched {

// The cluster's network over the snapshot's nodes. Empty: a flat network.
struct NetworkTopology {
    std::vector<std::string> switch_names;
    std::vector<int> switch_parent;  // per switch: the switch above it; -1 at the top
    std::vector<int> switch_level;   // 0 for a leaf switch; one more than its highest child
    std::vector<std::vector<int>> switch_leaves;  // per switch: the leaf switches under it
    std::vector<int> node_leaf;    // per snapshot node: its leaf switch; -1 when under none
    std::vector<int> node_block;   // per snapshot node: its block; -1 when in none
    std::vector<int> block_nodes;  // per block: how many nodes it has

    bool has_switches() const { return !switch_parent.empty(); }

    bool has_blocks() const { return !block_nodes.empty(); }

    bool empty() const { return !has_switches() && !has_blocks(); }
};

// The topology of `config` over the nodes named `node_names` (snapshot order); names the
// config lists but the snapshot lacks are left out. `config` is valid (read_network checked it).
NetworkTopology build_network(const NetworkConfig& config,
                              const std::vector<std::string>& node_names);

// Leaf switches the nodes hang from; each node under none counts as one.
int leaf_switches_spanned(const NetworkTopology& network, const std::vector<int>& nodes);

}  // namespace cohort::sched
