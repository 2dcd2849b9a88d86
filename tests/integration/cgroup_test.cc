// Jobs in cgroups (needs root and a writable cgroup hierarchy; skips elsewhere, saying
// why): processes that leave the job's process group die with the job, and the job's
// memory is a limit the kernel enforces.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
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
        const std::string log = read_text(cluster_->state_dir() + "/cohortd-node1.log");
        if (log.find("jobs run in cgroups") == std::string::npos) {
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

    std::unique_ptr<LocalCluster> cluster_;
};

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

TEST_F(CgroupTest, TheJobsMemoryIsALimitTheKernelEnforces) {
    const std::string out = cluster_->work_dir() + "/memory.out";
    // 256 MiB in a job of 64: the kernel's OOM killer ends the allocating process.
    const uint64_t id = submit_batch(
            *cluster_, {"--mem=64M", "-o", out, "--wrap",
                        "python3 -c 'x = bytearray(256 << 20); print(\"allocated\")'; "
                        "echo exit=$?; python3 -c 'x = bytearray(16 << 20); print(\"small\")'"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    const std::string text = read_text(out);
    EXPECT_EQ(text.find("allocated"), std::string::npos) << text;
    EXPECT_NE(text.find("exit=137"), std::string::npos) << text;
    EXPECT_NE(text.find("small"), std::string::npos) << "within the limit it runs: " << text;
}

}  // namespace
}  // namespace cohort::testing
