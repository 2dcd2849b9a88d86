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

struct Gpu {
    int index = -1;          // 0..n-1 in PCI bus order, as with CUDA_DEVICE_ORDER=PCI_BUS_ID
    std::string pci_bus_id;  // "0000:07:00.0"; shared by the partitions of one partitioned GPU
    std::string vendor;      // "nvidia", "amd", "intel" or "nec"
    std::string model;
    int numa = -1;    // os index of the nearest NUMA node with CPUs (else any near one), or -1
    int socket = -1;  // logical index of the package, -1 if the device is local to several
    std::vector<int> local_cpus;  // PU os indexes local to the device
};

struct Nic {
    std::string name;  // RDMA device (mlx5_0) or, for a port without one, the netdev (hsi0, eno1)
    int numa = -1;
    std::string pci_bus_id;  // empty for a device without a PCI function
};

struct NodeTopology {
    int sockets = 0;
    int cores = 0;
    int pus = 0;
    int64_t memory_mib = 0;  // host memory; NUMA nodes of GPU memory (subtype GPUMemory) excluded
    std::vector<NumaNode> numa_nodes;  // by os index
    std::vector<Gpu> gpus;             // by index
    std::vector<Nic> nics;             // in PCI bus order
};

}  // namespace cohort::topology
