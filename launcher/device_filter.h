// The devices a job may not open under cgroup v2. v2 has no devices.deny file: the kernel
// asks a BPF program of type BPF_PROG_TYPE_CGROUP_DEVICE, attached to the job's cgroup, at
// each open or mknod of a device node by a process inside it (or inside a step's cgroup
// below it). This builds that program from the rules the v1 devices controller takes
// ("c 195:0 rwm"), so both layouts deny the same GPUs; it allows every other device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <linux/bpf.h>

#include "common/status.h"

namespace cohort::agent {

// One rule as devices.deny takes it: "TYPE MAJOR:MINOR ACCESS", TYPE c (character), b
// (block) or a (both), MAJOR and MINOR a number or *, ACCESS some of r, w and m (mknod).
struct DeviceRule {
    static constexpr int64_t kAny = -1;
    char type = 'a';
    int64_t major = kAny;
    int64_t minor = kAny;
    uint32_t access = 0;  // BPF_DEVCG_ACC_* bits
};

Result<DeviceRule> parse_device_rule(const std::string& text);

// The program: denies (returns 0 for) an access that a rule matches, allows the rest.
std::vector<bpf_insn> device_deny_program(const std::vector<DeviceRule>& rules);

// Loads the program for `rules` and attaches it to the cgroup v2 directory, which keeps it
// until the cgroup is removed. Fails, naming the kernel's reason, where BPF is not allowed.
Status deny_devices_v2(const std::string& cgroup_dir, const std::vector<std::string>& rules);

}  // namespace cohort::agent
