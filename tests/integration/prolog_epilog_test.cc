// The site's prolog and epilog, run by each agent around a job's time on its node: before
// the job's first process, after its last, with a clean environment; a failure drains the
// node with the reason, and a failed prolog requeues the job, which runs elsewhere.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

// A directory of hook programs, removed with the object.
class HookDir {
public:
    HookDir() {
        std::string pattern = std::filesystem::temp_directory_path().string() + "/hooks.XXXXXX";
        path_ = mkdtemp(pattern.data());
        chmod(path_.c_str(), 0755);
    }

    ~HookDir() { std::filesystem::remove_all(path_); }

    HookDir(const HookDir&) = delete;
    HookDir& operator=(const HookDir&) = delete;

    // Writes an executable shell script; returns its path.
    std::string script(const std::string& name, const std::string& body) const {
        const std::string file = path_ + "/" + name;
        std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
        chmod(file.c_str(), 0755);
        return file;
    }

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::unique_ptr<LocalCluster> cluster_with(int nodes, const nlohmann::json& settings) {
    auto cluster = std::make_unique<LocalCluster>(nodes, with_settings(settings));
    EXPECT_TRUE(cluster->up());
    return cluster;
}

TEST(PrologEpilog, PrologBeforeTheJobAndEpilogAfterItSeeTheJobButNotTheUsersEnvironment) {
    HookDir hooks;
    const std::string prolog = hooks.script(
            "prolog", "{ env; echo uid=$(id -u); } > " + hooks.path() + "/prolog.$SLURM_JOB_ID");
    const std::string epilog =
            hooks.script("epilog", "env > " + hooks.path() + "/epilog.$SLURM_JOB_ID");
    auto cluster = cluster_with(1, {{"prolog", prolog}, {"epilog", epilog}});
    const std::string out = cluster->work_dir() + "/hooked.out";
    // The script checks that the prolog ran first; the user's LEAKME must not reach the hooks.
    const uint64_t id = submit_batch(
            *cluster, {"--export=ALL,LEAKME=from-the-user", "-o", out, "--wrap",
                       "test -s " + hooks.path() + "/prolog.$SLURM_JOB_ID && echo prolog-first"});
    ASSERT_GT(id, 0u);
    EXPECT_EQ(cluster->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(read_text(out), "prolog-first\n");

    const std::string seen = read_text(hooks.path() + "/prolog." + std::to_string(id));
    EXPECT_NE(seen.find("SLURM_JOB_ID=" + std::to_string(id) + "\n"), std::string::npos) << seen;
    EXPECT_NE(seen.find("SLURM_SCRIPT_CONTEXT=prolog_slurmd\n"), std::string::npos) << seen;
    EXPECT_NE(seen.find("SLURMD_NODENAME=node1\n"), std::string::npos) << seen;
    EXPECT_NE(seen.find("SLURM_JOB_UID=" + std::to_string(getuid()) + "\n"), std::string::npos)
            << seen;
    EXPECT_NE(seen.find("uid=" + std::to_string(geteuid()) + "\n"), std::string::npos)
            << "hooks run as the agent's user (root on a cluster): " << seen;
    EXPECT_EQ(seen.find("LEAKME"), std::string::npos) << "the user's variables reached the prolog";
    // The epilog ran before the job was reported done.
    const std::string after = read_text(hooks.path() + "/epilog." + std::to_string(id));
    EXPECT_NE(after.find("SLURM_SCRIPT_CONTEXT=epilog_slurmd\n"), std::string::npos) << after;
    EXPECT_EQ(after.find("LEAKME"), std::string::npos) << after;
}

TEST(PrologEpilog, AFailedPrologDrainsItsNodeAndTheJobRunsOnAnother) {
    HookDir hooks;
    const std::string prolog =
            hooks.script("prolog", "[ \"$SLURMD_NODENAME\" = node1 ] && exit 3; exit 0");
    auto cluster = cluster_with(2, {{"prolog", prolog}});
    // Two jobs of a whole node each, once both nodes serve: one of them is placed on node1
    // whatever the placement order.
    ASSERT_TRUE(eventually(
            [&] {
                return node_json(*cluster, "node1")["state"] == nlohmann::json::array({"IDLE"})
                       && node_json(*cluster, "node2")["state"] == nlohmann::json::array({"IDLE"});
            },
            seconds(30)));
    const uint64_t first = submit_batch(*cluster, {"-N1", "--exclusive", "--wrap", "sleep 1"});
    const uint64_t second = submit_batch(*cluster, {"-N1", "--exclusive", "--wrap", "sleep 1"});
    EXPECT_EQ(cluster->wait_final_state(first, seconds(60)), "COMPLETED");
    EXPECT_EQ(cluster->wait_final_state(second, seconds(60)), "COMPLETED");

    const nlohmann::json node1 = node_json(*cluster, "node1");
    EXPECT_NE(node1["state"].dump().find("DRAIN"), std::string::npos) << node1.dump();
    EXPECT_EQ(node1.value("reason", ""), "prolog " + prolog + " exited 3") << node1.dump();
    int restarts = 0;
    for (uint64_t id : {first, second}) {
        const nlohmann::json job = accounted_job_json(*cluster, id);
        EXPECT_EQ(job.value("nodes", ""), "node2") << job.dump();
        restarts += job.value("restart_cnt", 0);
    }
    EXPECT_EQ(restarts, 1) << "the job placed on node1 was requeued once";
}

TEST(PrologEpilog, AFailedEpilogDrainsItsNodeAfterTheJobCompletes) {
    HookDir hooks;
    const std::string epilog = hooks.script("epilog", "exit 2");
    auto cluster = cluster_with(1, {{"epilog", epilog}});
    const uint64_t id = submit_batch(*cluster, {"--wrap", "true"});
    EXPECT_EQ(cluster->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_TRUE(eventually(
            [&] {
                return node_json(*cluster, "node1").value("reason", "")
                       == "epilog " + epilog + " exited 2";
            },
            seconds(20)))
            << node_json(*cluster, "node1").dump();
}

}  // namespace
}  // namespace cohort::testing
