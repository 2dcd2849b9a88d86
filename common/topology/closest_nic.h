// Pairs each GPU with the compute NIC its traffic should leave through.
#pragma once

#include <vector>

#include "common/topology/node_topology.h"

namespace cohort::topology {

// For each GPU, the index in `t.nics` of the closest compute NIC: the one sharing its deepest
// PCIe switch, else its host bridge, else its NUMA node, else its socket, else any; -1 when
// the node has no compute NIC. Among equally close NICs the one fewest lower-indexed GPUs
// already use wins, so GPU pairs behind a switch with two HCAs (DGX A100) get one each.
std::vector<int> closest_nics(const NodeTopology& t);

}  // namespace cohort::topology
