// End to end through the CLI on a real 2-node local instance: batch jobs, steps, cancel,
// time limits.
#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

class ClusterTest : public SharedCluster<ClusterTest> {};

TEST_F(ClusterTest, BatchJobWritesItsOutputFileAndExitCode) {
    const std::string script = cluster_->work_dir() + "/exit3.sh";
    std::ofstream(script) << "#!/bin/sh\n#SBATCH -J exit3\n#SBATCH -o out-%j-%x.txt\n"
                             "echo \"job $SLURM_JOB_ID on $SLURMD_NODENAME\"\necho oops >&2\n"
                             "exit 3\n";
    CommandResult submitted = cluster_->cohort({"batch", "--parsable", script});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    uint64_t id = submitted_id(submitted);
    ASSERT_GT(id, 0u);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "FAILED");
    std::string output =
            read_text(cluster_->work_dir() + "/out-" + std::to_string(id) + "-exit3.txt");
    EXPECT_EQ(output, "job " + std::to_string(id) + " on node1\noops\n");
    CommandResult acct = cluster_->cohort({"acct", "-j", std::to_string(id)});
    EXPECT_NE(acct.out.find("3:0"), std::string::npos) << acct.out;
}

TEST_F(ClusterTest, SuccessfulBatchJobIsCompleted) {
    CommandResult submitted = cluster_->cohort({"batch", "--wrap", "echo done"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    ASSERT_EQ(submitted.out.rfind("Submitted batch job ", 0), 0u) << submitted.out;
    uint64_t id = std::strtoull(submitted.out.c_str() + 20, nullptr, 10);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "COMPLETED");
    EXPECT_EQ(read_text(cluster_->work_dir() + "/slurm-" + std::to_string(id) + ".out"), "done\n");
}

TEST_F(ClusterTest, TwoNodeStepSeesDistinctRanksAndTheRightVariables) {
    CommandResult run = cluster_->cohort(
            {"run", "-N2", "-n4", "-l", "sh", "-c",
             "echo $RANK $WORLD_SIZE $LOCAL_RANK $MASTER_ADDR $MASTER_PORT $SLURM_PROCID "
             "$SLURM_NODEID $SLURM_NTASKS"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::set<std::string> ranks;
    std::set<std::string> ports;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string label, rank, world, local, addr, port, procid, nodeid, ntasks;
        words >> label >> rank >> world >> local >> addr >> port >> procid >> nodeid >> ntasks;
        EXPECT_EQ(label, rank + ":");
        EXPECT_EQ(world, "4");
        EXPECT_EQ(procid, rank);
        EXPECT_EQ(ntasks, "4");
        EXPECT_EQ(local, std::to_string(std::stoi(rank) % 2)) << line;
        EXPECT_EQ(nodeid, std::to_string(std::stoi(rank) / 2)) << line;
        EXPECT_EQ(addr, "127.0.0.1");
        EXPECT_GT(std::stoi(port), 0) << line;
        ranks.insert(rank);
        ports.insert(port);
    }
    EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(ports.size(), 1u);  // every rank agrees on MASTER_PORT
}

// The most common LLM launch: the first host from `scontrol show hostnames`, a rendezvous
// there, one launcher per node. The batch shell also has MASTER_ADDR/MASTER_PORT on its first
// node and the hosts in order, so the pattern needs no hostlist parsing; each node's launcher
// reaches the rendezvous that node 0's listens on.
TEST_F(ClusterTest, LaunchersRendezvousAtTheFirstHostOfTheBatchShell) {
    const std::string launcher = cluster_->work_dir() + "/rendezvous.py";
    std::ofstream(launcher) << R"(import os, socket, time
host, port = os.environ["RDZV"].rsplit(":", 1)
me = os.environ["SLURMD_NODENAME"]
if os.environ["SLURM_NODEID"] == "0":
    server = socket.create_server((host, int(port)))
    joined = [me]
    for _ in range(int(os.environ["SLURM_NNODES"]) - 1):
        peer, _ = server.accept()
        joined.append(peer.recv(64).decode())
    print("rendezvous joined", " ".join(sorted(joined)), flush=True)
else:
    for _ in range(100):
        try:
            peer = socket.create_connection((host, int(port)), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    peer.sendall(me.encode())
)";
    const std::string cohort = cohort_binary();
    const std::string script = cluster_->work_dir() + "/llm-launch.sh";
    std::ofstream(script) << "#!/bin/bash\n"
                             "#SBATCH -N2 --ntasks-per-node=1 -o llm-launch.out\n"
                             "head=$("
                          << cohort
                          << " scontrol show hostnames | head -n1)\n"
                             "echo \"head=$head hosts=$COHORT_JOB_HOSTS master=$MASTER_ADDR\"\n"
                             "echo listed $("
                          << cohort
                          << " scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
                             "echo compressed $("
                          << cohort
                          << " scontrol show hostlist \"${COHORT_JOB_HOSTS// /,}\")\n"
                             "export RDZV=$MASTER_ADDR:$MASTER_PORT\n"
                          << cohort << " run python3 " << launcher << "\n";
    CommandResult submitted = cluster_->cohort({"batch", "--parsable", script});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(submitted), std::chrono::seconds(60)),
              "COMPLETED");
    const std::string output = read_text(cluster_->work_dir() + "/llm-launch.out");
    EXPECT_NE(output.find("head=node1 hosts=node1 node2 master=127.0.0.1\n"), std::string::npos)
            << output;
    EXPECT_NE(output.find("listed node1 node2\n"), std::string::npos) << output;
    EXPECT_NE(output.find("compressed node[1-2]\n"), std::string::npos) << output;
    EXPECT_NE(output.find("rendezvous joined node1 node2\n"), std::string::npos) << output;
}

// A script written for Slurm, submitted as Slurm users do: Slurm's command names on PATH
// (build/compat), the script on stdin, `-D .`. The job is named "sbatch", works in the
// absolute submit directory, and its srun/scontrol/squeue calls reach the same cluster.
TEST_F(ClusterTest, SlurmsCommandNamesRunAScriptFromStdinUnchanged) {
    const std::string compat = bin_dir() + "/../compat";
    const std::string submit = "cd " + cluster_->work_dir() + " && PATH=" + compat
                               + ":$PATH sbatch --parsable -D . <<'EOF'\n"
                                 "#!/bin/bash\n"
                                 "#SBATCH -N2 -o compat-%j.out\n"
                                 "srun -l hostname | sort\n"
                                 "scontrol show hostnames\n"
                                 "squeue -h -j $SLURM_JOB_ID -o %T\n"
                                 "EOF\n";
    CommandResult submitted = run_command({"sh", "-c", submit}, cluster_->conf());
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const uint64_t id = submitted_id(submitted);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(60)), "COMPLETED");
    const std::string shown = cluster_->cohort({"show", "job", std::to_string(id)}).out;
    EXPECT_NE(shown.find("JobName=sbatch"), std::string::npos) << shown;
    EXPECT_NE(shown.find("WorkDir=" + cluster_->work_dir() + "\n"), std::string::npos) << shown;
    const std::string output =
            read_text(cluster_->work_dir() + "/compat-" + std::to_string(id) + ".out");
    const std::regex expected("^0: \\S+\n1: \\S+\nnode1\nnode2\nRUNNING\n$");
    EXPECT_TRUE(std::regex_match(output, expected)) << output;
}

TEST_F(ClusterTest, StepReturnsTheHighestExitCode) {
    // -K0: both tasks end on their own (kill-on-bad-exit would stop the second at the first).
    CommandResult run = cluster_->cohort({"run", "-n2", "-K0", "sh", "-c", "exit $((RANK + 5))"});
    EXPECT_EQ(run.exit_code, 6) << run.err;
}

TEST_F(ClusterTest, StepInsideABatchJobUsesItsAllocation) {
    CommandResult submitted = cluster_->cohort(
            {"batch", "--parsable", "-N2", "-n4", "-o", "inner-%j.out", "--wrap",
             std::string(cohort_binary()) + " run -l sh -c 'echo $SLURM_JOB_ID.$SLURM_STEP_ID'"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    uint64_t id = submitted_id(submitted);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "COMPLETED");
    std::string output = read_text(cluster_->work_dir() + "/inner-" + std::to_string(id) + ".out");
    for (int rank = 0; rank < 4; ++rank) {
        EXPECT_NE(output.find(std::to_string(rank) + ": " + std::to_string(id) + ".0"),
                  std::string::npos)
                << output;
    }
}

TEST_F(ClusterTest, AStepWaitsForTheCpusOfRunningStepsUnlessItOverlaps) {
    // The job holds 2 CPUs on one node; the first step takes both for 3 s.
    const std::string run = cohort_binary() + " run";
    const std::string script = run + " -n2 sh -c 'sleep 3; echo first done' &\n"
            "sleep 1\n"
            + run + " -n1 --overlap echo overlapping\n"
            + run + " -n1 echo waited\n"
            "wait\n";
    CommandResult submitted = cluster_->cohort(
            {"batch", "--parsable", "-N1", "-n2", "-o", "steps-%j.out", "--wrap", script});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    uint64_t id = submitted_id(submitted);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(60)), "COMPLETED");
    const std::string output =
            read_text(cluster_->work_dir() + "/steps-" + std::to_string(id) + ".out");
    const size_t overlapping = output.find("overlapping");
    const size_t first = output.find("first done");
    const size_t waited = output.find("waited");
    ASSERT_NE(overlapping, std::string::npos) << output;
    ASSERT_NE(first, std::string::npos) << output;
    ASSERT_NE(waited, std::string::npos) << output;
    EXPECT_LT(overlapping, first) << output;  // --overlap ran beside the first step
    EXPECT_LT(first, waited) << output;       // the other waited for its CPUs
    EXPECT_NE(output.find("step creation temporarily disabled"), std::string::npos) << output;
}

TEST_F(ClusterTest, MissingProgramFailsTheStepWithAClearError) {
    CommandResult run = cluster_->cohort({"run", "-n2", "no-such-program-xyz"});
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find("no-such-program-xyz"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("No such file or directory"), std::string::npos) << run.err;
}

TEST_F(ClusterTest, CancelKillsTheRunningJobsProcesses) {
    const std::string pid_file = cluster_->work_dir() + "/sleeper.pid";
    CommandResult submitted = cluster_->cohort(
            {"batch", "--parsable", "--wrap", "sleep 300 & echo $! > " + pid_file + "; wait"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    uint64_t id = submitted_id(submitted);
    pid_t pid = 0;
    for (int i = 0; i < 200 && pid == 0; ++i) {
        std::ifstream(pid_file) >> pid;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(pid, 0) << "the job never started";
    EXPECT_EQ(kill(pid, 0), 0);
    CommandResult cancelled = cluster_->cohort({"cancel", std::to_string(id)});
    ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "CANCELLED");
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = kill(pid, 0) != 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(gone) << "pid " << pid << " survived the cancel";
}

TEST_F(ClusterTest, TimeLimitEndsTheJobAsTimeout) {
    CommandResult submitted =
            cluster_->cohort({"batch", "--parsable", "-t", "0:02", "--wrap", "sleep 120"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(submitted), std::chrono::seconds(30)),
              "TIMEOUT");
}

TEST_F(ClusterTest, HeldJobWaitsUntilReleased) {
    CommandResult submitted = cluster_->cohort({"batch", "--parsable", "-H", "--wrap", "true"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    uint64_t id = submitted_id(submitted);
    CommandResult queue = cluster_->cohort({"queue", "--json"});
    EXPECT_NE(queue.out.find("JobHeldUser"), std::string::npos) << queue.out;
    EXPECT_EQ(cluster_->job_state(id), "PENDING");
    ASSERT_EQ(cluster_->cohort({"release", std::to_string(id)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "COMPLETED");
}

TEST_F(ClusterTest, NodesAndQueueSpeakJson) {
    CommandResult nodes = cluster_->cohort({"nodes", "--json"});
    ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
    EXPECT_NE(nodes.out.find("\"nodes\""), std::string::npos);
    EXPECT_NE(nodes.out.find("\"node2\""), std::string::npos);
    CommandResult queue = cluster_->cohort({"queue", "--json"});
    ASSERT_EQ(queue.exit_code, 0);
    EXPECT_NE(queue.out.find("\"jobs\""), std::string::npos);
}

// `queue` asks for only the fields its columns show unless one needs more (%Z, the working
// directory, asks for whole records): both listings print the same values.
TEST_F(ClusterTest, QueueColumnsAreTheSameFromColumnsOnlyAndWholeRecords) {
    CommandResult submitted =
            cluster_->cohort({"batch", "--parsable", "-H", "-J", "cols", "-N1", "-n2", "-c1",
                              "--mem=64", "-t", "7", "-D", cluster_->work_dir(), "--wrap", "true"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const std::string id = std::to_string(submitted_id(submitted));
    const std::string columns = "%i|%j|%u|%U|%a|%q|%P|%T|%t|%r|%l|%L|%D|%C|%m|%Q|%V|%S|%e|%R";
    CommandResult columns_only = cluster_->cohort({"queue", "-h", "-j", id, "-o", columns});
    CommandResult whole = cluster_->cohort({"queue", "-h", "-j", id, "-o", columns + "|%Z"});
    ASSERT_EQ(columns_only.exit_code, 0) << columns_only.err;
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    ASSERT_FALSE(columns_only.out.empty());
    EXPECT_EQ(whole.out, columns_only.out.substr(0, columns_only.out.size() - 1) + "|"
                                 + cluster_->work_dir() + "\n");
    EXPECT_EQ(columns_only.out.rfind(id + "|cols|", 0), 0u) << columns_only.out;
    EXPECT_NE(columns_only.out.find("|PENDING|PD|JobHeldUser|7:00|7:00|1|2|64M|"),
              std::string::npos)
            << columns_only.out;
    EXPECT_EQ(cluster_->cohort({"cancel", id}).exit_code, 0);
}

// sinfo -s and -l through the CLI, as scripts call them: a partition per line with its nodes
// counted by state; the time, then the long header.
TEST_F(ClusterTest, SinfoSummarizesAndListsLong) {
    CommandResult count = cluster_->cohort({"sinfo", "-h", "-o", "%D"});
    ASSERT_EQ(count.exit_code, 0) << count.err;
    const int nodes = std::stoi(count.out);
    CommandResult summary = cluster_->cohort({"sinfo", "-s", "-h"});
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const std::regex line("\\S+\\*? +up +infinite +(\\d+)/(\\d+)/(\\d+)/" + std::to_string(nodes)
                          + "  node\\[1-" + std::to_string(nodes) + "\\]\n");
    std::smatch counts;
    ASSERT_TRUE(std::regex_match(summary.out, counts, line)) << summary.out;
    EXPECT_EQ(std::stoi(counts[1]) + std::stoi(counts[2]) + std::stoi(counts[3]), nodes);

    CommandResult long_listing = cluster_->cohort({"sinfo", "-l"});
    ASSERT_EQ(long_listing.exit_code, 0) << long_listing.err;
    std::istringstream lines(long_listing.out);
    std::string stamp, header;
    std::getline(lines, stamp);
    std::getline(lines, header);
    std::tm parsed{};
    EXPECT_NE(strptime(stamp.c_str(), "%a %b %d %H:%M:%S %Y", &parsed), nullptr) << stamp;
    EXPECT_EQ(header.rfind("PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES "
                           "      STATE NODELIST",
                           0),
              0u)
            << long_listing.out;
}

TEST_F(ClusterTest, RepeatedIdsInOneCancelAreHarmless) {
    CommandResult submitted = cluster_->cohort({"batch", "--parsable", "-H", "--wrap", "true"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    std::string id = std::to_string(submitted_id(submitted));
    CommandResult cancelled = cluster_->cohort({"cancel", id, id});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(submitted), std::chrono::seconds(30)),
              "CANCELLED");
    EXPECT_EQ(cluster_->cohort({"queue"}).exit_code, 0);  // the controller is still there
}

TEST_F(ClusterTest, CancellingAWaitingRunEndsTheClient) {
    // Fill both nodes, then a `cohort run` must wait; cancelling it ends the client.
    CommandResult filler = cluster_->cohort(
            {"batch", "--parsable", "-N2", "-n4", "-t", "1:00", "--wrap", "sleep 60"});
    ASSERT_EQ(filler.exit_code, 0) << filler.err;
    CommandResult waiting;
    std::thread client([&] {
        waiting = cluster_->cohort({"run", "-J", "waiter", "true"}, std::chrono::seconds(30));
    });
    std::string waiter_id;
    for (int i = 0; i < 100 && waiter_id.empty(); ++i) {
        CommandResult queue = cluster_->cohort({"queue", "-t", "PD"});
        std::istringstream lines(queue.out);
        for (std::string line; std::getline(lines, line);) {
            if (line.find("waiter") != std::string::npos) {
                std::istringstream(line) >> waiter_id;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_FALSE(waiter_id.empty()) << "the run never queued";
    if (!waiter_id.empty()) {
        EXPECT_EQ(cluster_->cohort({"cancel", waiter_id}).exit_code, 0);
    }
    client.join();
    EXPECT_NE(waiting.exit_code, 0);
    EXPECT_NE(waiting.err.find("cancelled while pending"), std::string::npos) << waiting.err;
    cluster_->cohort({"cancel", std::to_string(submitted_id(filler))});
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(filler), std::chrono::seconds(30)),
              "CANCELLED");
}

TEST_F(ClusterTest, CtrlCIsForwardedToTheTasks) {
    // A non-interactive sh ignores SIGINT in background jobs; cohort run installs its own.
    // The interrupt comes once both tasks run (bounded wait): the agent signals the tasks it
    // has, so an interrupt that reaches a node before its tasks start is not delivered there.
    CommandResult result = run_command(
            {"sh", "-c",
             cohort_binary()
                     + " run -n2 sh -c 'touch started.$SLURM_PROCID; exec sleep 60' & pid=$!; "
                       "for i in $(seq 300); do [ -e started.0 ] && [ -e started.1 ] && break; "
                       "sleep 0.1; done; kill -INT $pid; wait $pid; echo rc=$?"},
            cluster_->conf(), std::chrono::seconds(60), cluster_->work_dir());
    EXPECT_NE(result.out.find("rc=130"), std::string::npos) << result.out << result.err;
    EXPECT_NE(result.err.find("interrupt"), std::string::npos) << result.err;
}

TEST_F(ClusterTest, DependencyChainRunsInOrderAndImpossibleOnesAreCancelled) {
    const std::string order = cluster_->work_dir() + "/order.txt";
    auto submit = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"batch", "--parsable"});
        CommandResult result = cluster_->cohort(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return std::to_string(submitted_id(result));
    };
    // A waits for the test to open a gate (at most 30 s), so the queue is looked at while B
    // and C still wait, however slow the submissions are (sanitizer builds).
    const std::string gate = cluster_->work_dir() + "/gate";
    std::string a =
            submit({"--wrap", "for i in $(seq 300); do [ -e " + gate
                                      + " ] && break; sleep 0.1; done; echo A >> " + order});
    std::string b = submit({"-d", "afterok:" + a, "--wrap", "echo B >> " + order});
    std::string c = submit({"--dependency=afterok:" + b, "--wrap", "echo C >> " + order});
    std::string never = submit({"-d", "afternotok:" + a, "--wrap", "true"});
    std::string kept =
            submit({"-d", "afternotok:" + a, "--kill-on-invalid-dep", "no", "--wrap", "true"});
    CommandResult queue = cluster_->cohort({"queue"});
    EXPECT_NE(queue.out.find("(Dependency)"), std::string::npos) << queue.out;
    std::ofstream(gate).put('\n');
    EXPECT_EQ(cluster_->wait_final_state(std::stoull(c), std::chrono::seconds(30)), "COMPLETED");
    EXPECT_EQ(read_text(order), "A\nB\nC\n");
    EXPECT_EQ(cluster_->wait_final_state(std::stoull(never), std::chrono::seconds(30)),
              "CANCELLED");
    CommandResult shown = cluster_->cohort({"show", "job", never});
    EXPECT_NE(shown.out.find("Reason=DependencyNeverSatisfied"), std::string::npos) << shown.out;
    CommandResult kept_job = cluster_->cohort({"queue", "--json"});
    EXPECT_NE(kept_job.out.find("DependencyNeverSatisfied"), std::string::npos) << kept_job.out;
    EXPECT_EQ(cluster_->cohort({"cancel", kept}).exit_code, 0);
}

TEST_F(ClusterTest, ArrayTasksRunWithTheirIndexAndTheThrottleHolds) {
    // Six tasks, at most two at once; each logs when it ran. The cluster has room for four.
    const std::string log = cluster_->work_dir() + "/array-times.txt";
    CommandResult submitted = cluster_->cohort(
            {"batch", "--parsable", "--array=0-5%2", "-o", "arr-%A_%a.out", "--wrap",
             "s=$(date +%s.%N); echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID "
             "$SLURM_ARRAY_TASK_COUNT; sleep 0.5; echo $s $(date +%s.%N) >> "
                     + log});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const uint64_t array_id = submitted_id(submitted);
    CommandResult queue = cluster_->cohort({"queue", "-h", "-j", std::to_string(array_id)});
    EXPECT_NE(queue.out.find(std::to_string(array_id) + "_"), std::string::npos) << queue.out;
    for (uint64_t task = 0; task < 6; ++task) {
        EXPECT_EQ(cluster_->wait_final_state(array_id + task, std::chrono::seconds(60)),
                  "COMPLETED");
        std::string output = read_text(cluster_->work_dir() + "/arr-" + std::to_string(array_id)
                                       + "_" + std::to_string(task) + ".out");
        EXPECT_EQ(output, std::to_string(array_id) + " " + std::to_string(task) + " 6\n");
    }
    // At no instant did three tasks overlap.
    std::vector<std::pair<double, int>> events;
    std::istringstream lines(read_text(log));
    for (double start = 0, end = 0; lines >> start >> end;) {
        events.emplace_back(start, +1);
        events.emplace_back(end, -1);
    }
    ASSERT_EQ(events.size(), 12u);
    std::sort(events.begin(), events.end());
    int running = 0;
    int most = 0;
    for (const auto& [time, change] : events) {
        running += change;
        most = std::max(most, running);
    }
    EXPECT_LE(most, 2);
    EXPECT_GE(most, 1);
}

// As in Slurm, an array's pending tasks are one record until they start: squeue shows one
// line for them, a task named alone is split off, and the array's id stands for all.
TEST_F(ClusterTest, CancellingAnArrayIdCancelsEveryTask) {
    CommandResult submitted =
            cluster_->cohort({"batch", "--parsable", "-H", "--array=1-3", "--wrap", "true"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const uint64_t array_id = submitted_id(submitted);
    const std::string id = std::to_string(array_id);
    CommandResult queue = cluster_->cohort({"queue", "-h", "-o", "%i %K %T %r"});
    EXPECT_EQ(queue.out, id + "_[1-3] 1-3 PENDING JobHeldUser\n");

    // A refused hold (one id unknown) splits nothing off.
    EXPECT_NE(cluster_->cohort({"hold", std::to_string(array_id + 1), "999999"}).exit_code, 0);
    EXPECT_EQ(cluster_->cohort({"queue", "-h", "-o", "%i"}).out, id + "_[1-3]\n");

    // Task 2 has the array's second id; cancelling it alone leaves tasks 1 and 3 as one record.
    ASSERT_EQ(cluster_->cohort({"cancel", std::to_string(array_id + 1)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(array_id + 1, std::chrono::seconds(30)), "CANCELLED");
    queue = cluster_->cohort({"queue", "-h", "-o", "%i %T"});
    EXPECT_EQ(queue.out, id + "_[1,3] PENDING\n");

    ASSERT_EQ(cluster_->cohort({"cancel", id}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(array_id, std::chrono::seconds(30)), "CANCELLED");
    queue = cluster_->cohort({"queue", "-h"});
    EXPECT_EQ(queue.out, "");
    CommandResult acct = cluster_->cohort({"acct", "-j", id, "-s", "CA"});
    EXPECT_NE(acct.out.find(id + "_[1,3]"), std::string::npos) << acct.out;
    acct = cluster_->cohort({"acct", "-j", std::to_string(array_id + 1)});
    EXPECT_NE(acct.out.find(id + "_2 "), std::string::npos) << acct.out;
}

// A dependency on a task still in its array's record waits for it (it is no unknown job).
TEST_F(ClusterTest, ADependencyOnATaskNotYetSplitOffWaits) {
    CommandResult array =
            cluster_->cohort({"batch", "--parsable", "-H", "--array=0-3", "--wrap", "true"});
    ASSERT_EQ(array.exit_code, 0) << array.err;
    const uint64_t array_id = submitted_id(array);
    const std::string task_2 = std::to_string(array_id + 2);
    CommandResult after =
            cluster_->cohort({"batch", "--parsable", "-d", "afterok:" + task_2, "--wrap", "true"});
    ASSERT_EQ(after.exit_code, 0) << after.err;
    const std::string after_id = std::to_string(submitted_id(after));
    std::string reason;
    for (int i = 0; i < 50 && reason != "Dependency\n"; ++i) {  // bounded: a pass or two
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        reason = cluster_->cohort({"queue", "-h", "-j", after_id, "-o", "%r"}).out;
    }
    EXPECT_EQ(reason, "Dependency\n");
    EXPECT_EQ(cluster_->job_state(submitted_id(after)), "PENDING");
    ASSERT_EQ(cluster_->cohort({"release", std::to_string(array_id)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(after), std::chrono::seconds(60)),
              "COMPLETED");
}

TEST_F(ClusterTest, BeginTimeHoldsAJobBack) {
    CommandResult submitted =
            cluster_->cohort({"batch", "--parsable", "--begin", "now+2", "--wrap", "true"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const uint64_t id = submitted_id(submitted);
    CommandResult queue = cluster_->cohort({"queue"});
    EXPECT_NE(queue.out.find("(BeginTime)"), std::string::npos) << queue.out;
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "COMPLETED");
    auto doc = nlohmann::json::parse(
            cluster_->cohort({"acct", "-j", std::to_string(id), "--json"}).out);
    const auto& job = doc["jobs"][0];
    EXPECT_GE(job["start_time"]["number"].get<int64_t>(),
              job["eligible_time"]["number"].get<int64_t>());
    EXPECT_GE(job["eligible_time"]["number"].get<int64_t>()
                      - job["submit_time"]["number"].get<int64_t>(),
              1);
    // Nothing else happens meanwhile: the pass that starts it is the one due at its begin
    // time, not the once-a-minute idle pass.
    EXPECT_LE(job["start_time"]["number"].get<int64_t>()
                      - job["eligible_time"]["number"].get<int64_t>(),
              3);
}

TEST_F(ClusterTest, QueueStartShowsTheBackfillPlan) {
    // Both nodes busy for at most 60 s; the next whole-cluster job is planned at that end.
    CommandResult filler = cluster_->cohort(
            {"batch", "--parsable", "-N2", "-n4", "-t", "1:00", "--wrap", "sleep 60"});
    ASSERT_EQ(filler.exit_code, 0) << filler.err;
    const uint64_t filler_id = submitted_id(filler);
    for (int i = 0; i < 100 && cluster_->job_state(filler_id) != "RUNNING"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CommandResult next =
            cluster_->cohort({"batch", "--parsable", "-N2", "-n4", "-t", "0:30", "--wrap", "true"});
    ASSERT_EQ(next.exit_code, 0) << next.err;
    const uint64_t next_id = submitted_id(next);
    nlohmann::json planned;
    for (int i = 0; i < 50; ++i) {
        auto doc = nlohmann::json::parse(cluster_->cohort({"queue", "--json"}).out);
        for (const auto& job : doc["jobs"]) {
            if (job["job_id"] == next_id && job["start_time"]["set"] == true) {
                planned = job;
            }
        }
        if (!planned.is_null()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_FALSE(planned.is_null()) << "no planned start for the waiting job";
    auto acct = nlohmann::json::parse(
            cluster_->cohort({"acct", "-j", std::to_string(filler_id), "--json"}).out);
    const int64_t filler_start = acct["jobs"][0]["start_time"]["number"].get<int64_t>();
    EXPECT_EQ(planned["start_time"]["number"].get<int64_t>(), filler_start + 60);
    EXPECT_EQ(planned["state_reason"], "Resources");
    CommandResult start = cluster_->cohort({"queue", "--start"});
    EXPECT_NE(start.out.find("START_TIME"), std::string::npos);
    EXPECT_NE(start.out.find(std::to_string(next_id)), std::string::npos) << start.out;
    cluster_->cohort({"cancel", std::to_string(filler_id), std::to_string(next_id)});
    EXPECT_EQ(cluster_->wait_final_state(filler_id, std::chrono::seconds(30)), "CANCELLED");
}

TEST_F(ClusterTest, ADependencyOnAnArrayWaitsForEveryTask) {
    const std::string log = cluster_->work_dir() + "/array-dep.txt";
    CommandResult array = cluster_->cohort({"batch", "--parsable", "--array=0-2", "--wrap",
                                            "sleep $((SLURM_ARRAY_TASK_ID)); echo task >> " + log});
    ASSERT_EQ(array.exit_code, 0) << array.err;
    const std::string array_id = std::to_string(submitted_id(array));
    CommandResult after = cluster_->cohort(
            {"batch", "--parsable", "-d", "afterok:" + array_id, "--wrap", "echo after >> " + log});
    ASSERT_EQ(after.exit_code, 0) << after.err;
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(after), std::chrono::seconds(30)),
              "COMPLETED");
    EXPECT_EQ(read_text(log), "task\ntask\ntask\nafter\n");
}

TEST(RecordedTopology, AgentsRegisterTheResourcesOfTheXml) {
    // psmgmt-jwb0001.xml: a JUWELS Booster node, 96 PUs and 4 A100s (tests/data/topologies).
    LocalCluster cluster(2, {"--topology", "tests/data/topologies/psmgmt-jwb0001.xml"});
    ASSERT_TRUE(cluster.up());
    CommandResult nodes = cluster.cohort({"nodes", "--json"});
    ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
    auto doc = nlohmann::json::parse(nodes.out);
    ASSERT_EQ(doc["nodes"].size(), 2u);
    for (const auto& node : doc["nodes"]) {
        EXPECT_EQ(node["cpus"], 96);
        EXPECT_EQ(node["gres"], "gpu:4");
    }
    // A job that needs more than one such node's CPUs spans two of them.
    CommandResult run = cluster.cohort({"run", "-n", "100", "-l", "sh", "-c", "true"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
}

// As scancel: the jobs that exist are cancelled, each unknown id gets one line, exit 1.
TEST_F(ClusterTest, CancelWithUnknownIdsCancelsTheRest) {
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        CommandResult submitted = cluster_->cohort({"batch", "--parsable", "-H", "--wrap", "true"});
        ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
        ids.push_back(std::to_string(submitted_id(submitted)));
    }
    CommandResult cancelled = cluster_->cohort({"cancel", ids[0], "999999", ids[1], "999998"});
    EXPECT_EQ(cancelled.exit_code, 1);
    EXPECT_EQ(line_count(cancelled.err), 2u) << cancelled.err;
    EXPECT_NE(cancelled.err.find("job 999999: no such pending or running job"), std::string::npos);
    EXPECT_NE(cancelled.err.find("job 999998: no such pending or running job"), std::string::npos);
    EXPECT_EQ(cluster_->wait_final_state(std::stoull(ids[0]), std::chrono::seconds(30)),
              "CANCELLED");
    EXPECT_EQ(cluster_->wait_final_state(std::stoull(ids[1]), std::chrono::seconds(30)),
              "CANCELLED");
    EXPECT_EQ(cluster_->job_state(std::stoull(ids[2])), "PENDING");
}

// scancel's filters select jobs without ids; all given must match.
TEST_F(ClusterTest, CancelByFilterSelectsOnlyMatchingJobs) {
    auto submit = [&](const std::string& name) {
        CommandResult submitted =
                cluster_->cohort({"batch", "--parsable", "-H", "-J", name, "--wrap", "true"});
        EXPECT_EQ(submitted.exit_code, 0) << submitted.err;
        return submitted_id(submitted);
    };
    const uint64_t sweep1 = submit("sweep");
    const uint64_t sweep2 = submit("sweep");
    const uint64_t other = submit("other");
    CommandResult cancelled = cluster_->cohort({"cancel", "--me", "-t", "PD", "-n", "sweep"});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    EXPECT_EQ(cluster_->wait_final_state(sweep1, std::chrono::seconds(30)), "CANCELLED");
    EXPECT_EQ(cluster_->wait_final_state(sweep2, std::chrono::seconds(30)), "CANCELLED");
    EXPECT_EQ(cluster_->job_state(other), "PENDING");
    CommandResult none = cluster_->cohort({"cancel"});
    EXPECT_EQ(none.exit_code, 1);
    EXPECT_NE(none.err.find("job id: missing"), std::string::npos) << none.err;
    CommandResult bad_state = cluster_->cohort({"cancel", "-t", "SLEEPING"});
    EXPECT_EQ(bad_state.exit_code, 1);
    EXPECT_NE(bad_state.err.find("--state: invalid job state 'SLEEPING'"), std::string::npos)
            << bad_state.err;
    EXPECT_EQ(cluster_->job_state(other), "PENDING");  // a rejected request changes nothing
}

// What scripts poll with: squeue -h -u $USER | wc -l, and -o/-j/-n/--sort as squeue reads them.
TEST_F(ClusterTest, QueueTakesSqueuesFormatsAndFilters) {
    // Earlier tests of the suite (when run in one process) may leave held jobs behind.
    cluster_->cohort({"cancel", "--me", "-t", "PD"});
    CommandResult array = cluster_->cohort(
            {"batch", "--parsable", "-H", "--array=0-2", "-J", "sweep", "--wrap", "true"});
    ASSERT_EQ(array.exit_code, 0) << array.err;
    CommandResult single =
            cluster_->cohort({"batch", "--parsable", "-H", "-J", "solo", "--wrap", "true"});
    ASSERT_EQ(single.exit_code, 0) << single.err;
    const std::string array_id = std::to_string(submitted_id(array));
    const std::string single_id = std::to_string(submitted_id(single));

    CommandResult polled = cluster_->cohort({"queue", "-h", "--me"});
    ASSERT_EQ(polled.exit_code, 0) << polled.err;
    // No header, one line a job; the held array's tasks are one record, as in Slurm.
    EXPECT_EQ(line_count(polled.out), 2u) << polled.out;

    // Holding a task by its id splits it off the array's record.
    const std::string task_1 = std::to_string(submitted_id(array) + 1);
    ASSERT_EQ(cluster_->cohort({"hold", task_1}).exit_code, 0);
    CommandResult formatted =
            cluster_->cohort({"queue", "-h", "-j", array_id, "-o", "%i|%j|%T|%r", "--sort", "-i"});
    ASSERT_EQ(formatted.exit_code, 0) << formatted.err;
    EXPECT_EQ(formatted.out, array_id + "_1|sweep|PENDING|JobHeldUser\n" + array_id
                                     + "_[0,2]|sweep|PENDING|JobHeldUser\n");

    CommandResult named = cluster_->cohort({"queue", "-n", "solo", "-O", "JobID:10,Name:6"});
    ASSERT_EQ(named.exit_code, 0) << named.err;
    EXPECT_EQ(named.out,
              "JOBID     NAME\n" + single_id + std::string(10 - single_id.size(), ' ') + "solo\n");

    CommandResult bad = cluster_->cohort({"queue", "-o", "%i %w"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_EQ(line_count(bad.err), 1u) << bad.err;
    EXPECT_NE(bad.err.find("--format: invalid field '%w'"), std::string::npos) << bad.err;
    EXPECT_TRUE(bad.out.empty());
}

}  // namespace
}  // namespace cohort::testing
