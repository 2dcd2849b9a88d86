// Converts an hwloc topology (live or from recorded XML) into plain NodeTopology values.
#include "common/topology/discover.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <hwloc.h>

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

// The vendor name when the PCI function is a GPU or GPU-like accelerator, else "". BMC
// graphics (ASPEED, Matrox) and Intel DSA/IAA/QAT fail the vendor or class test.
std::string accelerator_vendor(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
    const unsigned cls = pci.class_id;
    const bool display = cls == kClassVga || cls == kClass3d || cls == kClassDisplayOther
                         || cls == kClassAccelerator;
    switch (pci.vendor_id) {
        case kVendorNvidia:
            return display ? "nvidia" : "";
        case kVendorAmd:
            return display ? "amd" : "";
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

std::vector<Gpu> gpus_of(hwloc_topology_t topo, const std::set<int>& cpu_nodes) {
    std::vector<Gpu> gpus;
    for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topo, pci)) != nullptr;) {
        std::string vendor = accelerator_vendor(pci->attr->pcidev);
        if (vendor.empty()) {
            continue;
        }
        Locality where = locality_of(topo, cpu_nodes, pci);
        Gpu gpu{-1, pci_bus_id(pci), vendor, model_of(pci), where.numa, where.socket, where.cpus};
        for (int p = partitions_of(pci); p > 0; --p) {
            gpus.push_back(gpu);
        }
    }
    // Fixed-width lowercase hex sorts as the bus numbers do; stable keeps partitions in order.
    std::stable_sort(gpus.begin(), gpus.end(),
                     [](const Gpu& a, const Gpu& b) { return a.pci_bus_id < b.pci_bus_id; });
    for (size_t i = 0; i < gpus.size(); ++i) {
        gpus[i].index = static_cast<int>(i);
    }
    return gpus;
}

bool has_openfabrics_child(hwloc_obj_t pci) {
    for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
            return true;
        }
    }
    return false;
}

// RDMA devices, plus netdevs of ports that have none (Slingshot hsiN, Ethernet); the netdev
// of an RDMA port (ib0 beside mlx5_0) would only name the same port twice.
std::vector<Nic> nics_of(hwloc_topology_t topo, const std::set<int>& cpu_nodes) {
    std::vector<Nic> nics;
    for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(topo, os)) != nullptr;) {
        const auto type = os->attr->osdev.type;
        if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) {
            continue;
        }
        hwloc_obj_t parent = os->parent;
        const bool on_pci = parent != nullptr && parent->type == HWLOC_OBJ_PCI_DEVICE;
        if (type == HWLOC_OBJ_OSDEV_NETWORK && on_pci && has_openfabrics_child(parent)) {
            continue;
        }
        nics.push_back({os->name != nullptr ? os->name : "", locality_of(topo, cpu_nodes, os).numa,
                        on_pci ? pci_bus_id(parent) : ""});
    }
    std::stable_sort(nics.begin(), nics.end(),
                     [](const Nic& a, const Nic& b) { return a.pci_bus_id < b.pci_bus_id; });
    return nics;
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

NodeTopology convert(hwloc_topology_t topo) {
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
    out.gpus = gpus_of(topo, cpu_nodes);
    out.nics = nics_of(topo, cpu_nodes);
    return out;
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
    return convert(topo->get());
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
    return convert(topo->get());
}

}  // namespace cohort::topology
