// Turns hwloc's NVLinkBandwidth/XGMIBandwidth distance matrices into FabricLinks.
#include "common/topology/hwloc_fabric.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace cohort::topology {
namespace {

// hwloc reports bandwidth, not link counts, and its per-link figure depends on its version
// (shared/notes/topology.md): 20000 MB/s for NVLink 1, 25000 for NVLink 2-4 in current hwloc.
// Counts are therefore relative between GPUs of one node, never across hwloc versions.
int nvlinks_in(uint64_t bandwidth) {
    constexpr uint64_t kNvLink2To4 = 25000;
    constexpr uint64_t kNvLink1 = 20000;
    if (bandwidth % kNvLink2To4 != 0 && bandwidth % kNvLink1 == 0) {
        return static_cast<int>(bandwidth / kNvLink1);
    }
    const auto links = std::lround(static_cast<double>(bandwidth) / kNvLink2To4);
    return links < 1 ? 1 : static_cast<int>(links);
}

bool is_nvswitch(hwloc_obj_t o) {
    return o->type == HWLOC_OBJ_PCI_DEVICE && o->subtype != nullptr
           && std::strcmp(o->subtype, "NVSwitch") == 0;
}

std::string bus_id(hwloc_obj_t pci) {
    const auto& a = pci->attr->pcidev;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", a.domain, a.bus, a.dev, a.func);
    return buf;
}

void read_matrix(hwloc_topology_t topo,
                 const char* name,
                 LinkClass kind,
                 const std::map<hwloc_obj_t, int>& gpu_of,
                 std::vector<FabricLink>& out) {
    unsigned nr = 1;
    hwloc_distances_s* d = nullptr;
    if (hwloc_distances_get_by_name(topo, name, &nr, &d, 0) != 0 || nr == 0) {
        return;
    }
    const unsigned n = d->nbobjs;
    for (unsigned i = 0; i < n; ++i) {
        auto from = gpu_of.find(d->objs[i]);
        if (from == gpu_of.end()) {
            continue;
        }
        for (unsigned j = 0; j < n; ++j) {
            const uint64_t bandwidth = d->values[i * n + j];
            if (i == j || bandwidth == 0) {
                continue;
            }
            FabricLink link{from->second, -1, "",
                            kind == LinkClass::kNvLink ? nvlinks_in(bandwidth) : 1, kind};
            hwloc_obj_t peer = d->objs[j];
            if (auto to = gpu_of.find(peer); to != gpu_of.end()) {
                link.peer_gpu = to->second;
            } else if (is_nvswitch(peer)) {
                link.peer_switch = bus_id(peer);
            } else {
                continue;
            }
            out.push_back(link);
        }
    }
    hwloc_distances_release(topo, d);
}

}  // namespace

std::vector<FabricLink> hwloc_fabric_links(hwloc_topology_t topo,
                                           const std::map<hwloc_obj_t, int>& gpu_of) {
    std::vector<FabricLink> out;
    read_matrix(topo, "NVLinkBandwidth", LinkClass::kNvLink, gpu_of, out);
    read_matrix(topo, "XGMIBandwidth", LinkClass::kXgmi, gpu_of, out);
    return out;
}

}  // namespace cohort::topology
