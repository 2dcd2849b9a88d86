// The network part of the cluster configuration: a tree of switches (leaf switches hold
// nodes, upper switches hold switches), as Slurm's topology.conf for topology/tree, and blocks
// (fixed groups of nodes such as NVL72 racks), as its topology/block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/status.h"

namespace cohort {

struct SwitchConfig {
    std::string name;
    std::vector<std::string> nodes;     // a leaf switch's nodes
    std::vector<std::string> switches;  // an upper switch's children
};

struct BlockConfig {
    std::string name;
    std::vector<std::string> nodes;
};

struct NetworkConfig {
    std::vector<SwitchConfig> switches;
    std::vector<BlockConfig> blocks;
    // How long a job with --switches=N and no @max-wait waits for N leaf switches before it
    // takes any (Slurm's max_switch_wait).
    int64_t max_switch_wait_s = 300;

    bool empty() const { return switches.empty() && blocks.empty(); }
};

// Reads the key "network" of the config document: {"switches": [{"name", "nodes" | "switches"}],
// "blocks": [{"name", "nodes"}], "max_switch_wait"}; node and switch lists are hostlist
// strings. Checks that names are unique, every node exists in `cluster_nodes` and sits under
// at most one leaf switch and in at most one block, children exist, and the tree has no
// cycle. Errors name the key and the value.
Result<NetworkConfig> read_network(const nlohmann::json& doc,
                                   const std::vector<std::string>& cluster_nodes);
nlohmann::json write_network(const NetworkConfig& network);

// Where a node sits, as Slurm's SLURM_TOPOLOGY_ADDR and SLURM_TOPOLOGY_ADDR_PATTERN give it:
// {"spine.leaf1.node1", "switch.switch.node"}; {"node1", "node"} under no switch.
struct TopologyAddress {
    std::string address;
    std::string pattern;
};

TopologyAddress topology_address(const NetworkConfig& network, const std::string& node);

}  // namespace cohort
