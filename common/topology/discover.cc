// Converts an hwloc topology (live or from recorded XML) into plain NodeTopology values.
#include "common/topology/discover.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <hwloc.h>

#include "common/topology/closest_nic.h"
#include "common/topology/gpu_links.h"
#include "common/topology/hwloc_fabric.h"
#include "common/topology/nvml_links.h"
#include "common/topology/pcie_tree.h"

namespace cohort::topology {
namespace {

constexpr int64_t kBytesPerMib = int64_t{1024} * 1024;

// PCI vendor ids and class ids that identify schedulable accelerators.
constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorAmd = 0x1002;
constexpr unsigned kVendorIntel = 0x8086;
constexpr unsigned kVendorNec = 0x1bcf;
constexpr unsigned kClassVga = 0x0300;
constexpr unsigned kClass3d = 0x0302;
constexpr unsigned kClassDisplayOther = 0x0380;
constexpr unsigned kClassCoprocessor = 0x0b40;
constexpr unsigned kClassAccelerator = 0x1200;

// strerror() may share one buffer between threads; the node agent is multi-threaded.
std::string errno_text(int err) {
    return std::generic_category().message(err);
}

struct TopologyDeleter {
    void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};

using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// Where an I/O device sits relative to CPUs and memory.
struct Locality {
    int numa = -1;
    int socket = -1;
    std::vector<int> cpus;
};

std::vector<int> indexes_of(hwloc_const_bitmap_t set) {
    std::vector<int> out;
    if (set == nullptr) {
        return out;
    }
    unsigned i = 0;
    hwloc_bitmap_foreach_begin(i, set) {
        out.push_back(static_cast<int>(i));
    }
    hwloc_bitmap_foreach_end();
    return out;
}

std::string pci_bus_id(hwloc_obj_t pci) {
    const auto& a = pci->attr->pcidev;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", a.domain, a.bus, a.dev, a.func);
    return buf;
}

// ATI chips that server boards carry for the console (ES1000 and RN50 on HP ProLiant and
// Dell PowerEdge boards, Rage XL before them): VGA class and AMD's vendor id, never a GPU.
bool ati_console_graphics(unsigned device_id) {
    switch (device_id) {
        case 0x515e:  // ES1000
        case 0x5159:  // RV100 (RN50), Radeon 7000 / VE
        case 0x4752:  // Rage XL PCI
        case 0x474f:  // Rage XL
            return true;
        default:
            return false;
    }
}

// The vendor name when the PCI function is a GPU or GPU-like accelerator, else "". BMC
// graphics (ASPEED, Matrox, ATI's server VGA) and Intel DSA/IAA/QAT fail the vendor, device
// or class test.
std::string accelerator_vendor(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
    const unsigned cls = pci.class_id;
    const bool display = cls == kClassVga || cls == kClass3d || cls == kClassDisplayOther
                         || cls == kClassAccelerator;
    switch (pci.vendor_id) {
        case kVendorNvidia:
            return display ? "nvidia" : "";
        case kVendorAmd:
            return display && !ati_console_graphics(pci.device_id) ? "amd" : "";
        case kVendorIntel:
            // Intel VGA is integrated graphics; data-centre GPUs report 3D or "display other".
            return cls == kClass3d || cls == kClassDisplayOther ? "intel" : "";
        case kVendorNec:
            return cls == kClassCoprocessor ? "nec" : "";  // SX-Aurora Vector Engine cards
        default:
            return "";
    }
}

// I/O objects hang off the CPU-side object whose CPUs and memory are local to them.
// `cpu_nodes` holds the os indexes of the NUMA nodes that own CPUs (see numa_nodes_of).
Locality locality_of(hwloc_topology_t topo, const std::set<int>& cpu_nodes, hwloc_obj_t io) {
    Locality out;
    hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topo, io);
    if (anchor == nullptr) {
        return out;
    }
    out.cpus = indexes_of(anchor->cpuset);
    // A device is never "near" memory without CPUs (HBM, GPU memory) when DRAM is local too.
    const std::vector<int> local = indexes_of(anchor->nodeset);
    for (int os : local) {
        if (cpu_nodes.count(os) != 0) {
            out.numa = os;
            break;
        }
    }
    if (out.numa < 0 && !local.empty()) {
        out.numa = local.front();
    }
    hwloc_obj_t pkg = anchor->type == HWLOC_OBJ_PACKAGE
                              ? anchor
                              : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, anchor);
    if (pkg != nullptr) {
        out.socket = static_cast<int>(pkg->logical_index);
    }
    return out;
}

bool is_gpu_osdev(hwloc_obj_t o) {
    return o->type == HWLOC_OBJ_OS_DEVICE
           && (o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU
               || o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC);
}

// One GPU usually has one OS device per API (cuda0, nvml0, opencl0d0). A partitioned one
// (MI300A in CPX mode) has several of the same API (rsmi0..rsmi5), each schedulable on its own.
int partitions_of(hwloc_obj_t pci) {
    std::map<std::string, int> per_api;
    int most = 1;
    for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
        if (!is_gpu_osdev(c) || c->name == nullptr) {
            continue;
        }
        std::string api = c->name;
        api.erase(api.find_last_not_of("0123456789") + 1);
        most = std::max(most, ++per_api[api]);
    }
    return most;
}

std::string model_of(hwloc_obj_t pci) {
    for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
        const char* m = is_gpu_osdev(c) ? hwloc_obj_get_info_by_name(c, "GPUModel") : nullptr;
        if (m != nullptr && *m != '\0') {
            return m;
        }
    }
    if (const char* m = hwloc_obj_get_info_by_name(pci, "PCIDevice"); m != nullptr && *m != '\0') {
        return m;
    }
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04x:%04x", pci->attr->pcidev.vendor_id,
                  pci->attr->pcidev.device_id);
    return buf;
}

// GPUs with the hwloc objects they came from, which the PCIe and link analysis need.
struct FoundGpus {
    std::vector<Gpu> gpus;
    std::vector<hwloc_obj_t> pci;         // parallel to gpus
    std::map<hwloc_obj_t, int> of_osdev;  // GPU OS device (nvml0, rsmi3) -> GPU index
};

// The OS devices of one PCI function that stand for its `partition`-th GPU: with one
// partition all of them, else the partition-th device of each API (rsmi0..5 -> 0..5).
std::vector<hwloc_obj_t> osdevs_of(hwloc_obj_t pci, int partition, int partitions) {
    std::map<std::string, int> seen;
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
        if (!is_gpu_osdev(c) || c->name == nullptr) {
            continue;
        }
        std::string api = c->name;
        api.erase(api.find_last_not_of("0123456789") + 1);
        if (partitions == 1 || seen[api]++ == partition) {
            out.push_back(c);
        }
    }
    return out;
}

FoundGpus gpus_of(hwloc_topology_t topo, const std::set<int>& cpu_nodes) {
    struct Entry {
        Gpu gpu;
        hwloc_obj_t pci;
        int partition;
        int partitions;
    };

    std::vector<Entry> entries;
    for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topo, pci)) != nullptr;) {
        std::string vendor = accelerator_vendor(pci->attr->pcidev);
        if (vendor.empty()) {
            continue;
        }
        Locality where = locality_of(topo, cpu_nodes, pci);
        Gpu gpu;
        gpu.pci_bus_id = pci_bus_id(pci);
        gpu.vendor = vendor;
        gpu.model = model_of(pci);
        gpu.numa = where.numa;
        gpu.socket = where.socket;
        gpu.local_cpus = where.cpus;
        const int partitions = partitions_of(pci);
        for (int p = 0; p < partitions; ++p) {
            entries.push_back({gpu, pci, p, partitions});
        }
    }
    // Fixed-width lowercase hex sorts as the bus numbers do; stable keeps partitions in order.
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.gpu.pci_bus_id < b.gpu.pci_bus_id;
    });
    FoundGpus out;
    for (Entry& e : entries) {
        const int index = static_cast<int>(out.gpus.size());
        e.gpu.index = index;
        for (hwloc_obj_t os : osdevs_of(e.pci, e.partition, e.partitions)) {
            out.of_osdev.emplace(os, index);
        }
        out.gpus.push_back(std::move(e.gpu));
        out.pci.push_back(e.pci);
    }
    return out;
}

bool has_osdev_child(hwloc_obj_t pci, hwloc_obj_osdev_type_e type) {
    for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == type) {
            return true;
        }
    }
    return false;
}

constexpr unsigned kClassInfiniband = 0x0207;
constexpr unsigned kVendorCrayCassini = 0x17db;  // HPE Slingshot NICs

struct FoundNics {
    std::vector<Nic> nics;
    std::vector<hwloc_obj_t> pci;  // parallel to nics; null for a port without a PCI function
};

// An InfiniBand function (even without OFED loaded), or a Slingshot one by its vendor.
bool is_rdma_function(hwloc_obj_t pci) {
    return pci->attr->pcidev.class_id == kClassInfiniband
           || pci->attr->pcidev.vendor_id == kVendorCrayCassini;
}

// RDMA devices, plus netdevs of ports that have none (Slingshot hsiN, Ethernet); the netdev
// of an RDMA port (ib0 beside mlx5_0) would only name the same port twice. An RDMA function
// whose driver is not loaded (no OS device at all) still locates the node's fabric port, so
// it is listed under its PCI bus id.
FoundNics nics_of(hwloc_topology_t topo, const std::set<int>& cpu_nodes) {
    struct Entry {
        Nic nic;
        hwloc_obj_t pci;
    };

    std::vector<Entry> entries;
    for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topo, pci)) != nullptr;) {
        if (!is_rdma_function(pci) || has_osdev_child(pci, HWLOC_OBJ_OSDEV_OPENFABRICS)
            || has_osdev_child(pci, HWLOC_OBJ_OSDEV_NETWORK)) {
            continue;
        }
        const Locality where = locality_of(topo, cpu_nodes, pci);
        Nic nic;
        nic.name = pci_bus_id(pci);
        nic.numa = where.numa;
        nic.pci_bus_id = nic.name;
        nic.compute = true;
        nic.socket = where.socket;
        entries.push_back({std::move(nic), pci});
    }
    for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(topo, os)) != nullptr;) {
        const auto type = os->attr->osdev.type;
        if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) {
            continue;
        }
        hwloc_obj_t parent = os->parent;
        const bool on_pci = parent != nullptr && parent->type == HWLOC_OBJ_PCI_DEVICE;
        if (type == HWLOC_OBJ_OSDEV_NETWORK && on_pci
            && has_osdev_child(parent, HWLOC_OBJ_OSDEV_OPENFABRICS)) {
            continue;
        }
        const Locality where = locality_of(topo, cpu_nodes, os);
        Nic nic;
        nic.name = os->name != nullptr ? os->name : "";
        nic.numa = where.numa;
        nic.pci_bus_id = on_pci ? pci_bus_id(parent) : "";
        nic.compute = type == HWLOC_OBJ_OSDEV_OPENFABRICS || (on_pci && is_rdma_function(parent));
        nic.socket = where.socket;
        entries.push_back({std::move(nic), on_pci ? parent : nullptr});
    }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.nic.pci_bus_id < b.nic.pci_bus_id;
    });
    FoundNics out;
    for (Entry& e : entries) {
        out.nics.push_back(std::move(e.nic));
        out.pci.push_back(e.pci);
    }
    return out;
}

// hwloc gives a NUMA node without CPUs (HBM, MCDRAM, GPU memory) the cpuset of its CPU-side
// neighbour. Linux numbers CPU-bearing nodes first, so each PU goes to the lowest-numbered
// node local to it: every PU is then counted once, and memory-only nodes list no CPUs.
std::vector<NumaNode> numa_nodes_of(hwloc_topology_t topo) {
    std::vector<hwloc_obj_t> objs;
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
        objs.push_back(n);
    }
    std::sort(objs.begin(), objs.end(),
              [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });
    std::vector<NumaNode> nodes;
    std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> owned(hwloc_bitmap_alloc(),
                                                                    &hwloc_bitmap_free);
    std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> taken(hwloc_bitmap_alloc(),
                                                                    &hwloc_bitmap_free);
    for (hwloc_obj_t n : objs) {
        hwloc_bitmap_andnot(owned.get(), n->cpuset, taken.get());
        hwloc_bitmap_or(taken.get(), taken.get(), n->cpuset);
        nodes.push_back({static_cast<int>(n->os_index), indexes_of(owned.get()),
                         static_cast<int64_t>(n->attr->numanode.local_memory / kBytesPerMib)});
    }
    return nodes;
}

// Host memory only: GPU memory that a driver exposes as NUMA nodes (IBM AC922 with
// HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES) is not memory a job's processes can be given.
int64_t host_memory_mib(hwloc_topology_t topo) {
    uint64_t bytes = 0;
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
        if (n->subtype == nullptr || std::strcmp(n->subtype, "GPUMemory") != 0) {
            bytes += n->attr->numanode.local_memory;
        }
    }
    return static_cast<int64_t>(bytes / kBytesPerMib);
}

// Adds the PCIe switch levels, the GPU link matrix and cliques, and each GPU's closest NIC.
// NVML is asked only about the machine this process runs on (`live`), never about an XML.
NodeTopology with_connectivity(hwloc_topology_t topo,
                               const FoundGpus& gpus,
                               const FoundNics& nics,
                               bool live,
                               NodeTopology out) {
    PcieLayout layout = pcie_layout(topo, gpus.pci, nics.pci);
    out.pcie_switches = std::move(layout.switches);
    for (size_t i = 0; i < out.gpus.size(); ++i) {
        out.gpus[i].pcie_path = layout.gpus[i].path;
        out.gpus[i].host_bridge = layout.gpus[i].host_bridge;
    }
    for (size_t i = 0; i < out.nics.size(); ++i) {
        out.nics[i].pcie_path = layout.nics[i].path;
        out.nics[i].host_bridge = layout.nics[i].host_bridge;
    }
    std::vector<int> numa;
    for (const Gpu& g : out.gpus) {
        numa.push_back(g.numa);
    }
    const std::vector<std::vector<LinkClass>> pci = pci_link_classes(gpus.pci, numa);
    std::vector<FabricLink> fabric;
    if (auto from_nvml = live ? nvml_fabric_links(out.gpus) : std::nullopt; from_nvml) {
        fabric = std::move(*from_nvml);
        out.link_source = LinkSource::kNvml;
    } else {
        fabric = hwloc_fabric_links(topo, gpus.of_osdev);
        out.link_source = fabric.empty() ? LinkSource::kPci : LinkSource::kHwloc;
    }
    GpuLinkMatrix matrix = gpu_link_matrix(pci, fabric);
    out.gpu_links = std::move(matrix.links);
    for (size_t i = 0; i < out.gpus.size(); ++i) {
        out.gpus[i].nvlink_clique = matrix.cliques[i];
    }
    const std::vector<int> nic_of = closest_nics(out);
    for (size_t i = 0; i < out.gpus.size(); ++i) {
        out.gpus[i].closest_nic = nic_of[i];
    }
    return out;
}

NodeTopology convert(hwloc_topology_t topo, bool live) {
    NodeTopology out;
    out.sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    out.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    out.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    // hwloc leaves out levels it cannot see (some VMs and non-Linux hosts); a PU then stands
    // for a core and the machine for a socket, so capacity is never reported as zero.
    if (out.cores == 0) {
        out.cores = out.pus;
    }
    if (out.sockets == 0) {
        out.sockets = 1;
    }
    out.memory_mib = host_memory_mib(topo);
    out.numa_nodes = numa_nodes_of(topo);
    std::set<int> cpu_nodes;
    for (const NumaNode& n : out.numa_nodes) {
        if (!n.cpus.empty()) {
            cpu_nodes.insert(n.os_index);
        }
    }
    FoundGpus gpus = gpus_of(topo, cpu_nodes);
    FoundNics nics = nics_of(topo, cpu_nodes);
    out.gpus = gpus.gpus;
    out.nics = nics.nics;
    return with_connectivity(topo, gpus, nics, live, std::move(out));
}

// A topology that keeps the PCI tree and every OS device, since GPUs and NICs live there.
Result<TopologyPtr> new_topology() {
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0) {
        return Status::internal("hwloc_topology_init failed: " + errno_text(errno));
    }
    TopologyPtr topo(raw);
    if (hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
        return Status::internal("hwloc cannot keep I/O devices: " + errno_text(errno));
    }
    // GPUs are found by PCI class and NVLink through NVML. Linux's own component reads the
    // PCI tree from sysfs; the plugins Debian may add (libpciaccess, OpenCL, GL) only
    // initialise drivers and leak what they allocate.
    for (const char* plugin : {"pci", "opencl", "gl"}) {
        hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, plugin);
    }
    return topo;
}

Result<std::string> read_file(const std::string& path) {
    auto unreadable = [&path](int err) {
        return Status::io_error("cannot read topology '" + path + "': " + errno_text(err));
    };
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (f == nullptr) {
        return unreadable(errno);
    }
    std::string data;
    char buf[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
        data.append(buf, n);
    }
    if (std::ferror(f.get()) != 0) {
        return unreadable(errno);
    }
    return data;
}

// hwloc only says EINVAL for a file it cannot use; name the common causes when we can see them.
std::string rejection_reason(const std::string& xml, int err) {
    std::string reason = "hwloc could not load it (" + errno_text(err) + ")";
    const size_t tag = xml.find("<topology");
    if (tag == std::string::npos) {
        return reason + "; it has no <topology> element, so it is not an hwloc XML export";
    }
    const size_t close = xml.find('>', tag);
    const size_t version = xml.find("version=\"", tag);
    const size_t digit = version + 9;
    if (version != std::string::npos && version < close && digit < xml.size() && xml[digit] >= '3'
        && xml[digit] <= '9') {
        return reason + "; it is hwloc XML format " + xml.substr(digit, 3)
               + ", which this hwloc (formats 1.x and 2.x) cannot read";
    }
    return reason;
}

}  // namespace

Result<NodeTopology> discover_local_topology() {
    Result<TopologyPtr> topo = new_topology();
    if (!topo) {
        return topo.status();
    }
    if (hwloc_topology_load(topo->get()) != 0) {
        return Status::internal("hwloc cannot discover this machine: " + errno_text(errno));
    }
    return convert(topo->get(), true);
}

Result<NodeTopology> load_topology_xml(const std::string& path) {
    Result<std::string> xml = read_file(path);
    if (!xml) {
        return xml.status();
    }
    Result<TopologyPtr> topo = new_topology();
    if (!topo) {
        return topo.status();
    }
    // hwloc wants the terminating NUL counted in the buffer size.
    if (hwloc_topology_set_xmlbuffer(topo->get(), xml->c_str(), static_cast<int>(xml->size() + 1))
                != 0
        || hwloc_topology_load(topo->get()) != 0) {
        const int err = errno;
        return Status::corrupt("cannot load topology '" + path
                               + "': " + rejection_reason(*xml, err));
    }
    return convert(topo->get(), false);
}

}  // namespace cohort::topology
