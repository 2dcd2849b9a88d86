// Nodes in operators' hands, end to end: drain lets running jobs finish and starts nothing
// new; down requeues the node's jobs elsewhere; both hold across a controller restart until
// resumed; a node DOWN for not responding stays out of service when its agent comes back,
// unless return_to_service says otherwise; sinfo -R lists why, who and when.
#include <csignal>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

// "IDLE", "IDLE+DRAIN", "DOWN", ...
std::string node_state(const LocalCluster& cluster, const std::string& name) {
    nlohmann::json node = node_json(cluster, name);
    std::string state;
    for (const auto& flag : node.is_null() ? nlohmann::json::array() : node["state"]) {
        state += (state.empty() ? "" : "+") + flag.get<std::string>();
    }
    return state;
}

std::string job_nodes(const LocalCluster& cluster, uint64_t id) {
    nlohmann::json job = shown_job_json(cluster, id);
    return job.is_null() ? "" : job["nodes"].get<std::string>();
}

pid_t agent_pid(const LocalCluster& cluster, const std::string& node) {
    pid_t pid = 0;
    std::ifstream(cluster.state_dir() + "/cohortd-" + node + ".pid") >> pid;
    return pid;
}

TEST(NodeAdmin, DrainLetsRunningJobsFinishAndStartsNothingNew) {
    LocalCluster cluster(1);
    ASSERT_TRUE(cluster.up());
    const std::string go = cluster.work_dir() + "/go";
    uint64_t running =
            submit_batch(cluster, {"--wrap", "while [ ! -e " + go + " ]; do sleep 0.1; done"});
    ASSERT_TRUE(eventually([&] { return cluster.job_state(running) == "RUNNING"; }, seconds(20)));

    CommandResult drained = cluster.cohort({"node", "drain", "node1", "--reason", "disk check"});
    ASSERT_EQ(drained.exit_code, 0) << drained.err;
    const std::string draining = node_state(cluster, "node1");
    EXPECT_TRUE(draining == "MIXED+DRAIN" || draining == "ALLOCATED+DRAIN") << draining;
    EXPECT_NE(cluster.cohort({"nodes"}).out.find("DRAINING"), std::string::npos);
    uint64_t waiting = submit_batch(cluster, {"--wrap", "true"});

    std::ofstream(go) << "go\n";
    EXPECT_EQ(cluster.wait_final_state(running, seconds(30)), "COMPLETED");
    EXPECT_TRUE(
            eventually([&] { return node_state(cluster, "node1") == "IDLE+DRAIN"; }, seconds(10)));
    CommandResult nodes = cluster.cohort({"nodes"});
    EXPECT_NE(nodes.out.find("DRAINED"), std::string::npos) << nodes.out;
    // Nothing starts on a drained node, however long the job waits.
    std::this_thread::sleep_for(seconds(3));
    EXPECT_EQ(cluster.job_state(waiting), "PENDING");

    CommandResult reasons = cluster.cohort({"nodes", "-R"});
    EXPECT_EQ(reasons.out.rfind("REASON", 0), 0u) << reasons.out;
    EXPECT_NE(reasons.out.find("disk check"), std::string::npos) << reasons.out;
    EXPECT_NE(reasons.out.find("node1"), std::string::npos) << reasons.out;
    nlohmann::json node = node_json(cluster, "node1");
    EXPECT_EQ(node["reason"], "disk check");
    EXPECT_FALSE(node["reason_set_by_user"].get<std::string>().empty());
    EXPECT_TRUE(node["reason_changed_at"]["set"].get<bool>());

    // scontrol's spelling resumes it; the waiting job then runs.
    CommandResult resumed =
            cluster.cohort({"scontrol", "update", "NodeName=node1", "State=RESUME"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_EQ(cluster.wait_final_state(waiting, seconds(30)), "COMPLETED");
    EXPECT_EQ(node_state(cluster, "node1"), "IDLE");
    EXPECT_EQ(node_json(cluster, "node1")["reason"], "");
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

TEST(NodeAdmin, DownRequeuesItsJobsAndHoldsAcrossARestartUntilResumed) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    uint64_t job = submit_batch(cluster, {"-t", "5", "--wrap", "sleep 300"});
    ASSERT_TRUE(eventually([&] { return cluster.job_state(job) == "RUNNING"; }, seconds(20)));
    const std::string first = job_nodes(cluster, job);
    const std::string other = first == "node1" ? "node2" : "node1";

    CommandResult down = cluster.cohort(
            {"scontrol", "update", "nodename=" + first, "state=down", "reason=bad DIMM"});
    ASSERT_EQ(down.exit_code, 0) << down.err;
    EXPECT_EQ(node_state(cluster, first), "DOWN");
    // The job runs again, on the other node, as its next attempt.
    EXPECT_TRUE(eventually(
            [&] {
                nlohmann::json shown = shown_job_json(cluster, job);
                return !shown.is_null() && shown["job_state"][0] == "RUNNING"
                       && shown["nodes"] == other && shown["restart_cnt"] == 1;
            },
            seconds(30)));

    // The hold is stored: a restart of the whole instance keeps the node out of service.
    CommandResult again = cluster.restart();
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(eventually(
            [&] {
                const std::string state = node_state(cluster, other);
                return !state.empty() && state != "UNKNOWN";  // registered again
            },
            seconds(20)));
    EXPECT_EQ(node_state(cluster, first), "DOWN");
    EXPECT_EQ(node_json(cluster, first)["reason"], "bad DIMM");

    ASSERT_EQ(cluster.cohort({"node", "resume", first}).exit_code, 0);
    EXPECT_EQ(node_state(cluster, first), "IDLE");
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

// The agent stops answering (SIGSTOP) for longer than node_timeout_ms, then continues.
void silence_agent(const LocalCluster& cluster, const std::string& node) {
    pid_t agent = agent_pid(cluster, node);
    ASSERT_GT(agent, 0);
    ASSERT_EQ(kill(agent, SIGSTOP), 0);
    EXPECT_TRUE(eventually([&] { return node_state(cluster, node) == "DOWN"; }, seconds(20)));
    ASSERT_EQ(kill(agent, SIGCONT), 0);
}

TEST(NodeAdmin, ANodeDownForNotRespondingStaysDownUntilResumed) {
    LocalCluster cluster(2, with_settings({{"node_timeout_ms", 2000}}));
    ASSERT_TRUE(cluster.up());
    silence_agent(cluster, "node2");
    // Its heartbeats are back, yet it stays out of service: return_to_service is 0.
    std::this_thread::sleep_for(seconds(3));
    EXPECT_EQ(node_state(cluster, "node2"), "DOWN");
    CommandResult reasons = cluster.cohort({"nodes", "-R"});
    EXPECT_NE(reasons.out.find("Not responding: no heartbeat for 2000 ms"), std::string::npos)
            << reasons.out;
    EXPECT_NE(reasons.out.find("cohort"), std::string::npos) << reasons.out;
    ASSERT_EQ(cluster.cohort({"node", "resume", "node2"}).exit_code, 0);
    EXPECT_EQ(node_state(cluster, "node2"), "IDLE");
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

// More nodes than max_heartbeats_per_s allows at heartbeat_interval_ms: the controller asks
// its agents for longer intervals (two nodes at one heartbeat a second: 2 s), and gives a
// silent node three of them (6 s) instead of node_timeout_ms.
TEST(NodeAdmin, AgentsHeartbeatAtTheControllersRateAndSilenceIsJudgedByIt) {
    LocalCluster cluster(2,
                         with_settings({{"node_timeout_ms", 2000}, {"max_heartbeats_per_s", 1}}));
    ASSERT_TRUE(cluster.up());
    EXPECT_TRUE(eventually(
            [&] {
                return read_text(cluster.state_dir() + "/cohortd-node2.log")
                               .find("heartbeat every 2000 ms, as the controller asks")
                       != std::string::npos;
            },
            seconds(10)));
    // Heartbeats 2 s apart keep both nodes up well past node_timeout_ms.
    std::this_thread::sleep_for(seconds(5));
    EXPECT_EQ(node_state(cluster, "node1"), "IDLE");
    EXPECT_EQ(node_state(cluster, "node2"), "IDLE");
    silence_agent(cluster, "node2");
    CommandResult reasons = cluster.cohort({"nodes", "-R"});
    EXPECT_NE(reasons.out.find("Not responding: no heartbeat for 6000 ms"), std::string::npos)
            << reasons.out;
    CommandResult config = cluster.cohort({"show", "config"});
    EXPECT_NE(config.out.find("SlurmdTimeout           = 6 sec"), std::string::npos) << config.out;
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

TEST(NodeAdmin, ReturnToServiceOneBringsANodeBackOnItsOwn) {
    LocalCluster cluster(2, with_settings({{"node_timeout_ms", 2000}, {"return_to_service", 1}}));
    ASSERT_TRUE(cluster.up());
    silence_agent(cluster, "node2");
    EXPECT_TRUE(eventually([&] { return node_state(cluster, "node2") == "IDLE"; }, seconds(10)));
    // An operator's DOWN still holds under return_to_service=1.
    ASSERT_EQ(cluster.cohort({"node", "down", "node2", "--reason", "firmware"}).exit_code, 0);
    std::this_thread::sleep_for(seconds(2));
    EXPECT_EQ(node_state(cluster, "node2"), "DOWN");
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

TEST(NodeAdmin, BadRequestsAreOneLineAndChangeNothing) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());

    struct Case {
        std::vector<std::string> args;
        std::string names;  // what the error line must contain
    };

    const std::vector<Case> cases = {
            {{"node", "drain", "node1"}, "reason: missing"},
            {{"node", "down", "node1,node9", "--reason", "x"}, "node node9: not in the cluster"},
            {{"node", "resume", "node1"}, "node node1: an IDLE node cannot be resumed"},
            {{"node", "reboot", "node1"}, "action: invalid value 'reboot'"},
            {{"node", "drain", "node[1-", "--reason", "x"}, "node"},
            {{"scontrol", "update", "nodename=node1", "state=fail", "reason=x"},
             "State: invalid value 'fail' (accepted: drain, down, resume)"},
            {{"scontrol", "update", "nodename=node1", "weight=3"}, "weight: unknown key"},
    };
    for (const auto& c : cases) {
        CommandResult result = cluster.cohort(c.args);
        EXPECT_NE(result.exit_code, 0) << c.args[1];
        EXPECT_NE(result.err.find(c.names), std::string::npos) << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    }
    EXPECT_EQ(node_state(cluster, "node1"), "IDLE");
    EXPECT_EQ(node_state(cluster, "node2"), "IDLE");
}

}  // namespace
}  // namespace cohort::testing
