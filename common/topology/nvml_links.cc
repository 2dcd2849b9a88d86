// NVML through dlopen: the few entry points needed to read NVLink peers, declared here so
// that no NVML header or library is needed to build.
#include "common/topology/nvml_links.h"

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <dlfcn.h>

namespace cohort::topology {
namespace {

// From NVML's public API (nvml.h, CUDA 11+); only the members this file reads matter, but
// the layout must match for nvmlDeviceGetNvLinkRemotePciInfo_v2 to fill it.
struct NvmlPciInfo {
    char bus_id_legacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pci_device_id;
    unsigned pci_subsystem_id;
    char bus_id[32];
};

using NvmlDevice = void*;
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlFeatureEnabled = 1;
constexpr int kNvLinkDeviceGpu = 0;
constexpr int kNvLinkDeviceSwitch = 2;
constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

struct Nvml {
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*handle_by_bus_id)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*link_state)(NvmlDevice, unsigned, int*) = nullptr;
    NvmlReturn (*remote_pci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
    NvmlReturn (*remote_type)(NvmlDevice, unsigned, int*) = nullptr;
};

struct LibraryCloser {
    void operator()(void* handle) const { dlclose(handle); }
};

template <typename Fn>
bool bind(void* lib, const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(lib, name));  // NOLINT: dlsym's documented use
    return fn != nullptr;
}

// NVML writes "00000000:07:00.0"; NodeTopology uses hwloc's "0000:07:00.0".
std::string bus_id_of(const NvmlPciInfo& pci) {
    std::string full = pci.bus_id;
    const size_t dot = full.rfind('.');
    const unsigned function =
            dot == std::string::npos ? 0 : std::stoul(full.substr(dot + 1), nullptr, 16);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", pci.domain, pci.bus, pci.device, function);
    return buf;
}

// The links of one GPU, counted per far end.
std::optional<std::vector<FabricLink>> links_of(const Nvml& nvml,
                                                const Gpu& gpu,
                                                const std::map<std::string, int>& gpu_by_bus) {
    NvmlDevice dev = nullptr;
    if (nvml.handle_by_bus_id(gpu.pci_bus_id.c_str(), &dev) != kNvmlSuccess) {
        return std::nullopt;
    }
    std::map<std::string, FabricLink> per_peer;
    for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
        int active = 0;
        int type = -1;
        NvmlPciInfo remote{};
        if (nvml.link_state(dev, link, &active) != kNvmlSuccess || active != kNvmlFeatureEnabled
            || nvml.remote_pci(dev, link, &remote) != kNvmlSuccess
            || nvml.remote_type(dev, link, &type) != kNvmlSuccess) {
            continue;  // links beyond this GPU's count answer "invalid argument"
        }
        const std::string peer = bus_id_of(remote);
        FabricLink& f = per_peer[peer];
        f.gpu = gpu.index;
        if (type == kNvLinkDeviceGpu && gpu_by_bus.count(peer) != 0) {
            f.peer_gpu = gpu_by_bus.at(peer);
        } else if (type == kNvLinkDeviceSwitch) {
            f.peer_switch = peer;
        }
        ++f.links;
    }
    std::vector<FabricLink> out;
    for (auto& [peer, f] : per_peer) {
        if (f.peer_gpu >= 0 || !f.peer_switch.empty()) {
            out.push_back(f);
        }
    }
    return out;
}

}  // namespace

std::optional<std::vector<FabricLink>> nvml_fabric_links(const std::vector<Gpu>& gpus) {
    std::map<std::string, int> gpu_by_bus;
    for (const Gpu& g : gpus) {
        if (g.vendor == "nvidia") {
            gpu_by_bus.emplace(g.pci_bus_id, g.index);
        }
    }
    if (gpu_by_bus.empty()) {
        return std::nullopt;
    }
    std::unique_ptr<void, LibraryCloser> lib(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
    Nvml nvml;
    if (lib == nullptr || !bind(lib.get(), "nvmlInit_v2", nvml.init)
        || !bind(lib.get(), "nvmlShutdown", nvml.shutdown)
        || !bind(lib.get(), "nvmlDeviceGetHandleByPciBusId_v2", nvml.handle_by_bus_id)
        || !bind(lib.get(), "nvmlDeviceGetNvLinkState", nvml.link_state)
        || !bind(lib.get(), "nvmlDeviceGetNvLinkRemotePciInfo_v2", nvml.remote_pci)
        || !bind(lib.get(), "nvmlDeviceGetNvLinkRemoteDeviceType", nvml.remote_type)
        || nvml.init() != kNvmlSuccess) {
        return std::nullopt;
    }
    std::vector<FabricLink> out;
    bool complete = true;
    for (const Gpu& g : gpus) {
        if (g.vendor != "nvidia") {
            continue;
        }
        auto links = links_of(nvml, g, gpu_by_bus);
        if (!links) {
            complete = false;
            break;
        }
        out.insert(out.end(), links->begin(), links->end());
    }
    nvml.shutdown();
    if (!complete) {
        return std::nullopt;
    }
    return out;
}

}  // namespace cohort::topology
