// Restarting cohortd on a node (an upgrade) ends no job: batch scripts run under shepherds
// that outlive the agent, the next agent adopts them, re-arms their time limits and warning
// signals and reports their ends, including ends that came while no agent ran.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "launcher/job_cgroup.h"
#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

size_t count_of(const std::string& text, const std::string& what) {
    size_t count = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++count;
    }
    return count;
}

// The job runs through the restart: its --signal (due 3 s in, after the restart) still comes
// once, from the new agent, and its exit code is reported as if nothing had happened.
TEST(AgentRestart, ARunningBatchJobRunsOnAndItsEndIsReported) {
    LocalCluster cluster(1);
    ASSERT_TRUE(cluster.up());
    const std::string script = cluster.work_dir() + "/job.sh";
    std::ofstream(script) << "#!/bin/bash\n"
                             "trap 'echo warned' USR1\n"
                             "echo started\n"
                             "for i in $(seq 1 10); do sleep 0.5; done\n"
                             "echo finished\n"
                             "exit 3\n";
    const uint64_t id = submit_batch(cluster, {"-t", "1", "--signal=B:USR1@57", script});
    ASSERT_TRUE(eventually([&] { return cluster.job_state(id) == "RUNNING"; }, seconds(20)));

    ASSERT_TRUE(cluster.restart_agent("node1", {}));
    EXPECT_EQ(cluster.wait_final_state(id, seconds(30)), "FAILED");
    const nlohmann::json job = accounted_job_json(cluster, id);
    EXPECT_EQ(job["exit_code"]["return_code"]["number"], 3) << job.dump();
    EXPECT_EQ(job["restart_cnt"], 0) << "the job was not requeued";
    const std::string output =
            read_text(cluster.work_dir() + "/slurm-" + std::to_string(id) + ".out");
    EXPECT_EQ(count_of(output, "started"), 1u) << output;
    EXPECT_EQ(count_of(output, "warned"), 1u) << output;
    EXPECT_EQ(count_of(output, "finished"), 1u) << output;
    const std::string log = read_text(cluster.state_dir() + "/cohortd-node1.log");
    EXPECT_NE(log.find("adopted its running batch script"), std::string::npos) << log;
    const auto nodes =
            nlohmann::json::parse(cluster.cohort({"nodes", "--json"}).out, nullptr, false);
    EXPECT_EQ(nodes["nodes"][0]["state"], nlohmann::json::array({"IDLE"})) << nodes.dump();
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

// A script that ends while no agent runs on its node: the next agent finds the status its
// shepherd wrote and reports it; the job is neither failed with the node nor requeued.
TEST(AgentRestart, AnEndWhileNoAgentRanIsReportedByTheNextOne) {
    LocalCluster cluster(1);
    ASSERT_TRUE(cluster.up());
    // The script ends only once its agent is gone, however slowly the test polls.
    const std::string started = cluster.work_dir() + "/started";
    const std::string agent_gone = cluster.work_dir() + "/agent_gone";
    const uint64_t id =
            submit_batch(cluster, {"--wrap", "touch " + started + "; while [ ! -e " + agent_gone
                                                     + " ]; do sleep 0.05; done; exit 4"});
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(started); }, seconds(20)));

    // The controller gives a silent node two heartbeats (2 s here) before it is DOWN.
    LocalCluster::AgentStart after_a_while;
    after_a_while.while_away = [&] {
        std::ofstream{agent_gone};
    };
    after_a_while.away = milliseconds(700);
    ASSERT_TRUE(cluster.restart_agent("node1", after_a_while));
    EXPECT_EQ(cluster.wait_final_state(id, seconds(30)), "FAILED");
    const nlohmann::json job = accounted_job_json(cluster, id);
    EXPECT_EQ(job["exit_code"]["return_code"]["number"], 4) << job.dump();
    EXPECT_EQ(job["restart_cnt"], 0);
    // Reported and acknowledged: nothing of the job is left in the node's spool (the agent's
    // list of its cgroup directories stays).
    auto job_files_left = [&] {
        std::vector<std::string> names;
        for (const auto& entry :
             std::filesystem::directory_iterator(cluster.state_dir() + "/nodes/node1")) {
            if (entry.path().filename() != agent::kCgroupDirsFile) {
                names.push_back(entry.path().filename().string());
            }
        }
        return names;
    };
    EXPECT_TRUE(eventually([&] { return job_files_left().empty(); }, seconds(10)))
            << job_files_left().size() << " files of the job left in the spool";
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

}  // namespace
}  // namespace cohort::testing
