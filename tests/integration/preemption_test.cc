// Preemption by QoS, end to end on one 2-CPU node: a `high` job preempts a running `low` job,
// which gets its R: warning signal at once, SIGTERM after low's grace time, and is requeued
// (its attempt recorded PREEMPTED) to finish after the high job; a `scavenger` job is
// cancelled as PREEMPTED instead; a `normal` job, which high may not preempt, runs on. On two
// nodes: a `low` hetjob is preempted and requeued whole, and a waiting `high` hetjob preempts
// for room for every component.
#include <fstream>
#include <iostream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

class PreemptionTest : public SharedCluster<PreemptionTest> {
public:
    static constexpr int kNodes = 1;

    static std::vector<std::string> start_args() {
        const nlohmann::json qos = nlohmann::json::array(
                {{{"name", "normal"}},
                 // Above high's priority: QoS preemption does not compare priorities, and
                 // the preempting job still runs before its requeued victim.
                 {{"name", "low"},
                  {"priority", 200},
                  {"grace_time", 3},
                  {"preempt_mode", "requeue"}},
                 {{"name", "scavenger"}, {"priority", 200}, {"preempt_mode", "cancel"}},
                 {{"name", "high"}, {"priority", 100}, {"preempt", {"low", "scavenger"}}}});
        return with_settings({{"qos", qos}, {"default_qos", "normal"}});
    }

protected:
    static uint64_t submit(std::vector<std::string> args) {
        args.insert(args.begin(), {"batch", "--parsable"});
        CommandResult result = cluster_->cohort(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return std::strtoull(result.out.c_str(), nullptr, 10);
    }

    static bool running(uint64_t id) {
        return eventually([id] { return cluster_->job_state(id) == "RUNNING"; }, seconds(20));
    }
};

// "WORD SECONDS" lines a script wrote, as WORD -> seconds since the epoch.
std::map<std::string, double> events_in(const std::string& path) {
    std::map<std::string, double> events;
    std::ifstream in(path);
    std::string word;
    double at = 0;
    while (in >> word >> at) {
        events.emplace(word, at);
    }
    return events;
}

TEST_F(PreemptionTest, ALowJobGetsItsSignalThenSigtermAfterGraceAndRunsAgainAfterTheHighJob) {
    const std::string events = cluster_->work_dir() + "/low-events";
    // Attempt 1 records its signals and runs until told; attempt 2 just completes.
    const std::string script =
            "if [ \"$SLURM_RESTART_COUNT\" = 1 ]; then echo AGAIN $(date +%s.%N) >> " + events
            + "; exit 0; fi\n"
            "trap 'echo USR1 $(date +%s.%N) >> " + events + "' USR1\n"
            "trap 'echo TERM $(date +%s.%N) >> " + events + "; exit 143' TERM\n"
            "echo READY $(date +%s.%N) >> " + events + "\n"
            "while :; do sleep 0.1; done\n";
    uint64_t low =
            submit({"--qos=low", "-n2", "--signal=RB:USR1@30", "-t", "10", "--wrap", script});
    ASSERT_TRUE(running(low));
    // Preempted only once its traps are set: RUNNING comes before the shell has read them.
    ASSERT_TRUE(eventually([&] { return events_in(events).count("READY") == 1; }, seconds(30)));
    const std::string high_start = cluster_->work_dir() + "/high-start";
    uint64_t high =
            submit({"--qos=high", "-n2", "--wrap", "echo HIGH $(date +%s.%N) > " + high_start});
    EXPECT_EQ(cluster_->wait_final_state(high, seconds(60)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(low, seconds(60)), "COMPLETED");

    std::map<std::string, double> timeline = events_in(events);
    const double high_started = events_in(high_start)["HIGH"];
    ASSERT_EQ(timeline.count("USR1"), 1u);
    ASSERT_EQ(timeline.count("TERM"), 1u);
    const double grace = timeline["TERM"] - timeline["USR1"];
    EXPECT_GT(grace, 2.5) << "SIGTERM comes low's grace time (3 s) after the warning";
    EXPECT_LT(grace, 5.0);
    EXPECT_GT(high_started, timeline["TERM"]);
    EXPECT_LT(high_started - timeline["TERM"], 5.0);
    // Low outranks high, yet its next attempt waits for the job that preempted it.
    EXPECT_GT(timeline["AGAIN"], high_started);
    std::cout << "preemption timeline: signal -> SIGTERM " << grace << " s, SIGTERM -> high job "
              << high_started - timeline["TERM"] << " s\n";

    // Each attempt is kept: the first PREEMPTED, the second COMPLETED.
    CommandResult acct = cluster_->cohort({"acct", "-D", "-j", std::to_string(low), "--json"});
    auto doc = nlohmann::json::parse(acct.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << acct.out;
    std::vector<std::string> states;
    for (const auto& job : doc["jobs"]) {
        states.push_back(job["job_state"][0].get<std::string>());
    }
    EXPECT_EQ(states, (std::vector<std::string>{"PREEMPTED", "COMPLETED"}));
}

TEST_F(PreemptionTest, AScavengerJobIsCancelledAndANormalJobIsNotPreempted) {
    uint64_t scavenger = submit({"--qos=scavenger", "-n2", "--wrap", "sleep 300"});
    ASSERT_TRUE(running(scavenger));
    uint64_t high = submit({"--qos=high", "-n2", "--wrap", "true"});
    EXPECT_EQ(cluster_->wait_final_state(scavenger, seconds(30)), "PREEMPTED");
    EXPECT_EQ(cluster_->wait_final_state(high, seconds(30)), "COMPLETED");

    const std::string go = cluster_->work_dir() + "/normal-go";
    uint64_t normal = submit({"-n2", "--wrap", "while [ ! -e " + go + " ]; do sleep 0.1; done"});
    ASSERT_TRUE(running(normal));
    uint64_t waiting = submit({"--qos=high", "-n2", "--wrap", "true"});
    std::this_thread::sleep_for(seconds(3));
    EXPECT_EQ(cluster_->job_state(normal), "RUNNING") << "high may not preempt normal";
    EXPECT_EQ(cluster_->job_state(waiting), "PENDING");
    std::ofstream(go) << "go\n";
    EXPECT_EQ(cluster_->wait_final_state(normal, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(waiting, seconds(30)), "COMPLETED");
}

// A waiting hetjob of a preempting QoS preempts through its leader, for room for every
// component at once: its two components need a node each (components never share one), so
// both nodes' low jobs are preempted, not only one.
class HetPreemptionTest : public SharedCluster<HetPreemptionTest> {
public:
    static constexpr int kNodes = 2;

    static std::vector<std::string> start_args() { return PreemptionTest::start_args(); }

protected:
    static uint64_t submit(std::vector<std::string> args) {
        args.insert(args.begin(), {"batch", "--parsable"});
        const CommandResult result = cluster_->cohort(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return std::strtoull(result.out.c_str(), nullptr, 10);
    }
};

TEST_F(HetPreemptionTest, AWaitingHetJobPreemptsForEveryComponent) {
    const std::string low_job =
            "if [ \"$SLURM_RESTART_COUNT\" = 1 ]; then exit 0; fi; while :; do sleep 0.1; done";
    const uint64_t first = submit({"--qos=low", "-N1", "-n2", "--wrap", low_job});
    const uint64_t second = submit({"--qos=low", "-N1", "-n2", "--wrap", low_job});
    for (uint64_t id : {first, second}) {
        ASSERT_TRUE(eventually([id] { return cluster_->job_state(id) == "RUNNING"; }, seconds(20)));
    }
    const std::string script = cluster_->work_dir() + "/het-high.sh";
    std::ofstream(script) << "#!/bin/bash\n"
                             "#SBATCH --qos=high -n1\n"
                             "#SBATCH hetjob\n"
                             "#SBATCH --qos=high -n1\n"
                             "true\n";
    const uint64_t het = submit({script});
    EXPECT_EQ(cluster_->wait_final_state(het, seconds(60)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(het + 1, seconds(60)), "COMPLETED");
    for (uint64_t id : {first, second}) {
        EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
        const CommandResult attempts = cluster_->cohort(
                {"acct", "-D", "-X", "-n", "-P", "-j", std::to_string(id), "-o", "State"});
        EXPECT_EQ(attempts.out, "PREEMPTED\nCOMPLETED\n") << id;
    }
}

TEST_F(HetPreemptionTest, ARunningHetJobIsPreemptedWholeAndRunsAgainWhole) {
    // Each component fills one of the two nodes: the high job needs only one node, but the
    // hetjob ends whole, so both components are preempted, and both run again.
    const std::string script = cluster_->work_dir() + "/het-low.sh";
    std::ofstream(script) << "#!/bin/bash\n"
                             "#SBATCH --qos=low -n2 -t 10\n"
                             "#SBATCH hetjob\n"
                             "#SBATCH --qos=low -n2\n"
                             "if [ \"$SLURM_RESTART_COUNT\" = 1 ]; then exit 0; fi\n"
                             "while :; do sleep 0.1; done\n";
    const uint64_t het = submit({script});
    for (uint64_t id : {het, het + 1}) {
        ASSERT_TRUE(eventually([id] { return cluster_->job_state(id) == "RUNNING"; }, seconds(20)));
    }
    const uint64_t high = submit({"--qos=high", "-N1", "-n2", "--wrap", "true"});
    EXPECT_EQ(cluster_->wait_final_state(high, seconds(60)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(het, seconds(60)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(het + 1, seconds(60)), "COMPLETED");

    // Both components' first attempts were preempted, and both ran again.
    CommandResult acct = cluster_->cohort({"acct", "-D", "-j", std::to_string(het), "--json"});
    auto doc = nlohmann::json::parse(acct.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << acct.out;
    std::map<std::string, int> states;
    for (const auto& job : doc["jobs"]) {
        ++states[job["job_state"][0].get<std::string>()];
    }
    EXPECT_EQ(states, (std::map<std::string, int>{{"COMPLETED", 2}, {"PREEMPTED", 2}})) << acct.out;
}

}  // namespace
}  // namespace cohort::testing
