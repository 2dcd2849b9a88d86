// Requeue, end to end: a node really dies (its agent and every process it started are
// killed) under a PyTorch DDP training job, which is requeued and resumes from its checkpoint
// on the nodes left; --no-requeue jobs end NODE_FAIL; a script's exit code asks for a
// requeue, up to the cap; requeue by hand, held or not. Each attempt's output is kept.
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/shared_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

const std::string kPython = "/usr/bin/python3";  // Debian's, with torch
const std::string kTrainer = COHORT_EXAMPLES_DIR "/training/ddp_checkpoint.py";

// (restart count, state) of each record `acct -D -j ID` lists, oldest first.
std::vector<std::pair<int, std::string>> attempts_of(const LocalCluster& cluster, uint64_t id) {
    CommandResult acct = cluster.cohort({"acct", "-D", "-j", std::to_string(id), "--json"});
    auto doc = nlohmann::json::parse(acct.out, nullptr, false);
    std::vector<std::pair<int, std::string>> out;
    if (!doc.is_discarded()) {
        for (const auto& job : doc["jobs"]) {
            out.emplace_back(job["restart_cnt"].get<int>(), job["job_state"][0].get<std::string>());
        }
    }
    return out;
}

bool torch_available() {
    return run_command({kPython, "-c", "import torch"}, "", seconds(60)).exit_code == 0;
}

// The seed's scenario: two nodes of DDP training lose one mid-run; the job is requeued with
// the same id, runs on the two nodes left, resumes from its last checkpoint and ends with the
// weights of a run that was never interrupted.
TEST(Requeue, TrainingResumesFromItsCheckpointAfterANodeIsLost) {
    if (!torch_available()) {
        GTEST_SKIP() << "Debian's python3-torch is not installed";
    }
    LocalCluster cluster(3);  // default node_timeout_ms: the closed connection is what counts
    ASSERT_TRUE(cluster.up());
    auto train = [&](const std::string& name, double step_seconds) {
        const std::string command = cohort_binary() + " run " + kPython + " " + kTrainer + " --dir "
                                    + cluster.work_dir() + "/" + name
                                    + " --steps 30 --every 5 --step-seconds "
                                    + std::to_string(step_seconds);
        return submit_batch(cluster,
                            {"-N2", "--ntasks-per-node=1", "-o", name + ".out", "--wrap", command});
    };
    const uint64_t reference = train("reference", 0);
    ASSERT_EQ(cluster.wait_final_state(reference, seconds(180)), "COMPLETED")
            << read_text(cluster.work_dir() + "/reference.out");

    const uint64_t id = train("interrupted", 0.3);
    const std::string out = cluster.work_dir() + "/interrupted.out";
    ASSERT_TRUE(eventually(
            [&] { return read_text(out).find("checkpoint at step 10") != std::string::npos; },
            seconds(120)))
            << read_text(out);
    CommandResult shown = cluster.cohort({"show", "job", std::to_string(id)});
    std::smatch nodelist;
    ASSERT_TRUE(
            std::regex_search(shown.out, nodelist, std::regex("NodeList=node\\[?(\\d)[-,](\\d)")))
            << shown.out;
    const std::string lost = "node" + nodelist[2].str();  // not the batch script's node
    ASSERT_GT(cluster.kill_node(lost), 1) << "the job's processes on " << lost;

    ASSERT_EQ(cluster.wait_final_state(id, seconds(240)), "COMPLETED") << read_text(out);
    const std::string output = read_text(out);
    EXPECT_NE(output.find("cohort: job " + std::to_string(id) + " attempt 2 (restart 1) on "),
              std::string::npos)
            << output;
    std::smatch resumed;
    ASSERT_TRUE(std::regex_search(output, resumed,
                                  std::regex("resumed from step (\\d+) \\(restart 1\\)")))
            << output;
    EXPECT_GE(std::stoi(resumed[1].str()), 10);
    EXPECT_NE(output.find("finished 30 steps"), std::string::npos);
    EXPECT_EQ(attempts_of(cluster, id),
              (std::vector<std::pair<int, std::string>>{{0, "NODE_FAIL"}, {1, "COMPLETED"}}));
    CommandResult final_show = cluster.cohort({"show", "job", std::to_string(id)});
    EXPECT_NE(final_show.out.find("Restarts=1 FailedNodes=" + lost), std::string::npos)
            << final_show.out;
    EXPECT_EQ(final_show.out.find("NodeList=" + lost), std::string::npos) << final_show.out;

    CommandResult compared =
            run_command({kPython, "-c",
                         "import sys, torch\n"
                         "a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])\n"
                         "print(max((a[k] - b[k]).abs().max().item() for k in a))\n",
                         cluster.work_dir() + "/reference/final.pt",
                         cluster.work_dir() + "/interrupted/final.pt"},
                        "", seconds(60));
    ASSERT_EQ(compared.exit_code, 0) << compared.err;
    EXPECT_LE(std::stod(compared.out), 1e-6) << "largest weight difference " << compared.out;
}

// Without --requeue (or with --no-requeue) the job ends NODE_FAIL with its node, as before.
TEST(Requeue, NoRequeueJobEndsNodeFail) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    const uint64_t id = submit_batch(cluster, {"-N2", "--no-requeue", "-o", "/dev/null", "--wrap",
                                               cohort_binary() + " run sleep 300"});
    ASSERT_TRUE(eventually([&] { return cluster.job_state(id) == "RUNNING"; }, seconds(30)));
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the step is launched on both
    ASSERT_GT(cluster.kill_node("node2"), 0);
    EXPECT_EQ(cluster.wait_final_state(id, seconds(60)), "NODE_FAIL");
    auto nodes = nlohmann::json::parse(cluster.cohort({"nodes", "--json"}).out, nullptr, false);
    ASSERT_FALSE(nodes.is_discarded());
    std::string reason;
    for (const auto& node : nodes["nodes"]) {
        if (node["name"] == "node2") {
            reason = node["reason"].get<std::string>();
        }
    }
    // Its agent's connection closed: DOWN after the reconnect grace, not the heartbeat timeout.
    EXPECT_EQ(reason, "Not responding: connection lost, not restored within 2000 ms");
    EXPECT_EQ(attempts_of(cluster, id),
              (std::vector<std::pair<int, std::string>>{{0, "NODE_FAIL"}}));
    EXPECT_NE(cluster.cohort({"show", "job", std::to_string(id)}).out.find("Requeue=0 Restarts=0"),
              std::string::npos);
}

// One instance for the tests that kill no node.
class RequeueByRequest : public SharedCluster<RequeueByRequest> {
public:
    static std::vector<std::string> start_args() {
        return with_settings(
                {{"requeue_exit", {42}}, {"requeue_exit_hold", {43}}, {"max_batch_requeue", 2}});
    }
};

// requeue_exit: the script asks to run again by its exit code; after max_batch_requeue
// restarts the job ends with the reason. Each attempt appends to the output after a banner.
TEST_F(RequeueByRequest, ExitCodeRequeuesUpToTheCapKeepingEveryAttemptsOutput) {
    const uint64_t id = submit_batch(
            *cluster_, {"-o", "capped.out", "--wrap", "echo run $SLURM_RESTART_COUNT; exit 42"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "FAILED");
    EXPECT_EQ(attempts_of(*cluster_, id),
              (std::vector<std::pair<int, std::string>>{
                      {0, "REQUEUED"}, {1, "REQUEUED"}, {2, "FAILED"}}));
    const std::string output = read_text(cluster_->work_dir() + "/capped.out");
    const std::string id_text = std::to_string(id);
    std::regex expected("^run 0\ncohort: job " + id_text
                        + " attempt 2 \\(restart 1\\) on node\\d at [0-9T:-]+\nrun 1\ncohort: job "
                        + id_text + " attempt 3 \\(restart 2\\) on node\\d at [0-9T:-]+\nrun 2\n$");
    EXPECT_TRUE(std::regex_match(output, expected)) << output;
    EXPECT_NE(cluster_->cohort({"show", "job", id_text})
                      .out.find("Reason=requeue limit reached (2 restarts, max_batch_requeue)"),
              std::string::npos);
}

// requeue_exit_hold: requeued and held until released; --open-mode=truncate keeps only the
// last attempt's output, as Slurm does.
TEST_F(RequeueByRequest, ExitCodeRequeueHoldWaitsForRelease) {
    const uint64_t id =
            submit_batch(*cluster_, {"-o", "held.out", "--open-mode=truncate", "--wrap",
                                     "echo run $SLURM_RESTART_COUNT; "
                                     "[ $SLURM_RESTART_COUNT = 0 ] && exit 43; exit 0"});
    ASSERT_TRUE(eventually(
            [&] {
                return cluster_->cohort({"queue", "-h", "-j", std::to_string(id), "-o", "%T %r"})
                               .out
                       == "PENDING JobHeldUser\n";
            },
            seconds(30)));
    ASSERT_EQ(cluster_->cohort({"release", std::to_string(id)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(read_text(cluster_->work_dir() + "/held.out"), "run 1\n");
}

// cohort requeue (scontrol requeue) and requeue --hold act on running batch jobs only; a
// refused request changes nothing.
TEST_F(RequeueByRequest, RequeueByHandRunsTheJobAgainOrHoldsIt) {
    const std::string go = cluster_->work_dir() + "/go";
    const uint64_t id = submit_batch(*cluster_, {"-o", "by-hand.out", "--wrap",
                                                 "echo run $SLURM_RESTART_COUNT; "
                                                 "while [ ! -e "
                                                         + go + " ]; do sleep 0.1; done"});
    const uint64_t held = submit_batch(*cluster_, {"-H", "--wrap", "true"});
    const std::string id_text = std::to_string(id);
    auto state = [&] {
        return cluster_->job_state(id);
    };
    // RUNNING comes before the script's first line: requeue only an attempt that printed.
    const std::string out = cluster_->work_dir() + "/by-hand.out";
    auto printed = [&](int restart) {
        return eventually(
                [&] {
                    return read_text(out).find("run " + std::to_string(restart) + "\n")
                           != std::string::npos;
                },
                seconds(30));
    };
    ASSERT_TRUE(eventually([&] { return state() == "RUNNING"; }, seconds(30)));
    ASSERT_TRUE(printed(0)) << read_text(out);

    CommandResult refused = cluster_->cohort({"requeue", id_text, std::to_string(held)});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("job " + std::to_string(held)
                               + ": a PENDING job cannot be requeued (accepted: running batch "
                                 "jobs)"),
              std::string::npos)
            << refused.err;
    EXPECT_EQ(state(), "RUNNING");  // all or nothing

    ASSERT_EQ(cluster_->cohort({"requeue", id_text}).exit_code, 0);
    ASSERT_TRUE(eventually(
            [&] {
                return shown_job_json(*cluster_, id).value("restart_cnt", 0) == 1
                       && state() == "RUNNING";
            },
            seconds(30)));
    ASSERT_TRUE(printed(1)) << read_text(out);
    ASSERT_EQ(cluster_->cohort({"requeuehold", id_text}).exit_code, 0);
    ASSERT_TRUE(eventually(
            [&] {
                return cluster_->cohort({"queue", "-h", "-j", id_text, "-o", "%T %r"}).out
                       == "PENDING JobHeldUser\n";
            },
            seconds(30)));
    std::ofstream(go) << "go\n";
    ASSERT_EQ(cluster_->cohort({"release", id_text}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(attempts_of(*cluster_, id),
              (std::vector<std::pair<int, std::string>>{
                      {0, "REQUEUED"}, {1, "REQUEUED"}, {2, "COMPLETED"}}));
    const std::string output = read_text(out);
    EXPECT_NE(output.find("run 0\n"), std::string::npos) << output;
    EXPECT_NE(output.find("run 2\n"), std::string::npos) << output;
    cluster_->cohort({"cancel", std::to_string(held)});
}

// An R:USR1 --signal is kept for a preemption or a requeue. A requeue by hand sends it to
// the steps first, so a training step can checkpoint; the script that then ends
// is requeued, not finished. Without the signal's help the requeue goes on after kill_wait_s.
TEST_F(RequeueByRequest, RequeueByHandSendsTheRSignalFirst) {
    const std::string step = cluster_->work_dir() + "/checkpointing-step.sh";
    std::ofstream(step) << "trap 'echo checkpoint at restart $SLURM_RESTART_COUNT; exit 0' USR1\n"
                           "echo step ready\n"
                           "while :; do sleep 0.1; done\n";
    const uint64_t id = submit_batch(
            *cluster_, {"-o", "r-signal.out", "--signal=R:USR1", "--wrap",
                        "echo run $SLURM_RESTART_COUNT; "
                        "[ $SLURM_RESTART_COUNT = 0 ] && "
                                + cohort_binary() + " run -n1 bash " + step + "; exit 0"});
    const std::string out = cluster_->work_dir() + "/r-signal.out";
    // The signal must find the step's trap set: a sanitized launch takes longer than any
    // fixed pause.
    ASSERT_TRUE(eventually([&] { return read_text(out).find("step ready") != std::string::npos; },
                           seconds(30)))
            << read_text(out);
    ASSERT_EQ(cluster_->cohort({"requeue", std::to_string(id)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(attempts_of(*cluster_, id),
              (std::vector<std::pair<int, std::string>>{{0, "REQUEUED"}, {1, "COMPLETED"}}));
    const std::string output = read_text(out);
    const size_t first = output.find("run 0\n");
    const size_t checkpoint = output.find("checkpoint at restart 0\n");
    const size_t second = output.find("run 1\n");
    EXPECT_TRUE(first < checkpoint && checkpoint < second && second != std::string::npos) << output;
}

}  // namespace
}  // namespace cohort::testing
