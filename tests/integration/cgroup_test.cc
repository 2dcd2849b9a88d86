// Jobs in cgroups (needs root and a writable cgroup hierarchy; skips elsewhere, saying
// why): processes that leave the job's process group die with the job, the job's memory is
// a limit the kernel enforces, its CPUs are the cores it holds, and what it used is read back
// from the cgroup into accounting.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

class CgroupTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) {
            GTEST_SKIP() << "creating cgroups needs root";
        }
        cluster_ = std::make_unique<LocalCluster>(1);
        ASSERT_TRUE(cluster_->up());
        if (const std::string log = why_no_cgroups(*cluster_); !log.empty()) {
            GTEST_SKIP() << "the agent runs jobs without cgroups here: " << log;
        }
    }

    void TearDown() override {
        if (HasFailure() && cluster_) {
            cluster_->dump_logs();
        }
    }

    // The pid a job's daemon wrote, once it has.
    pid_t daemon_pid(const std::string& file) const {
        pid_t pid = 0;
        EXPECT_TRUE(eventually(
                [&] {
                    std::ifstream(file) >> pid;
                    return pid > 0;
                },
                seconds(20)));
        return pid;
    }

    // One sacct field of a finished job, as `cohort acct -P -n -o FIELD` prints it.
    std::string accounted(uint64_t id, const std::string& field) const {
        CommandResult result =
                cluster_->cohort({"acct", "-X", "-P", "-n", "-j", std::to_string(id), "-o", field});
        EXPECT_EQ(result.exit_code, 0) << result.err;
        std::string value = result.out;
        while (!value.empty() && value.back() == '\n') {
            value.pop_back();
        }
        return value;
    }

    std::unique_ptr<LocalCluster> cluster_;
};

// sacct's CPU time, [D-]HH:MM:SS or MM:SS.mmm, in seconds.
double cpu_seconds(const std::string& text) {
    double total = 0;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, ':')) {
        total = total * 60 + std::stod(part);
    }
    return total;
}

// `setsid` leaves the process group the agent signals; the cgroup still holds it.
std::string daemonizing(const std::string& pid_file) {
    return "setsid sh -c 'echo $$ > " + pid_file
           + "; exec sleep 300' < /dev/null > /dev/null 2>&1 &";
}

TEST_F(CgroupTest, ADaemonizedProcessDiesWhenItsJobIsCancelled) {
    const std::string pid_file = cluster_->work_dir() + "/daemon1.pid";
    const uint64_t id = submit_batch(*cluster_, {"--wrap", daemonizing(pid_file) + " sleep 300"});
    const pid_t daemon = daemon_pid(pid_file);
    ASSERT_GT(daemon, 0);
    ASSERT_TRUE(process_running(daemon));
    ASSERT_EQ(cluster_->cohort({"cancel", std::to_string(id)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "CANCELLED");
    EXPECT_TRUE(eventually([&] { return !process_running(daemon); }, seconds(20)))
            << "pid " << daemon << " outlived its job";
}

TEST_F(CgroupTest, ADaemonLeftBehindDiesWhenItsJobEnds) {
    const std::string pid_file = cluster_->work_dir() + "/daemon2.pid";
    // The script ends as soon as its daemon is up.
    const uint64_t id =
            submit_batch(*cluster_, {"--wrap", daemonizing(pid_file) + " while [ ! -s " + pid_file
                                                       + " ]; do sleep 0.05; done"});
    const pid_t daemon = daemon_pid(pid_file);
    ASSERT_GT(daemon, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
    EXPECT_TRUE(eventually([&] { return !process_running(daemon); }, seconds(20)))
            << "pid " << daemon << " outlived its job";
    const std::string log = read_text(cluster_->state_dir() + "/cohortd-node1.log");
    EXPECT_NE(log.find("job " + std::to_string(id) + ": killed 1 process(es) left in its cgroup"),
              std::string::npos)
            << log;
}

// Stopping the instance ends the jobs still running, daemons included, and leaves no cgroup
// of its agents behind.
TEST_F(CgroupTest, StoppingTheInstanceLeavesNoProcessAndNoCgroupBehind) {
    const std::string pid_file = cluster_->work_dir() + "/daemon3.pid";
    const uint64_t id = submit_batch(*cluster_, {"--wrap", daemonizing(pid_file) + " sleep 300"});
    const pid_t daemon = daemon_pid(pid_file);
    ASSERT_GT(daemon, 0);
    ASSERT_EQ(cluster_->job_state(id), "RUNNING");
    std::vector<std::string> dirs;
    std::ifstream listed(cluster_->state_dir() + "/nodes/node1/cgroup_dirs");
    for (std::string dir; std::getline(listed, dir);) {
        dirs.push_back(dir);
    }
    ASSERT_FALSE(dirs.empty());
    CommandResult stopped = run_command(
            {cohort_binary(), "stop", "--state-dir", cluster_->state_dir()}, "", seconds(60));
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_TRUE(eventually([&] { return !process_running(daemon); }, seconds(10)));
    for (const std::string& dir : dirs) {
        EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
    }
}

TEST_F(CgroupTest, TheJobsMemoryIsALimitTheKernelEnforces) {
    const std::string out = cluster_->work_dir() + "/memory.out";
    // 256 MiB in a job of 64: the kernel's OOM killer ends the allocating process.
    const uint64_t id = submit_batch(
            *cluster_, {"--mem=64M", "-o", out, "--wrap",
                        "python3 -c 'x = bytearray(256 << 20); print(\"allocated\")'; "
                        "echo exit=$?; python3 -c 'x = bytearray(16 << 20); print(\"small\")'"});
    // The script went on and ended 0, but a process of the job was killed for its memory:
    // OUT_OF_MEMORY, as in Slurm.
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "OUT_OF_MEMORY");
    const std::string text = read_text(out);
    EXPECT_EQ(text.find("allocated"), std::string::npos) << text;
    EXPECT_NE(text.find("exit=137"), std::string::npos) << text;
    EXPECT_NE(text.find("small"), std::string::npos) << "within the limit it runs: " << text;
    EXPECT_EQ(accounted(id, "State"), "OUT_OF_MEMORY");
    // The peak the kernel counted: some memory, never more than the limit.
    const std::string max_rss = accounted(id, "MaxRSS");
    ASSERT_FALSE(max_rss.empty());
    EXPECT_EQ(max_rss.back(), 'K') << max_rss;
    const long kib = std::stol(max_rss);
    EXPECT_GT(kib, 1024) << max_rss;
    EXPECT_LE(kib, 64 * 1024) << max_rss;
    EXPECT_EQ(accounted(id, "MaxRSSNode"), "node1");
}

// Each step runs in a cgroup of its own inside the job's: sacct lists the step's own CPU
// time and peak memory, and the step that goes past the job's memory is the one that ends
// OUT_OF_MEMORY.
TEST_F(CgroupTest, EachStepHasItsOwnUsageAndTheStepThatRanOutOfMemoryIsNamed) {
    const std::string run = cohort_binary() + " run -n1 ";
    const uint64_t id = submit_batch(
            *cluster_, {"--mem=128M", "--wrap",
                        run
                                + "python3 -c 'import time; x = bytearray(48 << 20); "
                                  "e = time.process_time() + 1; exec(\"while time.process_time() < "
                                  "e: pass\")'; "
                                + run + "python3 -c 'x = bytearray(512 << 20)'; " + run + "true"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(90)), "OUT_OF_MEMORY");
    CommandResult steps = cluster_->cohort({"acct", "-P", "-n", "-j", std::to_string(id), "-o",
                                            "JobID,State,TotalCPU,MaxRSS,MaxRSSNode"});
    ASSERT_EQ(steps.exit_code, 0) << steps.err;
    std::map<std::string, std::vector<std::string>> rows;  // JobID -> the other fields
    std::istringstream lines(steps.out);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> fields;
        std::istringstream cells(line);
        for (std::string field; std::getline(cells, field, '|');) {
            fields.push_back(field);
        }
        fields.resize(5);
        rows[fields[0]] = {fields.begin() + 1, fields.end()};
    }
    const std::string job = std::to_string(id);
    ASSERT_EQ(rows.count(job + ".0"), 1u) << steps.out;
    ASSERT_EQ(rows.count(job + ".1"), 1u) << steps.out;
    ASSERT_EQ(rows.count(job + ".2"), 1u) << steps.out;
    const std::vector<std::string>& busy = rows[job + ".0"];
    EXPECT_EQ(busy[0], "COMPLETED");
    EXPECT_GE(cpu_seconds(busy[1]), 0.8) << "step 0 burned 1 s of CPU: " << steps.out;
    ASSERT_FALSE(busy[2].empty()) << steps.out;
    EXPECT_GE(std::stol(busy[2]), 40 * 1024) << "a 48 MiB bytearray: " << steps.out;
    EXPECT_EQ(busy[3], "node1");
    EXPECT_EQ(rows[job + ".1"][0], "OUT_OF_MEMORY") << steps.out;
    EXPECT_EQ(rows[job + ".2"][0], "COMPLETED") << steps.out;
    EXPECT_LT(cpu_seconds(rows[job + ".2"][1]), 0.5)
            << "`true` used next to nothing: " << steps.out;
}

TEST_F(CgroupTest, AJobWithinItsMemoryEndsCompleted) {
    const uint64_t id = submit_batch(
            *cluster_, {"--mem=64M", "--wrap", "python3 -c 'x = bytearray(16 << 20)'"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(accounted(id, "State"), "COMPLETED");
}

// Two busy loops for two seconds in a job that holds one CPU: the cpuset lets them share
// one core, so the job's CPU time, read from its cgroup, stays near its wall time.
TEST_F(CgroupTest, AOneCpuJobRunsTwoBusyLoopsOnOneCore) {
    cpu_set_t offered;
    if (sched_getaffinity(0, sizeof(offered), &offered) != 0 || CPU_COUNT(&offered) < 2) {
        GTEST_SKIP() << "this host offers one CPU: nothing to confine to";
    }
    const std::string out = cluster_->work_dir() + "/cpus.out";
    const std::string busy = "timeout 2 sh -c 'while :; do :; done'";
    const uint64_t id = submit_batch(*cluster_, {"-n1", "-o", out, "--wrap",
                                                 "grep Cpus_allowed_list /proc/self/status; " + busy
                                                         + " & " + busy + " & wait"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    const std::string text = read_text(out);
    // One CPU id alone, no range or list.
    const size_t colon = text.find(':');
    ASSERT_NE(colon, std::string::npos) << text;
    const std::string allowed = text.substr(text.find_first_not_of(" \t", colon + 1));
    EXPECT_EQ(allowed.find_first_of(",-"), std::string::npos) << text;
    const double used = cpu_seconds(accounted(id, "TotalCPU"));
    EXPECT_GT(used, 0.5) << "two busy loops on a core for 2 s";
    EXPECT_LT(used, 3.0) << "two cores' worth (4 s) means the cpuset did not hold";
    const double user = cpu_seconds(accounted(id, "UserCPU"));
    const double system = cpu_seconds(accounted(id, "SystemCPU"));
    EXPECT_NEAR(user + system, used, 0.01);
}

// job_pids_max: a job that forks past it gets EAGAIN at the cap, and its other processes run.
TEST(CgroupPids, AJobCannotHaveMoreProcessesThanJobPidsMax) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "creating cgroups needs root";
    }
    if (!std::filesystem::exists("/sys/fs/cgroup/pids/cgroup.procs")) {
        GTEST_SKIP() << "no v1 pids hierarchy at /sys/fs/cgroup/pids";
    }
    LocalCluster cluster(1, with_settings({{"job_pids_max", 20}}));
    ASSERT_TRUE(cluster.up());
    const std::string out = cluster.work_dir() + "/pids.out";
    // 40 children asked for: the shepherd, the shell, python and its children share 20.
    const std::string forks =
            "import os, signal, time\n"
            "kids = []\n"
            "try:\n"
            "    for i in range(40):\n"
            "        pid = os.fork()\n"
            "        if pid == 0:\n"
            "            time.sleep(30)\n"
            "            os._exit(0)\n"
            "        kids.append(pid)\n"
            "except OSError as e:\n"
            "    print('refused', e.errno)\n"
            "print('children=%d' % len(kids))\n"
            "for k in kids:\n"
            "    os.kill(k, signal.SIGKILL)\n"
            "    os.waitpid(k, 0)\n";
    std::ofstream(cluster.work_dir() + "/forks.py") << forks;
    const uint64_t id = submit_batch(cluster, {"-o", out, "--wrap", "python3 forks.py"});
    EXPECT_EQ(cluster.wait_final_state(id, seconds(60)), "COMPLETED")
            << shown_job_json(cluster, id).dump();
    const std::string text = read_text(out);
    const size_t at = text.find("children=");
    ASSERT_NE(at, std::string::npos) << text;
    const int children = std::stoi(text.substr(at + 9));
    EXPECT_GT(children, 5) << text;
    EXPECT_LT(children, 20) << "the cap holds: " << text;
    EXPECT_NE(text.find("refused 11"), std::string::npos) << "fork got EAGAIN: " << text;
}

// A job that cannot be confined is not run unconfined, as in Slurm's task/cgroup. Under v2, the
// kernel makes no cgroup below a node cgroup whose cgroup.max.descendants is 0: the batch job
// fails with that reason, a step's ranks fail to start, and once the kernel allows it again,
// jobs run.
TEST(CgroupRefused, AJobThatCannotBeConfinedFailsInsteadOfRunning) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "creating cgroups needs root";
    }
    LocalCluster cluster(1, with_settings({{"cgroup", "v2"}}));
    ASSERT_TRUE(cluster.up());
    if (const std::string log = why_no_cgroups(cluster); !log.empty()) {
        GTEST_SKIP() << "the agent runs jobs without cgroups here: " << log;
    }
    // The node's own cgroup, which the agent lists for `cohort stop`.
    std::string node_dir;
    std::ifstream(cluster.state_dir() + "/nodes/node1/cgroup_dirs") >> node_dir;
    const std::string limit = node_dir + "/cgroup.max.descendants";
    ASSERT_TRUE(std::filesystem::exists(limit)) << limit;
    const auto set_limit = [&](const std::string& value) {
        std::ofstream(limit) << value << "\n";
        return read_text(limit) == value + "\n";
    };
    ASSERT_TRUE(set_limit("0"));

    const uint64_t id = submit_batch(cluster, {"--wrap", "true"});
    EXPECT_EQ(cluster.wait_final_state(id, seconds(30)), "FAILED");
    const CommandResult shown = cluster.cohort({"show", "job", std::to_string(id)});
    EXPECT_NE(shown.out.find("Reason=cannot confine the job in its cgroup: "), std::string::npos)
            << shown.out;
    const CommandResult step = cluster.cohort({"run", "true"});
    EXPECT_NE(step.exit_code, 0);
    EXPECT_NE(step.err.find("rank 0 on node1: cannot confine it in its job's cgroup: "),
              std::string::npos)
            << step.err;

    ASSERT_TRUE(set_limit("max"));
    const uint64_t allowed = submit_batch(cluster, {"--wrap", "true"});
    EXPECT_EQ(cluster.wait_final_state(allowed, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster.cohort({"run", "true"}).exit_code, 0);
}

}  // namespace
}  // namespace cohort::testing
