// Which device files are a node's GPUs, and the devices-cgroup rules that deny the others.
#include "launcher/gpu_devices.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace cohort::agent {
namespace {

namespace fs = std::filesystem;

TEST(GpuDevices, ConfiguredFilesExpandAsSlurmsGresFileDoes) {
    EXPECT_EQ(gpu_device_files("/dev/nvidia[0-2]", {"0000:07:00.0"}),
              (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2"}));
}

// Without a configured list, the NVIDIA driver's minor number of each GPU's bus id.
TEST(GpuDevices, TheNvidiaDriverNamesEachBusIdsMinor) {
    const fs::path driver = fs::temp_directory_path() / ("nvidia-" + std::to_string(getpid()));
    for (const auto& [bus, minor] : {std::pair{"0000:07:00.0", 3}, {"0000:0a:00.0", 0}}) {
        fs::create_directories(driver / bus);
        std::ofstream(driver / bus / "information")
                << "Model: \t\t Tesla V100-SXM3-32GB\nIRQ:   \t\t 83\nDevice Minor: \t " << minor
                << "\n";
    }
    EXPECT_EQ(gpu_device_files("", {"0000:07:00.0", "0000:0A:00.0"}, driver.string()),
              (std::vector<std::string>{"/dev/nvidia3", "/dev/nvidia0"}));
    // One GPU the driver does not list: none is known, so none is denied.
    EXPECT_TRUE(gpu_device_files("", {"0000:07:00.0", "0000:0b:00.0"}, driver.string()).empty());
    fs::remove_all(driver);
}

TEST(GpuDevices, RulesDenyTheCharacterDevicesNotGiven) {
    const std::string plain = fs::temp_directory_path() / ("plain-" + std::to_string(getpid()));
    std::ofstream(plain) << "not a device";
    // /dev/null is 1:3 and /dev/zero 1:5 on Linux.
    const std::vector<std::string> files = {"/dev/null", "/dev/zero", plain, "/nonexistent"};
    EXPECT_EQ(denied_gpu_rules(files, {0}), (std::vector<std::string>{"c 1:5 rwm"}));
    EXPECT_EQ(denied_gpu_rules(files, {}), (std::vector<std::string>{"c 1:3 rwm", "c 1:5 rwm"}));
    fs::remove(plain);
}

}  // namespace
}  // namespace cohort::agent
