// Placing multi-node jobs on the network: the fewest leaf switches, then the lowest common
// switch, then the tightest fit; segments of a job kept inside blocks.
#pragma once

#include <optional>
#include <vector>

#include "scheduler/placement/network_topology.h"
#include "scheduler/placement/node_fit.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// The fewest leaf switches that hold enough nodes for `request` on the eligible nodes, or
// nullopt when even all of them do not.
std::optional<int> fewest_leaf_switches(const ResourceRequest& request,
                                        const std::vector<int>& eligible,
                                        const TaskCapacity& capacity,
                                        const NetworkTopology& network);

// Places `request` like place_tasks(), and on a network:
// - A job of one node goes where place_tasks() puts it; a CPU job without GPUs prefers a node
//   on the fullest leaf switch it fits on, so empty leaves stay whole for multi-node jobs.
// - A job of several nodes takes the fewest leaf switches, then those under the lowest common
//   switch, then, among switches at that level, the one with the least free (best fit); its
//   last leaf is the smallest that completes it. With request.max_leaf_switches set and
//   `enforce_switch_limit`, a job that would need more leaves does not start (nullopt).
// - With blocks and request.segment_nodes, each segment of that many nodes lies inside one
//   block (nullopt when that is impossible now); without segments a job that fits in one
//   block gets the fullest block that holds it, else the fewest blocks.
// `eligible` gives the preferred order of nodes, e.g. best fit by GPUs.
std::optional<Placement> place_on_network(const ResourceRequest& request,
                                          const std::vector<int>& eligible,
                                          const TaskCapacity& capacity,
                                          const NetworkTopology& network,
                                          bool enforce_switch_limit);

}  // namespace cohort::sched
