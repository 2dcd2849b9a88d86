// GPU-to-NIC pairing by PCIe, NUMA and socket distance.
#include "common/topology/closest_nic.h"

#include <algorithm>
#include <cstddef>

namespace cohort::topology {
namespace {

size_t shared_switches(const std::vector<int>& a, const std::vector<int>& b) {
    const auto end = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    return static_cast<size_t>(end.first - a.begin());
}

// Higher is closer: switch depth dominates, then host bridge, NUMA node and socket.
size_t closeness(const Gpu& g, const Nic& n) {
    const bool same_bridge = g.host_bridge >= 0 && g.host_bridge == n.host_bridge;
    const bool same_numa = g.numa >= 0 && g.numa == n.numa;
    const bool same_socket = g.socket >= 0 && g.socket == n.socket;
    return shared_switches(g.pcie_path, n.pcie_path) * 8 + (same_bridge ? 4 : 0)
           + (same_numa ? 2 : 0) + (same_socket ? 1 : 0);
}

}  // namespace

std::vector<int> closest_nics(const NodeTopology& t) {
    std::vector<int> users(t.nics.size(), 0);
    std::vector<int> out;
    for (const Gpu& g : t.gpus) {
        int best = -1;
        for (size_t i = 0; i < t.nics.size(); ++i) {
            if (!t.nics[i].compute) {
                continue;
            }
            if (best < 0) {
                best = static_cast<int>(i);
                continue;
            }
            const auto b = static_cast<size_t>(best);
            const size_t ci = closeness(g, t.nics[i]);
            const size_t cb = closeness(g, t.nics[b]);
            if (ci > cb || (ci == cb && users[i] < users[b])) {
                best = static_cast<int>(i);
            }
        }
        if (best >= 0) {
            ++users[static_cast<size_t>(best)];
        }
        out.push_back(best);
    }
    return out;
}

}  // namespace cohort::topology
