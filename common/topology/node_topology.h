// Plain values describing one node's CPUs, memory, GPUs and NICs; no hwloc types leak out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cohort::topology {

struct NumaNode {
    int os_index = -1;
    std::vector<int> cpus;  // PU os indexes whose own node this is; empty for memory-only nodes
    int64_t memory_mib = 0;
};

// How two GPUs reach each other, best first: the classes of `nvidia-smi topo -m` (and XGMI
// for AMD's Infinity Fabric, as `rocm-smi --showtopo` names it).
enum class LinkClass : uint8_t {
    kSelf,    // X: the same GPU
    kNvLink,  // NV#: a bonded set of NVLinks, direct or through NVSwitches
    kXgmi,    // XGMI: AMD Infinity Fabric
    kPix,     // PIX: at most one PCIe switch between them
    kPxb,     // PXB: several PCIe bridges, no host bridge
    kPhb,     // PHB: through one PCIe host bridge
    kNode,    // NODE: between host bridges of one NUMA node
    kSys,     // SYS: across the SMP interconnect between NUMA nodes
};

struct GpuLink {
    LinkClass kind = LinkClass::kSys;
    int links = 0;  // NVLinks in the bond for kNvLink (relative: see gpu_links.h), else 0
};

// A PCIe switch (or root-port tree) that more than one GPU or NIC sits under: where
// peer-to-peer traffic stays off the host bridge.
struct PcieSwitch {
    int id = -1;             // index into NodeTopology::pcie_switches
    std::string pci_bus_id;  // the topmost bridge whose subtree is this set of devices
    int parent = -1;         // the enclosing switch, or -1 directly under a host bridge
    int host_bridge = -1;
};

struct Gpu {
    int index = -1;          // 0..n-1 in PCI bus order, as with CUDA_DEVICE_ORDER=PCI_BUS_ID
    std::string pci_bus_id;  // "0000:07:00.0"; shared by the partitions of one partitioned GPU
    std::string vendor;      // "nvidia", "amd", "intel" or "nec"
    std::string model;
    int numa = -1;    // os index of the nearest NUMA node with CPUs (else any near one), or -1
    int socket = -1;  // logical index of the package, -1 if the device is local to several
    std::vector<int> local_cpus;  // PU os indexes local to the device
    std::vector<int> pcie_path;   // PcieSwitch ids above the GPU, outermost first
    int host_bridge = -1;         // which host bridge (root complex) it hangs off, in tree order
    int nvlink_clique = -1;       // GPUs that all reach each other over NVLink/XGMI; -1: none
    int closest_nic = -1;         // index into NodeTopology::nics (compute NICs only); -1: none
};

struct Nic {
    std::string name;  // RDMA device (mlx5_0) or, for a port without one, the netdev (hsi0, eno1)
    int numa = -1;
    std::string pci_bus_id;  // empty for a device without a PCI function
    bool compute = false;    // RDMA-capable (InfiniBand/RoCE, Slingshot): what NCCL and UCX use
    int socket = -1;
    std::vector<int> pcie_path;  // as Gpu::pcie_path
    int host_bridge = -1;
};

// Where the GPU link matrix came from, best first.
enum class LinkSource : uint8_t {
    kNvml,   // NVLink peers read from the driver (libnvidia-ml) on this machine
    kHwloc,  // hwloc's NVLinkBandwidth/XGMIBandwidth matrix (recorded exports)
    kPci,    // the PCI tree only
};

struct NodeTopology {
    int sockets = 0;
    int cores = 0;
    int pus = 0;
    int64_t memory_mib = 0;  // host memory; NUMA nodes of GPU memory (subtype GPUMemory) excluded
    std::vector<NumaNode> numa_nodes;  // by os index
    std::vector<Gpu> gpus;             // by index
    std::vector<Nic> nics;             // in PCI bus order
    std::vector<PcieSwitch> pcie_switches;
    std::vector<std::vector<GpuLink>> gpu_links;  // gpus.size() squared, kSelf on the diagonal
    LinkSource link_source = LinkSource::kPci;
};

}  // namespace cohort::topology
