// NodeTopology to NodeGpuLayout.
#include "scheduler/placement/gpu_layout.h"

#include <cstddef>

namespace cohort::sched {

NodeGpuLayout gpu_layout_of(const topology::NodeTopology& t) {
    NodeGpuLayout out;
    std::vector<int> nic_index(t.nics.size(), -1);
    for (size_t i = 0; i < t.nics.size(); ++i) {
        if (t.nics[i].compute) {
            nic_index[i] = static_cast<int>(out.nics.size());
            out.nics.push_back(t.nics[i].name);
        }
    }
    for (const topology::Gpu& g : t.gpus) {
        GpuLocality l;
        l.clique = g.nvlink_clique;
        l.switches = g.pcie_path;
        l.host_bridge = g.host_bridge;
        l.numa = g.numa;
        l.socket = g.socket;
        l.local_cpus = g.local_cpus;
        l.nic = g.closest_nic < 0 ? -1 : nic_index[static_cast<size_t>(g.closest_nic)];
        out.gpus.push_back(std::move(l));
    }
    return out;
}

}  // namespace cohort::sched
