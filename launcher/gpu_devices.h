// Which device files are a node's GPUs, so that a job's devices cgroup can keep it off the
// GPUs it was not given (as Slurm's ConstrainDevices).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cohort::agent {

// The device file of each of the node's GPUs, by GPU index: the config's gpu_device_files
// expanded ("/dev/nvidia[0-7]"), else, for NVIDIA GPUs, /dev/nvidiaN with the minor number
// the driver gives each PCI bus id under `driver_dir`. Empty where neither says.
std::vector<std::string> gpu_device_files(
        const std::string& configured,
        const std::vector<std::string>& pci_bus_ids,
        const std::string& driver_dir = "/proc/driver/nvidia/gpus");

// The devices-cgroup rules ("c MAJOR:MINOR rwm") for the GPUs not in `allocated` (indexes
// into `files`); a file that is not a device is skipped.
std::vector<std::string> denied_gpu_rules(const std::vector<std::string>& files,
                                          const std::vector<int32_t>& allocated);

}  // namespace cohort::agent
