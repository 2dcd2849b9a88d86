// Restarting cohortd on a node (an upgrade) ends no job: batch scripts and step tasks run
// under shepherds that outlive the agent, the next agent adopts them, re-arms their time
// limits and warning signals and reports their ends, including ends that came while no agent
// ran; a step's client waits for the next agent, which streams the output that waited.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

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

// A step runs while each of its nodes' agents is restarted in turn, and is then told to end.
// Returns the step's result; `running` tells whether both of its tasks had started.
CommandResult step_through_agent_restarts(const LocalCluster& cluster,
                                          const std::vector<std::string>& step,
                                          const std::string& go_on,
                                          bool& running) {
    const std::string dir = cluster.work_dir();
    CommandResult result;
    std::thread client([&] { result = cluster.cohort(step, seconds(120)); });
    running = eventually(
            [&] {
                return std::filesystem::exists(dir + "/running.0")
                       && std::filesystem::exists(dir + "/running.1");
            },
            seconds(60));
    if (running) {
        EXPECT_TRUE(cluster.restart_agent("node2", {}));
        EXPECT_TRUE(cluster.restart_agent("node1", {}));
        std::this_thread::sleep_for(milliseconds(500));  // the tasks write on meanwhile
    }
    std::ofstream{go_on};
    client.join();
    return result;
}

// The lines of `output` that start with `prefix`, in order.
std::vector<std::string> lines_of(const std::string& output, const std::string& prefix) {
    std::vector<std::string> lines;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0) {
            lines.push_back(line);
        }
    }
    return lines;
}

// `cohort run` (srun) through restarts of both its nodes' agents: no task is killed, every
// line each task wrote arrives once and in order (also those written while no agent read its
// pipe), and the exit codes are reported by the agents that took the tasks over.
TEST(AgentRestart, AStepRunsOnThroughItsAgentsRestartsAndLosesNoOutput) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    const std::string dir = cluster.work_dir();
    const std::string go_on = dir + "/go_on";
    const std::string task =
            "echo \"rank$SLURM_PROCID first\"; touch " + dir
            + "/running.$SLURM_PROCID; for i in $(seq 1 1200); do [ -e " + go_on
            + " ] && break; echo \"rank$SLURM_PROCID line $i\"; sleep 0.05; done; "
              "echo \"rank$SLURM_PROCID last\"; exit $((3 + SLURM_PROCID))";
    bool running = false;
    const CommandResult result = step_through_agent_restarts(
            cluster, {"run", "--mpi=none", "-N2", "-n2", "bash", "-c", task}, go_on, running);
    ASSERT_TRUE(running) << result.err;
    EXPECT_EQ(result.exit_code, 4) << result.err;
    for (const std::string rank : {"rank0", "rank1"}) {
        const std::vector<std::string> lines = lines_of(result.out, rank + " ");
        ASSERT_GE(lines.size(), 3u) << result.out;
        EXPECT_EQ(lines.front(), rank + " first");
        EXPECT_EQ(lines.back(), rank + " last");
        for (size_t i = 1; i + 1 < lines.size(); ++i) {
            EXPECT_EQ(lines[i], rank + " line " + std::to_string(i)) << "a line lost or repeated";
        }
    }
    for (const std::string node : {"node1", "node2"}) {
        const std::string log = read_text(cluster.state_dir() + "/cohortd-" + node + ".log");
        EXPECT_NE(log.find("adopted 1 running task(s)"), std::string::npos) << node << ": " << log;
    }
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

// An MPI step over two nodes: the step managers (each node's PMIx server) serve on while the
// agents restart, so the ranks go on communicating and MPI_Finalize's fence completes.
TEST(AgentRestart, AnMpiStepCommunicatesOnThroughItsAgentsRestarts) {
    if (std::system("/usr/bin/python3 -c 'import mpi4py' 2>/dev/null") != 0) {
        GTEST_SKIP() << "mpi4py is not installed (python3-mpi4py)";
    }
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    const std::string dir = cluster.work_dir();
    const std::string go_on = dir + "/go_on";
    const std::string program =
            "import os, time\n"
            "from mpi4py import MPI\n"
            "comm = MPI.COMM_WORLD\n"
            "open(f'"
            + dir
            + "/running.{comm.rank}', 'w').close()\n"
              "rounds = 0\n"
              "while rounds < 2400:\n"
              "    rounds += 1\n"
              "    if comm.allreduce(int(os.path.exists('"
            + go_on
            + "')), op=MPI.MAX):\n"
              "        break\n"
              "    time.sleep(0.05)\n"
              "total = comm.allreduce(comm.rank + 1)\n"
              "print(f'mpi rank {comm.rank} rounds {rounds} sum {total}', flush=True)\n";
    bool running = false;
    const CommandResult result = step_through_agent_restarts(
            cluster, {"run", "-N2", "-n2", "/usr/bin/python3", "-c", program}, go_on, running);
    ASSERT_TRUE(running) << result.err;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const std::vector<std::string> lines = lines_of(result.out, "mpi rank ");
    ASSERT_EQ(lines.size(), 2u) << result.out << result.err;
    for (const std::string& line : lines) {
        EXPECT_NE(line.find(" sum 3"), std::string::npos) << line;
    }
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

// A step whose tasks end while their node has no agent: the shepherds keep the last lines in
// the pipes, and the next agent streams them and reports the exits.
TEST(AgentRestart, AStepThatEndsWhileNoAgentRunsIsReportedByTheNextOne) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    const std::string dir = cluster.work_dir();
    const std::string agent_gone = dir + "/agent_gone";
    const std::string task = "touch " + dir
                             + "/running.$SLURM_PROCID; for i in $(seq 1 1200); do [ -e "
                             + agent_gone
                             + " ] && break; sleep 0.05; done; echo \"rank$SLURM_PROCID last\"; "
                               "exit $((3 + SLURM_PROCID))";
    CommandResult result;
    std::thread client([&] {
        result = cluster.cohort({"run", "--mpi=none", "-N2", "-n2", "bash", "-c", task},
                                seconds(120));
    });
    const bool running = eventually(
            [&] {
                return std::filesystem::exists(dir + "/running.0")
                       && std::filesystem::exists(dir + "/running.1");
            },
            seconds(60));
    LocalCluster::AgentStart after_a_while;
    after_a_while.while_away = [&] {
        std::ofstream{agent_gone};
    };
    after_a_while.away = milliseconds(700);
    if (running) {
        EXPECT_TRUE(cluster.restart_agent("node2", after_a_while));
    }
    std::ofstream{agent_gone};
    client.join();
    ASSERT_TRUE(running) << result.err;
    EXPECT_EQ(result.exit_code, 4) << result.err;
    EXPECT_EQ(lines_of(result.out, "rank"), (std::vector<std::string>{"rank0 last", "rank1 last"}))
            << result.out;
    const std::string log = read_text(cluster.state_dir() + "/cohortd-node2.log");
    EXPECT_NE(log.find("adopted 1 running task(s)"), std::string::npos) << log;
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

}  // namespace
}  // namespace cohort::testing
