#include "launcher/gpu_devices.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/hostlist.h"

namespace cohort::agent {
namespace {

// "Device Minor:" of the driver's information file for one GPU; -1 where absent.
int nvidia_minor(const std::string& information_file) {
    std::ifstream in(information_file);
    const std::string key = "Device Minor:";
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(key, 0) == 0) {
            try {
                return std::stoi(line.substr(key.size()));
            } catch (const std::exception&) {
                return -1;
            }
        }
    }
    return -1;
}

}  // namespace

std::vector<std::string> gpu_device_files(const std::string& configured,
                                          const std::vector<std::string>& pci_bus_ids,
                                          const std::string& driver_dir) {
    if (!configured.empty()) {
        auto files = expand_hostlist(configured);  // checked when the config was read
        return files ? *files : std::vector<std::string>{};
    }
    std::vector<std::string> files;
    for (const std::string& bus : pci_bus_ids) {
        // The driver names its directories by lower-case bus id.
        std::string lower = bus;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const int minor = nvidia_minor(driver_dir + "/" + lower + "/information");
        if (minor < 0) {
            return {};  // not all known: restrict none rather than the wrong ones
        }
        files.push_back(fmt::format("/dev/nvidia{}", minor));
    }
    return files;
}

std::vector<std::string> denied_gpu_rules(const std::vector<std::string>& files,
                                          const std::vector<int32_t>& allocated) {
    std::vector<std::string> rules;
    for (size_t index = 0; index < files.size(); ++index) {
        if (std::find(allocated.begin(), allocated.end(), static_cast<int32_t>(index))
            != allocated.end()) {
            continue;
        }

        struct stat st {};

        if (stat(files[index].c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) {
            continue;
        }
        rules.push_back(fmt::format("c {}:{} rwm", major(st.st_rdev), minor(st.st_rdev)));
    }
    return rules;
}

}  // namespace cohort::agent
