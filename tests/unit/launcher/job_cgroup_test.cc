// JobCgroups against the kernel's cgroups (root only; each layout skips where this host
// lacks it): a process spawned into a step's cgroup and the daemon it starts are both
// counted as the job's, both die at kill_all, and the emptied cgroups are removed; a step's
// usage and out-of-memory kills are its own and the job's. v1 is this machine's layout for
// controllers; v2's tracking and kill run on its cgroup2 mount.
#include "launcher/job_cgroup.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/process.h"

namespace cohort::agent {
namespace {

std::string cgroup_test_dir() {
    return "cohort_test_" + std::to_string(getpid());
}

// Reaps this test's children and the orphans it adopted as subreaper, until `done`.
template <typename Predicate>
bool reaping_until(Predicate done) {
    for (int i = 0; i < 400; ++i) {
        while (waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

void expect_tracks_and_kills(const JobCgroups& cgroups) {
    constexpr uint64_t kJob = 42;
    ASSERT_TRUE(cgroups.create(kJob, {}, 64));
    ASSERT_TRUE(cgroups.create_step(kJob, "0"));
    // The daemon would escape killpg: it starts a session of its own.
    SpawnSpec spec;
    spec.argv = {"/bin/sh", "-c", "setsid sleep 300 & exec sleep 301"};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cgroup_procs = cgroups.procs_files(kJob, "0");
    prctl(PR_SET_CHILD_SUBREAPER, 1);  // the daemon's orphaned sleep comes back to be reaped
    auto spawned = spawn_process(spec);
    ASSERT_TRUE(spawned) << spawned.status().message();
    EXPECT_TRUE(reaping_until([&] { return cgroups.processes(kJob).size() == 2; }))
            << cgroups.processes(kJob).size() << " processes in the job's cgroup";

    EXPECT_EQ(cgroups.kill_all(kJob), 2);
    EXPECT_TRUE(reaping_until([&] { return cgroups.processes(kJob).empty(); }));
    cgroups.remove(kJob);
    for (const std::string& procs : cgroups.procs_files(kJob, "0")) {
        EXPECT_FALSE(std::filesystem::exists(procs)) << procs;
        const auto job_dir = std::filesystem::path(procs).parent_path().parent_path();
        EXPECT_FALSE(std::filesystem::exists(job_dir)) << job_dir;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// A process that burns CPU and touches memory for a moment, then exits: its job's cgroups
// count both after it is gone.
void expect_counts_usage(const JobCgroups& cgroups, bool counts_memory) {
    constexpr uint64_t kJob = 43;
    ASSERT_TRUE(cgroups.create(kJob, {}, 0));
    ASSERT_TRUE(cgroups.create_step(kJob, "batch"));
    ASSERT_TRUE(cgroups.create_step(kJob, "0"));
    SpawnSpec spec;
    spec.argv = {"/usr/bin/python3", "-c",
                 "import time\nx = bytearray(32 << 20)\nend = time.time() + 0.3\n"
                 "while time.time() < end: pass"};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cgroup_procs = cgroups.procs_files(kJob, "0");
    auto spawned = spawn_process(spec);
    ASSERT_TRUE(spawned) << spawned.status().message();
    int status = 0;
    ASSERT_EQ(waitpid(spawned->pid, &status, 0), spawned->pid);
    // The step's own, and the job's, which holds every step's.
    for (const protocol::JobUsage& used : {cgroups.step_usage(kJob, "0"), cgroups.usage(kJob)}) {
        EXPECT_GT(used.cpu_user_usec + used.cpu_system_usec, 100000u) << "0.3 s of busy loop";
        if (counts_memory) {
            EXPECT_GE(used.max_rss_kib, 32u << 10) << "a 32 MiB bytearray";
        }
        EXPECT_EQ(used.oom_kills, 0u);
    }
    const protocol::JobUsage idle = cgroups.step_usage(kJob, "batch");
    EXPECT_LT(idle.cpu_user_usec + idle.cpu_system_usec, 100000u) << "another step's usage";
    cgroups.remove_step(kJob, "0");
    cgroups.remove(kJob);
}

TEST(JobCgroups, V1TracksAndKillsEveryProcessOfAJobAndLimitsItsMemory) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "creating cgroups needs root";
    }
    const JobCgroups cgroups("v1", "/sys/fs/cgroup", cgroup_test_dir());
    if (!cgroups.enabled()) {
        GTEST_SKIP() << "no v1 hierarchy here: " << cgroups.why_disabled();
    }
    ASSERT_TRUE(cgroups.create(7, {}, 64));
    ASSERT_TRUE(cgroups.create_step(7, "batch"));
    const std::string memory_procs = cgroups.procs_files(7, "batch").at(1);  // freezer, memory
    ASSERT_NE(memory_procs.find("/memory/"), std::string::npos) << memory_procs;
    // The step holds the job's limit too, so that it is the one an out-of-memory kill names.
    for (const auto& dir : {std::filesystem::path(memory_procs).parent_path(),
                            std::filesystem::path(memory_procs).parent_path().parent_path()}) {
        std::ifstream limit(dir.string() + "/memory.limit_in_bytes");
        int64_t bytes = 0;
        limit >> bytes;
        EXPECT_EQ(bytes, int64_t{64} << 20) << dir;
    }
    cgroups.remove(7);
    EXPECT_FALSE(std::filesystem::exists(memory_procs));
    expect_tracks_and_kills(cgroups);
    expect_counts_usage(cgroups, /*counts_memory=*/true);
}

TEST(JobCgroups, V1StepThatGoesPastTheJobsMemoryIsTheOneKilledForIt) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "creating cgroups needs root";
    }
    const JobCgroups cgroups("v1", "/sys/fs/cgroup", cgroup_test_dir());
    if (!cgroups.enabled()) {
        GTEST_SKIP() << "no v1 hierarchy here: " << cgroups.why_disabled();
    }
    constexpr uint64_t kJob = 44;
    ASSERT_TRUE(cgroups.create(kJob, {}, 64));
    ASSERT_TRUE(cgroups.create_step(kJob, "batch"));
    ASSERT_TRUE(cgroups.create_step(kJob, "1"));
    SpawnSpec spec;
    spec.argv = {"/usr/bin/python3", "-c", "x = bytearray(256 << 20)"};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cgroup_procs = cgroups.procs_files(kJob, "1");
    auto spawned = spawn_process(spec);
    ASSERT_TRUE(spawned) << spawned.status().message();
    int status = 0;
    ASSERT_EQ(waitpid(spawned->pid, &status, 0), spawned->pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    EXPECT_GE(cgroups.step_usage(kJob, "1").oom_kills, 1u);
    EXPECT_EQ(cgroups.step_usage(kJob, "batch").oom_kills, 0u);
    EXPECT_GE(cgroups.usage(kJob).oom_kills, 1u);
    cgroups.remove_step(kJob, "1");  // as a step's end does; the job still counts the kill
    EXPECT_GE(cgroups.usage(kJob).oom_kills, 1u);
    cgroups.remove(kJob);
}

TEST(JobCgroups, V2TracksAndKillsEveryProcessOfAJob) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "creating cgroups needs root";
    }
    const JobCgroups cgroups("v2", "/sys/fs/cgroup", cgroup_test_dir());
    if (!cgroups.enabled()) {
        GTEST_SKIP() << "no cgroup2 hierarchy here: " << cgroups.why_disabled();
    }
    EXPECT_EQ(cgroups.version(), CgroupVersion::kV2);
    expect_tracks_and_kills(cgroups);
    // cpu.stat is in every v2 cgroup; memory.peak only where the memory controller is
    // delegated (not on this host's controller-less cgroup2 mount).
    expect_counts_usage(cgroups, /*counts_memory=*/false);
}

TEST(JobCgroups, NoneInTheConfigTurnsThemOffAndSaysSo) {
    const JobCgroups cgroups("none", "/sys/fs/cgroup", cgroup_test_dir());
    EXPECT_FALSE(cgroups.enabled());
    EXPECT_EQ(cgroups.why_disabled(), "the config's cgroup is none");
    EXPECT_TRUE(cgroups.create(1, {0}, 64)) << "a disabled JobCgroups does nothing";
    EXPECT_TRUE(cgroups.create_step(1, "batch"));
    EXPECT_TRUE(cgroups.procs_files(1, "batch").empty());
    EXPECT_EQ(cgroups.kill_all(1), 0);
}

}  // namespace
}  // namespace cohort::agent
