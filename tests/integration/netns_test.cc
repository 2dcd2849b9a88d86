// A node that really disappears: its agent runs in a network namespace of its own, joined to
// the host by a veth pair the test creates and removes, and the link is cut mid-job. Nothing
// kills the node's processes; the controller only stops hearing from it. The job must be
// requeued onto the node left, and the stale attempt ended once the link is back.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "launcher/batch_record.h"
#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/network_namespace.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

// Not gone and not a zombie (no one may reap a script whose shepherd was killed with it).
TEST(NodeInItsOwnNetwork, ACutLinkRequeuesTheJobAndTheStaleAttemptEndsWhenItReturns) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "network namespaces need root";
    }
    NetworkNamespace net;
    if (!net.ready()) {
        GTEST_SKIP() << "cannot create a network namespace here: " << net.why_not();
    }
    constexpr int kNodeTimeoutMs = 3000;
    std::vector<std::string> start_args = with_settings({{"node_timeout_ms", kNodeTimeoutMs}});
    start_args.insert(start_args.end(), {"--listen", net.host_address()});
    LocalCluster cluster(2, start_args);
    ASSERT_TRUE(cluster.up());
    // node2 moves into the namespace: it reaches the controller, and is reached, over the veth.
    LocalCluster::AgentStart in_namespace;
    in_namespace.wrapper = {"ip", "netns", "exec", net.name()};
    in_namespace.extra_args = {"--address", net.inner_address()};
    ASSERT_TRUE(cluster.restart_agent("node2", in_namespace));
    ASSERT_TRUE(eventually(
            [&] {
                const nlohmann::json node = node_json(cluster, "node2");
                return node.value("address", "") == net.inner_address()
                       && node["state"] == nlohmann::json::array({"IDLE"});
            },
            seconds(20)))
            << node_json(cluster, "node2").dump();

    // The first attempt runs in the namespace (node1 is drained), records its pid and waits;
    // the second runs on node1 and ends at once.
    ASSERT_EQ(cluster.cohort({"node", "drain", "node1", "--reason", "test"}).exit_code, 0);
    const std::string pid_file = cluster.work_dir() + "/attempt0.pid";
    const uint64_t id = submit_batch(
            cluster, {"-o", "netns.out", "--wrap",
                      "echo attempt $SLURM_RESTART_COUNT on $SLURMD_NODENAME; "
                      "if [ $SLURM_RESTART_COUNT = 0 ]; then echo $$ > "
                              + pid_file + "; sleep 120; fi; echo finished $SLURM_RESTART_COUNT"});
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(pid_file); }, seconds(20)));
    pid_t stale = 0;
    std::ifstream(pid_file) >> stale;
    ASSERT_GT(stale, 0);
    ASSERT_EQ(cluster.cohort({"node", "resume", "node1"}).exit_code, 0);

    ASSERT_TRUE(net.set_link(false));
    const auto cut = std::chrono::steady_clock::now();
    ASSERT_TRUE(eventually(
            [&] {
                return read_text(cluster.work_dir() + "/netns.out").find("finished 1")
                       != std::string::npos;
            },
            seconds(30)))
            << read_text(cluster.work_dir() + "/netns.out");
    const double recovered_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
    std::printf("link cut -> job's next attempt done: %.2f s (node_timeout_ms %d)\n", recovered_s,
                kNodeTimeoutMs);
    EXPECT_EQ(cluster.wait_final_state(id, seconds(30)), "COMPLETED");
    // The last heartbeat came up to one interval (1 s) before the cut.
    EXPECT_GE(recovered_s, (kNodeTimeoutMs - 1000) / 1000.0)
            << "only missing heartbeats reveal a cut link";
    const nlohmann::json lost = node_json(cluster, "node2");
    EXPECT_EQ(lost["state"], nlohmann::json::array({"DOWN"})) << lost.dump();
    EXPECT_NE(lost.value("reason", "").find("no heartbeat for 3000 ms"), std::string::npos)
            << lost.dump();
    EXPECT_TRUE(process_running(stale))
            << "cut off, the node cannot be told to end the old attempt";

    // Back on the network: the agent reconnects, is told the job is no longer its own and ends
    // the stale attempt; the node stays DOWN until resumed (return_to_service 0).
    ASSERT_TRUE(net.set_link(true));
    EXPECT_TRUE(eventually([&] { return !process_running(stale); }, seconds(30)));
    const std::string output = read_text(cluster.work_dir() + "/netns.out");
    EXPECT_NE(output.find("attempt 0 on node2"), std::string::npos) << output;
    EXPECT_NE(output.find("attempt 1 on node1"), std::string::npos) << output;
    EXPECT_EQ(output.find("finished 0"), std::string::npos) << output;
    EXPECT_EQ(node_json(cluster, "node2")["state"], nlohmann::json::array({"DOWN"}));
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

}  // namespace
}  // namespace cohort::testing
