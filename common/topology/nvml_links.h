// NVLink peers read from the NVIDIA driver, when it is installed.
#pragma once

#include <optional>
#include <vector>

#include "common/topology/gpu_links.h"
#include "common/topology/node_topology.h"

namespace cohort::topology {

// Loads libnvidia-ml.so.1 with dlopen (the build never needs NVML) and reads, for each NVIDIA
// GPU, the far end of every active NVLink: another GPU or an NVSwitch. nullopt when the
// library, the driver or any GPU is unavailable, so the caller falls back to hwloc's matrix
// or the PCI tree; an empty list when NVML works and the GPUs have no NVLink.
std::optional<std::vector<FabricLink>> nvml_fabric_links(const std::vector<Gpu>& gpus);

}  // namespace cohort::topology
