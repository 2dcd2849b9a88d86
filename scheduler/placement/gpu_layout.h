// A node's GPUs as placement sees them: locality domains, local CPUs and NICs, as plain values
// the controller can carry for every node.
#pragma once

#include <string>
#include <vector>

#include "common/topology/node_topology.h"

namespace cohort::sched {

struct GpuLocality {
    int clique = -1;            // NVLink/XGMI clique; -1: linked to no other GPU
    std::vector<int> switches;  // PCIe switch ids, outermost first; empty: none shared
    int host_bridge = -1;
    int numa = -1;  // NUMA node with CPUs nearest the GPU
    int socket = -1;
    std::vector<int> local_cpus;  // CPU ids local to the GPU (its NUMA node's, usually)
    int nic = -1;                 // index into NodeGpuLayout::nics; -1: none
};

struct NodeGpuLayout {
    std::vector<GpuLocality> gpus;  // by GPU index (PCI bus order)
    std::vector<std::string> nics;  // compute NIC names, as UCX_NET_DEVICES/NCCL_IB_HCA want them
};

// The layout of a discovered (or recorded) node: cliques, switch paths, NUMA, sockets, local
// CPUs and the closest compute NIC of each GPU.
NodeGpuLayout gpu_layout_of(const topology::NodeTopology& t);

}  // namespace cohort::sched
