// A step launch travels down a tree of agents: the client contacts node 0 only, each agent
// passes the launch on to a few children, and every agent calls the client back.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <signal.h>

#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

std::string log_of(const LocalCluster& cluster, const std::string& node) {
    std::ifstream in(cluster.state_dir() + "/cohortd-" + node + ".log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(LaunchTree, FiveNodesWithFanoutTwoLaunchThroughTwoLevels) {
    LocalCluster cluster(5, {"--launch-fanout", "2"});
    ASSERT_TRUE(cluster.up());
    CommandResult result = cluster.cohort({"run", "-N5", "-n10", "-l", "--mpi=none", "sh", "-c",
                                           "echo $SLURMD_NODENAME $SLURM_PROCID of $SLURM_NTASKS"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::istringstream lines(result.out);
    std::vector<std::string> seen;
    for (std::string line; std::getline(lines, line);) {
        seen.push_back(line.substr(line.find(": ") + 2));
    }
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), 10u) << result.out;
    EXPECT_EQ(seen.front(), "node1 0 of 10");
    EXPECT_EQ(seen.back(), "node5 9 of 10");
    // node1 hands {node2, node3} and {node4, node5} to node2 and node4, which pass on one each.
    const std::string root = log_of(cluster, "node1");
    EXPECT_NE(root.find("launch passed on to node2 (1 nodes below it)"), std::string::npos);
    EXPECT_NE(root.find("launch passed on to node4 (1 nodes below it)"), std::string::npos);
    EXPECT_NE(log_of(cluster, "node2").find("launch passed on to node3 (0 nodes below it)"),
              std::string::npos);
    EXPECT_NE(log_of(cluster, "node4").find("launch passed on to node5 (0 nodes below it)"),
              std::string::npos);
    // An MPI step over the same tree: every step manager gets the peer table.
    result = cluster.cohort({"run", "-N5", "-n5", COHORT_MPI_PROGRAMS "/allreduce_ompi"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("rank 4 of 5 sum 10"), std::string::npos) << result.out;
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

TEST(LaunchTree, AnAgentThatCannotBeReachedIsNamed) {
    LocalCluster cluster(3);
    ASSERT_TRUE(cluster.up());
    CommandResult job = cluster.cohort({"batch", "--parsable", "-N3", "--wrap", "sleep 30"});
    ASSERT_EQ(job.exit_code, 0) << job.err;
    const std::string id = job.out.substr(0, job.out.find('\n'));
    for (int i = 0; i < 100 && cluster.job_state(std::stoull(id)) != "RUNNING"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Stop node3's agent: the launch cannot be passed on to it.
    std::ifstream pid_file(cluster.state_dir() + "/cohortd-node3.pid");
    pid_t pid = 0;
    pid_file >> pid;
    ASSERT_GT(pid, 0);
    kill(pid, SIGSTOP);
    CommandResult result = run_command({"/bin/sh", "-c",
                                        "SLURM_JOB_ID=" + id + " COHORT_LAUNCH_TIMEOUT=3 "
                                                + cohort_binary() + " run -N3 true"},
                                       cluster.conf(), std::chrono::seconds(60));
    kill(pid, SIGCONT);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("no answer to the launch within 3 s from node3"), std::string::npos)
            << result.err;
}

}  // namespace
}  // namespace cohort::testing
