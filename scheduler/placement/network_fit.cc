// Network-aware node choice. Nodes are grouped by leaf switch (or block); a job takes the
// fewest groups, found greedily from the group with the most room down, which is the
// minimum when groups are ranked by what they can give this job. Domains (a switch and
// everything under it, or one block) are then tried from the lowest level up and from the
// least free up, and the first that holds the job on that many groups wins.
#include "scheduler/placement/network_fit.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>

namespace cohort::sched {
namespace {

struct Group {
    std::vector<int> nodes;  // eligible nodes with room, in the preferred order
    uint64_t room = 0;       // tasks they could take, each node at most the job's share
};

using Groups = std::vector<const Group*>;

struct Domain {
    int level = 0;
    uint64_t room = 0;
    Groups groups;
};

uint32_t total_tasks(const ResourceRequest& r) {
    const uint32_t nodes = std::max<uint32_t>(r.nodes_min, 1);
    if (r.ntasks > 0) {
        return r.ntasks;
    }
    return r.ntasks_per_node > 0 ? r.ntasks_per_node * nodes : nodes;
}

// The most tasks one node needs to take: the even share with -N, else all of them.
uint32_t share_per_node(const ResourceRequest& r) {
    const uint32_t tasks = total_tasks(r);
    return r.nodes_min > 0 ? (tasks + r.nodes_min - 1) / r.nodes_min : tasks;
}

class Fitter {
public:
    Fitter(const ResourceRequest& request, const TaskCapacity& capacity)
        : request_(request), capacity_(capacity) {}

    std::optional<Placement> place(const Groups& groups) const {
        std::vector<int> nodes;
        for (const Group* g : groups) {
            nodes.insert(nodes.end(), g->nodes.begin(), g->nodes.end());
        }
        return place_tasks(request_, nodes, capacity_);
    }

    // The groups, most room first, until the job fits; nullopt past `max_groups`.
    std::optional<Groups> fewest(Groups groups, size_t max_groups) const {
        std::stable_sort(groups.begin(), groups.end(),
                         [](const Group* a, const Group* b) { return a->room > b->room; });
        Groups taken;
        for (const Group* g : groups) {
            if (taken.size() == max_groups) {
                break;
            }
            taken.push_back(g);
            if (place(taken)) {
                return taken;
            }
        }
        return std::nullopt;
    }

    // Keeps all but the last of `taken` and completes them with the group of `candidates`
    // with the least room that still fits, so the roomier groups stay whole.
    std::optional<Placement> tightest_tail(Groups taken, Groups candidates) const {
        std::stable_sort(candidates.begin(), candidates.end(),
                         [](const Group* a, const Group* b) { return a->room < b->room; });
        taken.pop_back();
        const size_t head = taken.size();
        for (const Group* g : candidates) {
            if (std::find(taken.begin(), taken.begin() + static_cast<std::ptrdiff_t>(head), g)
                != taken.begin() + static_cast<std::ptrdiff_t>(head)) {
                continue;
            }
            taken.resize(head);
            taken.push_back(g);
            if (auto placement = place(taken)) {
                return placement;
            }
        }
        return std::nullopt;
    }

private:
    const ResourceRequest& request_;
    const TaskCapacity& capacity_;
};

// Eligible nodes with room, grouped by `key_of` (a node with key -1 is a group alone).
std::vector<Group> group_nodes(const std::vector<int>& eligible,
                               const std::vector<int>& key_of,
                               const std::vector<uint32_t>& room,
                               uint32_t share,
                               std::vector<int>& group_of_key) {
    std::vector<Group> groups;
    for (int node : eligible) {
        const uint32_t r = room[static_cast<size_t>(node)];
        if (r == 0) {
            continue;
        }
        const int key = key_of[static_cast<size_t>(node)];
        size_t g = groups.size();
        if (key >= 0) {
            if (static_cast<size_t>(key) >= group_of_key.size()) {
                group_of_key.resize(static_cast<size_t>(key) + 1, -1);
            }
            int& known = group_of_key[static_cast<size_t>(key)];
            if (known < 0) {
                known = static_cast<int>(groups.size());
                groups.emplace_back();
            }
            g = static_cast<size_t>(known);
        } else {
            groups.emplace_back();
        }
        groups[g].nodes.push_back(node);
        groups[g].room += std::min(r, share);
    }
    return groups;
}

Groups pointers(const std::vector<Group>& groups) {
    Groups all;
    for (const Group& g : groups) {
        all.push_back(&g);
    }
    return all;
}

// The fewest groups, inside the lowest and least free domain that allows that few.
std::optional<Placement> fewest_groups(const Fitter& fitter,
                                       const std::vector<Group>& groups,
                                       std::vector<Domain> domains) {
    const Groups all = pointers(groups);
    auto overall = fitter.fewest(all, all.size());
    if (!overall) {
        return std::nullopt;
    }
    std::stable_sort(domains.begin(), domains.end(), [](const Domain& a, const Domain& b) {
        return std::tie(a.level, a.room) < std::tie(b.level, b.room);
    });
    for (const Domain& domain : domains) {
        if (auto taken = fitter.fewest(domain.groups, overall->size())) {
            return fitter.tightest_tail(std::move(*taken), domain.groups);
        }
    }
    return fitter.tightest_tail(std::move(*overall), all);
}

std::vector<Domain> switch_domains(const NetworkTopology& network,
                                   const std::vector<Group>& groups,
                                   const std::vector<int>& group_of_leaf) {
    std::vector<Domain> domains;
    for (size_t s = 0; s < network.switch_leaves.size(); ++s) {
        Domain domain;
        domain.level = network.switch_level[s];
        for (int leaf : network.switch_leaves[s]) {
            const int g = static_cast<size_t>(leaf) < group_of_leaf.size()
                                  ? group_of_leaf[static_cast<size_t>(leaf)]
                                  : -1;
            if (g >= 0) {
                domain.groups.push_back(&groups[static_cast<size_t>(g)]);
                domain.room += groups[static_cast<size_t>(g)].room;
            }
        }
        if (!domain.groups.empty()) {
            domains.push_back(std::move(domain));
        }
    }
    return domains;
}

// A one-node CPU job: the node whose leaf switch has the least room left, ties in the
// preferred order.
std::optional<Placement> on_fullest_leaf(const ResourceRequest& request,
                                         const std::vector<int>& eligible,
                                         const std::vector<uint32_t>& room,
                                         const NetworkTopology& network,
                                         const TaskCapacity& capacity) {
    std::map<int, uint64_t> leaf_room;
    for (int node : eligible) {
        const int leaf = network.node_leaf[static_cast<size_t>(node)];
        if (leaf >= 0) {
            leaf_room[leaf] += room[static_cast<size_t>(node)];
        }
    }
    const uint32_t tasks = total_tasks(request);
    int best = -1;
    uint64_t best_room = std::numeric_limits<uint64_t>::max();
    for (int node : eligible) {
        const uint32_t r = room[static_cast<size_t>(node)];
        if (r < tasks) {
            continue;
        }
        const int leaf = network.node_leaf[static_cast<size_t>(node)];
        const uint64_t around = leaf >= 0 ? leaf_room[leaf] : r;
        if (around < best_room) {
            best = node;
            best_room = around;
        }
    }
    return best < 0 ? std::nullopt : place_tasks(request, {best}, capacity);
}

// Segments of `request.segment_nodes` nodes, each inside one block; blocks with the fewest
// usable nodes first, so that whole blocks stay whole.
std::optional<Placement> in_segments(const ResourceRequest& request,
                                     const std::vector<int>& eligible,
                                     const std::vector<uint32_t>& room,
                                     const NetworkTopology& network,
                                     const TaskCapacity& capacity) {
    const uint32_t segment = request.segment_nodes;
    const uint32_t share = share_per_node(request);
    std::vector<std::vector<int>> usable(network.block_nodes.size());
    for (int node : eligible) {
        const int block = network.node_block[static_cast<size_t>(node)];
        if (block >= 0 && room[static_cast<size_t>(node)] >= share) {
            usable[static_cast<size_t>(block)].push_back(node);
        }
    }
    std::vector<size_t> order(usable.size());
    for (size_t b = 0; b < order.size(); ++b) {
        order[b] = b;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return usable[a].size() < usable[b].size(); });
    uint32_t segments_left = request.nodes_min / segment;
    std::vector<int> chosen;
    for (size_t b : order) {
        for (size_t taken = 0; segments_left > 0 && taken + segment <= usable[b].size();
             taken += segment) {
            chosen.insert(chosen.end(), usable[b].begin() + static_cast<std::ptrdiff_t>(taken),
                          usable[b].begin() + static_cast<std::ptrdiff_t>(taken + segment));
            --segments_left;
        }
    }
    if (segments_left > 0) {
        return std::nullopt;
    }
    return place_tasks(request, chosen, capacity);
}

}  // namespace

std::optional<int> fewest_leaf_switches(const ResourceRequest& request,
                                        const std::vector<int>& eligible,
                                        const TaskCapacity& capacity,
                                        const NetworkTopology& network) {
    std::vector<uint32_t> room(network.node_leaf.size(), 0);
    for (int node : eligible) {
        room[static_cast<size_t>(node)] = capacity(node);
    }
    const TaskCapacity cached = [&](int node) {
        return room[static_cast<size_t>(node)];
    };
    std::vector<int> group_of_leaf;
    const std::vector<Group> groups =
            group_nodes(eligible, network.node_leaf, room, share_per_node(request), group_of_leaf);
    const Groups all = pointers(groups);
    auto taken = Fitter(request, cached).fewest(all, all.size());
    return taken ? std::optional<int>(static_cast<int>(taken->size())) : std::nullopt;
}

std::optional<Placement> place_on_network(const ResourceRequest& request,
                                          const std::vector<int>& eligible,
                                          const TaskCapacity& capacity,
                                          const NetworkTopology& network,
                                          bool enforce_switch_limit) {
    if (network.empty()) {
        return place_tasks(request, eligible, capacity);
    }
    // The capacity callback may be costly (availability profiles): ask it once per node.
    std::vector<uint32_t> room(network.node_leaf.size(), 0);
    for (int node : eligible) {
        room[static_cast<size_t>(node)] = capacity(node);
    }
    const TaskCapacity cached = [&](int node) {
        return room[static_cast<size_t>(node)];
    };
    auto anywhere = place_tasks(request, eligible, cached);
    if (!anywhere) {
        return std::nullopt;
    }
    if (anywhere->nodes.size() == 1) {
        if (network.has_switches() && request.gpus_per_node == 0) {
            return on_fullest_leaf(request, eligible, room, network, cached);
        }
        return anywhere;
    }
    const uint32_t segment = request.segment_nodes;
    if (network.has_blocks() && segment > 0 && request.nodes_min > 0
        && request.nodes_min % segment == 0) {
        return in_segments(request, eligible, room, network, cached);
    }
    const Fitter fitter(request, cached);
    const uint32_t share = share_per_node(request);
    if (network.has_switches()) {
        std::vector<int> group_of_leaf;
        const std::vector<Group> groups =
                group_nodes(eligible, network.node_leaf, room, share, group_of_leaf);
        auto placement =
                fewest_groups(fitter, groups, switch_domains(network, groups, group_of_leaf));
        if (placement && enforce_switch_limit && request.max_leaf_switches > 0
            && leaf_switches_spanned(network, placement->nodes)
                       > static_cast<int>(request.max_leaf_switches)) {
            return std::nullopt;
        }
        return placement;
    }
    std::vector<int> group_of_block;
    const std::vector<Group> groups =
            group_nodes(eligible, network.node_block, room, share, group_of_block);
    std::vector<Domain> blocks;
    for (const Group& g : groups) {
        blocks.push_back({0, g.room, {&g}});
    }
    return fewest_groups(fitter, groups, std::move(blocks));
}

}  // namespace cohort::sched
