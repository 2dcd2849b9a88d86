// The GPU-to-GPU link matrix and NVLink cliques, from accelerator links and PCIe classes.
#pragma once

#include <string>
#include <vector>

#include "common/topology/node_topology.h"

namespace cohort::topology {

// One accelerator link as hwloc or NVML reports it: GPU to GPU, or GPU to a switch.
struct FabricLink {
    int gpu = -1;
    int peer_gpu = -1;        // -1 when the far end is a switch
    std::string peer_switch;  // the NVSwitch's PCI bus id when the far end is one
    int links = 0;
    LinkClass kind = LinkClass::kNvLink;  // or kXgmi
};

struct GpuLinkMatrix {
    std::vector<std::vector<GpuLink>> links;
    std::vector<int> cliques;  // per GPU; -1 for a GPU with no accelerator link
};

// `pci[i][j]` is the PCIe class of each pair. GPUs on any NVSwitch of the node reach each
// other with the smaller of their switch link counts: a node's switches are joined to each
// other (DGX-2's two baseboards) by links hwloc does not report. A clique is a set of GPUs
// that all link to each other, grown greedily in index order, so a partial mesh (DGX-1)
// splits into its fully connected groups.
GpuLinkMatrix gpu_link_matrix(const std::vector<std::vector<LinkClass>>& pci,
                              const std::vector<FabricLink>& fabric);

// "X", "NV12", "XGMI", "PIX", "PXB", "PHB", "NODE" or "SYS".
std::string link_label(const GpuLink& link);

}  // namespace cohort::topology
