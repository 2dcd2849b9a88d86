// Reading, checking and writing the network topology of the cluster configuration.
#include "common/network_config.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "common/policy_config.h"

namespace cohort {
namespace {

using nlohmann::json;

Result<std::vector<std::string>> read_names(const json& object,
                                            const std::string& where,
                                            const char* key) {
    if (!object.contains(key)) {
        return std::vector<std::string>{};
    }
    if (!object.at(key).is_string()) {
        return Status::invalid(where + "." + key
                               + ": expected a hostlist string such as leaf[1-4]");
    }
    auto names = expand_hostlist(object.at(key).get<std::string>());
    if (!names) {
        return names.status().with_context(where + "." + key);
    }
    return names;
}

Result<std::string> read_name(const json& object, const std::string& where) {
    if (!object.is_object() || !object.contains("name") || !object.at("name").is_string()
        || object.at("name").get<std::string>().empty()) {
        return Status::invalid(where + ".name: missing (every entry needs a name)");
    }
    return object.at("name").get<std::string>();
}

Result<std::vector<SwitchConfig>> read_switches(const json& list) {
    std::vector<SwitchConfig> switches;
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string where = fmt::format("network.switches[{}]", i);
        auto name = read_name(list.at(i), where);
        if (!name) {
            return name.status();
        }
        SwitchConfig sw;
        sw.name = *name;
        auto nodes = read_names(list.at(i), where, "nodes");
        auto children = read_names(list.at(i), where, "switches");
        if (!nodes || !children) {
            return !nodes ? nodes.status() : children.status();
        }
        sw.nodes = std::move(*nodes);
        sw.switches = std::move(*children);
        if (sw.nodes.empty() == sw.switches.empty()) {
            return Status::invalid(where + " '" + sw.name
                    + "': give either \"nodes\" (a leaf switch) or \"switches\", not both or "
                      "neither");
        }
        switches.push_back(std::move(sw));
    }
    return switches;
}

// Every child named, no switch with two parents, and no cycle.
Status check_tree(const std::vector<SwitchConfig>& switches) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < switches.size(); ++i) {
        if (!index.emplace(switches[i].name, i).second) {
            return Status::invalid("network.switches: switch '" + switches[i].name
                                   + "' is defined twice");
        }
    }
    std::map<std::string, std::string> parent;
    for (const SwitchConfig& sw : switches) {
        for (const std::string& child : sw.switches) {
            if (index.count(child) == 0) {
                return Status::invalid("network.switches: switch '" + sw.name
                                       + "' names unknown switch '" + child + "'");
            }
            if (auto [it, fresh] = parent.emplace(child, sw.name); !fresh) {
                return Status::invalid("network.switches: switch '" + child + "' is under both '"
                                       + it->second + "' and '" + sw.name + "'");
            }
        }
    }
    for (const SwitchConfig& sw : switches) {
        std::string at = sw.name;
        for (size_t steps = 0; parent.count(at) != 0; ++steps) {
            if (steps > switches.size()) {
                return Status::invalid("network.switches: switch '" + sw.name
                                       + "' is its own ancestor (the switches must form a tree)");
            }
            at = parent.at(at);
        }
    }
    return Status::ok();
}

// Each node in `cluster_nodes`, and under at most one owner.
Status check_members(const std::string& what,
                     const std::string& owner,
                     const std::vector<std::string>& nodes,
                     const std::set<std::string>& cluster_nodes,
                     std::map<std::string, std::string>& owner_of) {
    for (const std::string& node : nodes) {
        if (cluster_nodes.count(node) == 0) {
            return Status::invalid("network." + what + " '" + owner + "': unknown node '" + node
                                   + "' (accepted: the cluster's nodes)");
        }
        if (auto [it, fresh] = owner_of.emplace(node, owner); !fresh) {
            return Status::invalid("network." + what + ": node '" + node + "' is in both '"
                                   + it->second + "' and '" + owner + "'");
        }
    }
    return Status::ok();
}

}  // namespace

Result<NetworkConfig> read_network(const json& doc, const std::vector<std::string>& cluster_nodes) {
    NetworkConfig network;
    if (!doc.contains("network")) {
        return network;
    }
    const json& net = doc.at("network");
    if (!net.is_object()) {
        return Status::invalid("network: expected an object with \"switches\" and/or \"blocks\"");
    }
    const std::set<std::string> known(cluster_nodes.begin(), cluster_nodes.end());
    auto switches = read_switches(net.value("switches", json::array()));
    if (!switches) {
        return switches.status();
    }
    network.switches = std::move(*switches);
    if (Status tree = check_tree(network.switches); !tree.is_ok()) {
        return tree;
    }
    std::map<std::string, std::string> leaf_of;
    for (const SwitchConfig& sw : network.switches) {
        if (Status s = check_members("switches", sw.name, sw.nodes, known, leaf_of); !s.is_ok()) {
            return s;
        }
    }
    const json blocks = net.value("blocks", json::array());
    std::map<std::string, std::string> block_of;
    std::set<std::string> block_names;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const std::string where = fmt::format("network.blocks[{}]", i);
        auto name = read_name(blocks.at(i), where);
        if (!name) {
            return name.status();
        }
        auto nodes = read_names(blocks.at(i), where, "nodes");
        if (!nodes) {
            return nodes.status();
        }
        if (nodes->empty()) {
            return Status::invalid(where + " '" + *name + "': \"nodes\" is missing or empty");
        }
        if (!block_names.insert(*name).second) {
            return Status::invalid("network.blocks: block '" + *name + "' is defined twice");
        }
        if (Status s = check_members("blocks", *name, *nodes, known, block_of); !s.is_ok()) {
            return s;
        }
        network.blocks.push_back({*name, std::move(*nodes)});
    }
    auto wait = read_duration(net, "max_switch_wait", network.max_switch_wait_s);
    if (!wait) {
        return wait.status().with_context("network");
    }
    if (*wait < 0) {
        return Status::invalid(fmt::format(
                "network.max_switch_wait: invalid value {} (accepted: 0 or more seconds)", *wait));
    }
    network.max_switch_wait_s = *wait;
    return network;
}

TopologyAddress topology_address(const NetworkConfig& network, const std::string& node) {
    TopologyAddress out{node, "node"};
    std::string below = node;
    bool is_node = true;
    // Upwards from the node: the switch that lists what is below, until none does.
    for (size_t level = 0; level <= network.switches.size(); ++level) {
        const SwitchConfig* parent = nullptr;
        for (const SwitchConfig& sw : network.switches) {
            const auto& children = is_node ? sw.nodes : sw.switches;
            if (std::find(children.begin(), children.end(), below) != children.end()) {
                parent = &sw;
                break;
            }
        }
        if (parent == nullptr) {
            break;
        }
        out.address = parent->name + "." + out.address;
        out.pattern = "switch." + out.pattern;
        below = parent->name;
        is_node = false;
    }
    return out;
}

json write_network(const NetworkConfig& network) {
    json switches = json::array();
    for (const SwitchConfig& sw : network.switches) {
        json entry = {{"name", sw.name}};
        if (!sw.nodes.empty()) {
            entry["nodes"] = compress_hostlist(sw.nodes);
        } else {
            entry["switches"] = compress_hostlist(sw.switches);
        }
        switches.push_back(std::move(entry));
    }
    json blocks = json::array();
    for (const BlockConfig& block : network.blocks) {
        blocks.push_back({{"name", block.name}, {"nodes", compress_hostlist(block.nodes)}});
    }
    return {{"switches", switches},
            {"blocks", blocks},
            {"max_switch_wait", network.max_switch_wait_s}};
}

}  // namespace cohort
