// The cgroup v2 devices program: rules parsed as devices.deny takes them, bad ones named; and
// (root, on a cgroup2 mount) a process in a job's step cgroup cannot open a denied device
// while others open as before.
#include "launcher/device_filter.h"

#include <filesystem>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/job_cgroup.h"
#include "launcher/process.h"

namespace cohort::agent {
namespace {

TEST(DeviceRule, ParsesWhatDevicesDenyTakes) {
    auto gpu = parse_device_rule("c 195:3 rwm");
    ASSERT_TRUE(gpu) << gpu.status().message();
    EXPECT_EQ(gpu->type, 'c');
    EXPECT_EQ(gpu->major, 195);
    EXPECT_EQ(gpu->minor, 3);
    EXPECT_EQ(gpu->access, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD);
    auto any = parse_device_rule("b 8:* w");
    ASSERT_TRUE(any) << any.status().message();
    EXPECT_EQ(any->type, 'b');
    EXPECT_EQ(any->minor, DeviceRule::kAny);
    EXPECT_EQ(any->access, BPF_DEVCG_ACC_WRITE);
}

TEST(DeviceRule, BadRulesAreNamedWithWhatIsAccepted) {
    for (const char* bad : {"", "x 1:3 rwm", "c 1:3 rwx", "c 1 rwm", "c 1:3*: r", "c 1:3"}) {
        auto rule = parse_device_rule(bad);
        ASSERT_FALSE(rule) << bad;
        EXPECT_EQ(rule.status().message(),
                  std::string("device rule: invalid value '") + bad
                          + "' (accepted: TYPE MAJOR:MINOR ACCESS, TYPE c, b or a, MAJOR and "
                            "MINOR a number or *, ACCESS some of r, w, m)");
    }
}

TEST(DeviceRule, TheProgramEndsByAllowingWhatNoRuleDenies) {
    const auto program = device_deny_program({});
    ASSERT_GE(program.size(), 2u);
    EXPECT_EQ(program[program.size() - 2].imm, 1);  // r0 = 1
    EXPECT_EQ(program.back().code, BPF_JMP | BPF_EXIT);
    // One block per rule: its tests, the access test and the denial.
    auto rule = parse_device_rule("c 195:3 rwm");
    ASSERT_TRUE(rule);
    EXPECT_EQ(device_deny_program({*rule}).size(), program.size() + 3 + 5);
}

// Runs `script` in a new process inside the job's step cgroup; its exit code.
int exit_code_in_step(const JobCgroups& cgroups, uint64_t job, const std::string& script) {
    SpawnSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cgroup_procs = cgroups.procs_files(job, "0");
    auto spawned = spawn_process(spec);
    if (!spawned) {
        ADD_FAILURE() << spawned.status().message();
        return -1;
    }
    int status = 0;
    waitpid(spawned->pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(DeviceFilter, AV2JobCannotOpenADeniedDeviceAndOpensTheOthers) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "creating cgroups needs root";
    }
    const JobCgroups cgroups("v2", "/sys/fs/cgroup", "cohort_devices_" + std::to_string(getpid()));
    if (!cgroups.enabled()) {
        GTEST_SKIP() << "no cgroup2 hierarchy here: " << cgroups.why_disabled();
    }
    constexpr uint64_t kJob = 44;
    // /dev/full (c 1:7) is denied; /dev/zero (c 1:5) is not.
    const Status created = cgroups.create(kJob, {}, 0, {"c 1:7 rwm"});
    if (!created && created.message().find("loading the devices program") != std::string::npos
        && created.message().find("Operation not permitted") != std::string::npos) {
        GTEST_SKIP() << "BPF is not allowed here: " << created.message();
    }
    ASSERT_TRUE(created) << created.message();
    ASSERT_TRUE(cgroups.create_step(kJob, "0"));
    const std::string open_full = "exec 3</dev/full";
    const std::string open_zero = "exec 3</dev/zero";
    EXPECT_NE(exit_code_in_step(cgroups, kJob, open_full), 0) << "/dev/full opened in the job";
    EXPECT_EQ(exit_code_in_step(cgroups, kJob, open_zero), 0) << "/dev/zero refused in the job";
    // Outside the job's cgroup nothing changes.
    EXPECT_EQ(std::system(("/bin/sh -c '" + open_full + "'").c_str()), 0);
    cgroups.remove(kJob);
}

}  // namespace
}  // namespace cohort::agent
