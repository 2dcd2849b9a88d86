// The PCIe tree above GPUs and NICs: switch hierarchy and nvidia-smi style pair classes.
// Internal to cohort_topology: the only header here that names hwloc types.
#pragma once

#include <vector>

#include <hwloc.h>

#include "common/topology/node_topology.h"

namespace cohort::topology {

// Where one device sits in the PCIe tree.
struct PciePlace {
    std::vector<int> path;  // PcieSwitch ids, outermost first
    int host_bridge = -1;
};

struct PcieLayout {
    std::vector<PcieSwitch> switches;
    std::vector<PciePlace> gpus;  // parallel to the `gpus` argument
    std::vector<PciePlace> nics;  // parallel to the `nics` argument
};

// A switch level is a bridge whose subtree holds two or more of the given devices (GPU or NIC
// PCI functions) and a different set from the level above it, so a chain of bridges leading
// to the same devices is one level and a GPU's private bridges (MI50) are none. A null entry
// (a NIC without a PCI function) gets an empty place.
PcieLayout pcie_layout(hwloc_topology_t topo,
                       const std::vector<hwloc_obj_t>& gpus,
                       const std::vector<hwloc_obj_t>& nics);

// The nvidia-smi class of the PCIe path between two PCI functions; `same_numa` decides NODE
// against SYS when they hang off different host bridges.
LinkClass pci_link_class(hwloc_obj_t a, hwloc_obj_t b, bool same_numa);

// pci_link_class for every pair of `gpus` (PCI functions), `numa` giving each one's node.
std::vector<std::vector<LinkClass>> pci_link_classes(const std::vector<hwloc_obj_t>& gpus,
                                                     const std::vector<int>& numa);

}  // namespace cohort::topology
