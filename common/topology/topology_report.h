// What a node agent would register, as text for people and JSON for tools
// (`cohortd --show-topology [--json]`).
#pragma once

#include <string>

#include "common/topology/node_topology.h"

namespace cohort::topology {

// The node's totals, NUMA nodes, NICs and, per GPU, the link matrix in the layout of
// `nvidia-smi topo -m` with each GPU's NUMA node, local CPUs and closest NIC.
std::string topology_text(const NodeTopology& t);

// The same as one JSON object: cores, pus, numa_nodes, gpus, nics, gpu_links, ...
std::string topology_json(const NodeTopology& t);

// "0-13,112-125": CPU list syntax as in cpusets and `nvidia-smi topo -m`.
std::string cpu_list(const std::vector<int>& cpus);

}  // namespace cohort::topology
