// Accelerator links (NVLink, XGMI) from the distance matrices hwloc records.
// Internal to cohort_topology: names hwloc types.
#pragma once

#include <map>
#include <vector>

#include <hwloc.h>

#include "common/topology/gpu_links.h"

namespace cohort::topology {

// Reads hwloc's NVLinkBandwidth and XGMIBandwidth matrices. `gpu_of` maps each GPU OS
// device (nvml0, rsmi3) to its GPU index; entries naming NVSwitch PCI objects become switch
// links, and links to CPUs (POWER8's NVLink to its package) are left out. Empty when hwloc
// recorded neither matrix, as Debian's hwloc never does on a live machine.
std::vector<FabricLink> hwloc_fabric_links(hwloc_topology_t topo,
                                           const std::map<hwloc_obj_t, int>& gpu_of);

}  // namespace cohort::topology
