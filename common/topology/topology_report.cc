// Text and JSON renderings of a NodeTopology.
#include "common/topology/topology_report.h"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/topology/gpu_links.h"

namespace cohort::topology {
namespace {

const char* source_name(LinkSource s) {
    switch (s) {
        case LinkSource::kNvml:
            return "nvml";
        case LinkSource::kHwloc:
            return "hwloc";
        case LinkSource::kPci:
            return "pci";
    }
    return "pci";
}

std::string nic_name(const NodeTopology& t, int index) {
    return index >= 0 ? t.nics[static_cast<size_t>(index)].name : "-";
}

std::string switch_names(const NodeTopology& t, const std::vector<int>& path) {
    std::string out;
    for (int s : path) {
        out += (out.empty() ? "" : ">") + t.pcie_switches[static_cast<size_t>(s)].pci_bus_id;
    }
    return out.empty() ? "-" : out;
}

std::string padded(const std::string& s, size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

void write_matrix(std::ostringstream& out, const NodeTopology& t) {
    const size_t n = t.gpus.size();
    out << padded("", 8);
    for (size_t j = 0; j < n; ++j) {
        out << padded("GPU" + std::to_string(j), 7);
    }
    out << padded("NIC", 10) << padded("NUMA", 6) << "CPU Affinity\n";
    for (size_t i = 0; i < n; ++i) {
        const Gpu& g = t.gpus[i];
        out << padded("GPU" + std::to_string(i), 8);
        for (size_t j = 0; j < n; ++j) {
            out << padded(link_label(t.gpu_links[i][j]), 7);
        }
        out << padded(nic_name(t, g.closest_nic), 10) << padded(std::to_string(g.numa), 6)
            << cpu_list(g.local_cpus) << "\n";
    }
}

}  // namespace

std::string cpu_list(const std::vector<int>& cpus) {
    std::vector<int> sorted = cpus;
    std::sort(sorted.begin(), sorted.end());
    std::string out;
    for (size_t i = 0; i < sorted.size();) {
        size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) {
            ++j;
        }
        out += (out.empty() ? "" : ",") + std::to_string(sorted[i]);
        if (j > i) {
            out += "-" + std::to_string(sorted[j]);
        }
        i = j + 1;
    }
    return out;
}

std::string topology_text(const NodeTopology& t) {
    std::ostringstream out;
    out << "Node: " << t.sockets << " sockets, " << t.cores << " cores, " << t.pus << " PUs, "
        << t.numa_nodes.size() << " NUMA nodes, " << t.memory_mib << " MiB, " << t.gpus.size()
        << " GPUs, " << t.nics.size() << " NICs\n\n";
    out << padded("NUMA", 6) << padded("Memory MiB", 12) << "CPUs\n";
    for (const NumaNode& n : t.numa_nodes) {
        out << padded(std::to_string(n.os_index), 6) << padded(std::to_string(n.memory_mib), 12)
            << (n.cpus.empty() ? "(memory only)" : cpu_list(n.cpus)) << "\n";
    }
    if (!t.gpus.empty()) {
        out << "\nGPU links (from " << source_name(t.link_source) << "):\n";
        write_matrix(out, t);
        out << "\n"
            << padded("GPU", 5) << padded("Bus id", 14) << padded("Socket", 8)
            << padded("Clique", 8) << padded("PCIe switches", 30) << "Model\n";
        for (const Gpu& g : t.gpus) {
            out << padded(std::to_string(g.index), 5) << padded(g.pci_bus_id, 14)
                << padded(std::to_string(g.socket), 8)
                << padded(g.nvlink_clique < 0 ? "-" : std::to_string(g.nvlink_clique), 8)
                << padded(switch_names(t, g.pcie_path), 30) << g.model << "\n";
        }
    }
    if (!t.nics.empty()) {
        out << "\n"
            << padded("NIC", 14) << padded("Bus id", 14) << padded("NUMA", 6)
            << padded("Compute", 9) << "PCIe switches\n";
        for (const Nic& n : t.nics) {
            out << padded(n.name, 14) << padded(n.pci_bus_id.empty() ? "-" : n.pci_bus_id, 14)
                << padded(std::to_string(n.numa), 6) << padded(n.compute ? "yes" : "no", 9)
                << switch_names(t, n.pcie_path) << "\n";
        }
    }
    if (!t.gpus.empty()) {
        out << "\nLegend: X self; NV# bonded NVLinks; XGMI AMD Infinity Fabric; PIX at most one "
               "PCIe switch; PXB several PCIe bridges; PHB a host bridge; NODE between host "
               "bridges of one NUMA node; SYS between NUMA nodes\n";
    }
    return out.str();
}

std::string topology_json(const NodeTopology& t) {
    nlohmann::json j;
    j["sockets"] = t.sockets;
    j["cores"] = t.cores;
    j["pus"] = t.pus;
    j["memory_mib"] = t.memory_mib;
    j["numa_nodes"] = nlohmann::json::array();
    for (const NumaNode& n : t.numa_nodes) {
        j["numa_nodes"].push_back(
                {{"os_index", n.os_index}, {"cpus", n.cpus}, {"memory_mib", n.memory_mib}});
    }
    j["gpus"] = nlohmann::json::array();
    for (const Gpu& g : t.gpus) {
        std::vector<std::string> switches;
        for (int s : g.pcie_path) {
            switches.push_back(t.pcie_switches[static_cast<size_t>(s)].pci_bus_id);
        }
        j["gpus"].push_back(
                {{"index", g.index},
                 {"pci_bus_id", g.pci_bus_id},
                 {"vendor", g.vendor},
                 {"model", g.model},
                 {"numa", g.numa},
                 {"socket", g.socket},
                 {"closest_nic", g.closest_nic < 0 ? nlohmann::json(nullptr)
                                                   : nlohmann::json(nic_name(t, g.closest_nic))},
                 {"local_cpus", g.local_cpus},
                 {"nvlink_clique",
                  g.nvlink_clique < 0 ? nlohmann::json(nullptr) : nlohmann::json(g.nvlink_clique)},
                 {"pcie_switches", switches},
                 {"host_bridge", g.host_bridge}});
    }
    j["nics"] = nlohmann::json::array();
    for (const Nic& n : t.nics) {
        j["nics"].push_back({{"name", n.name},
                             {"numa", n.numa},
                             {"socket", n.socket},
                             {"pci_bus_id", n.pci_bus_id},
                             {"compute", n.compute}});
    }
    j["pcie_switches"] = nlohmann::json::array();
    for (const PcieSwitch& s : t.pcie_switches) {
        j["pcie_switches"].push_back({{"id", s.id},
                                      {"pci_bus_id", s.pci_bus_id},
                                      {"parent", s.parent},
                                      {"host_bridge", s.host_bridge}});
    }
    j["gpu_links"] = nlohmann::json::array();
    for (const std::vector<GpuLink>& row : t.gpu_links) {
        std::vector<std::string> labels;
        for (const GpuLink& l : row) {
            labels.push_back(link_label(l));
        }
        j["gpu_links"].push_back(labels);
    }
    j["gpu_link_source"] = source_name(t.link_source);
    return j.dump(2) + "\n";
}

}  // namespace cohort::topology
