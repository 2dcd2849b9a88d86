// PCIe switch levels and pair classes computed from hwloc's I/O tree.
#include "common/topology/pcie_tree.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cohort::topology {
namespace {

bool is_host_bridge(hwloc_obj_t o) {
    return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

bool is_pci_bridge(hwloc_obj_t o) {
    return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

std::string bus_id_of(hwloc_obj_t bridge) {
    const auto& a = bridge->attr->bridge.upstream.pci;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", a.domain, a.bus, a.dev, a.func);
    return buf;
}

// PCI bridges from just below the host bridge down to the device's parent.
std::vector<hwloc_obj_t> bridges_above(hwloc_obj_t dev) {
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t p = dev->parent; p != nullptr && is_pci_bridge(p); p = p->parent) {
        out.push_back(p);
    }
    std::reverse(out.begin(), out.end());
    return out;
}

hwloc_obj_t host_bridge_of(hwloc_obj_t dev) {
    for (hwloc_obj_t p = dev->parent; p != nullptr; p = p->parent) {
        if (is_host_bridge(p)) {
            return p;
        }
    }
    return nullptr;
}

class LayoutBuilder {
public:
    explicit LayoutBuilder(hwloc_topology_t topo) {
        // Host bridges numbered in tree order, so the numbers follow the machine's layout.
        for (hwloc_obj_t b = nullptr; (b = hwloc_get_next_bridge(topo, b)) != nullptr;) {
            if (is_host_bridge(b)) {
                host_bridges_.emplace(b, static_cast<int>(host_bridges_.size()));
            }
        }
    }

    void count(hwloc_obj_t dev) {
        if (dev == nullptr) {
            return;
        }
        for (hwloc_obj_t b : bridges_above(dev)) {
            below_[b].insert(dev);
        }
    }

    PciePlace place(hwloc_obj_t dev) {
        PciePlace out;
        if (dev == nullptr) {
            return out;
        }
        if (hwloc_obj_t hb = host_bridge_of(dev); hb != nullptr) {
            out.host_bridge = host_bridges_.at(hb);
        }
        const std::set<hwloc_obj_t>* level = nullptr;
        for (hwloc_obj_t b : bridges_above(dev)) {
            const std::set<hwloc_obj_t>& devices = below_.at(b);
            if (devices.size() < 2 || (level != nullptr && devices == *level)) {
                continue;
            }
            level = &devices;
            out.path.push_back(switch_id(b, out));
        }
        return out;
    }

    std::vector<PcieSwitch> switches() && { return std::move(switches_); }

private:
    int switch_id(hwloc_obj_t bridge, const PciePlace& above) {
        auto [it, added] = switch_ids_.emplace(bridge, static_cast<int>(switches_.size()));
        if (added) {
            switches_.push_back({it->second, bus_id_of(bridge),
                                 above.path.empty() ? -1 : above.path.back(), above.host_bridge});
        }
        return it->second;
    }

    std::map<hwloc_obj_t, int> host_bridges_;
    std::map<hwloc_obj_t, std::set<hwloc_obj_t>> below_;
    std::map<hwloc_obj_t, int> switch_ids_;
    std::vector<PcieSwitch> switches_;
};

}  // namespace

PcieLayout pcie_layout(hwloc_topology_t topo,
                       const std::vector<hwloc_obj_t>& gpus,
                       const std::vector<hwloc_obj_t>& nics) {
    LayoutBuilder builder(topo);
    // A partitioned GPU appears once per partition but is one PCI function.
    std::set<hwloc_obj_t> counted;
    for (const auto* list : {&gpus, &nics}) {
        for (hwloc_obj_t dev : *list) {
            if (counted.insert(dev).second) {
                builder.count(dev);
            }
        }
    }
    PcieLayout out;
    for (hwloc_obj_t dev : gpus) {
        out.gpus.push_back(builder.place(dev));
    }
    for (hwloc_obj_t dev : nics) {
        out.nics.push_back(builder.place(dev));
    }
    out.switches = std::move(builder).switches();
    return out;
}

LinkClass pci_link_class(hwloc_obj_t a, hwloc_obj_t b, bool same_numa) {
    if (a == b) {
        return LinkClass::kPix;  // partitions of one function
    }
    std::vector<hwloc_obj_t> up_a;
    for (hwloc_obj_t p = a->parent; p != nullptr; p = p->parent) {
        up_a.push_back(p);
    }
    int b_hops = 0;
    for (hwloc_obj_t p = b->parent; p != nullptr; p = p->parent, ++b_hops) {
        auto hit = std::find(up_a.begin(), up_a.end(), p);
        if (hit == up_a.end()) {
            continue;
        }
        if (is_host_bridge(p)) {
            return LinkClass::kPhb;
        }
        if (!is_pci_bridge(p)) {
            break;  // the common ancestor is on the CPU side: different host bridges
        }
        // Each device reaches the shared switch through at most its own downstream port.
        const auto a_hops = hit - up_a.begin();
        return a_hops <= 1 && b_hops <= 1 ? LinkClass::kPix : LinkClass::kPxb;
    }
    return same_numa ? LinkClass::kNode : LinkClass::kSys;
}

std::vector<std::vector<LinkClass>> pci_link_classes(const std::vector<hwloc_obj_t>& gpus,
                                                     const std::vector<int>& numa) {
    std::vector<std::vector<LinkClass>> out;
    for (size_t i = 0; i < gpus.size(); ++i) {
        std::vector<LinkClass>& row = out.emplace_back();
        for (size_t j = 0; j < gpus.size(); ++j) {
            row.push_back(pci_link_class(gpus[i], gpus[j], numa[i] >= 0 && numa[i] == numa[j]));
        }
    }
    return out;
}

}  // namespace cohort::topology
