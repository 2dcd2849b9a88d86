// At a cluster's size: listings of tens of thousands of jobs. Its tests run alone (RUN_SERIAL):
// under the sanitizers they take minutes and would starve the timed tests beside them.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

// 50,000 jobs: their listing (tens of MiB) is more than one frame may hold (16 MiB), so
// `queue`, `queue --json` and `acct` only work because replies stream in frames.
TEST(Scale, ListingsOfFiftyThousandJobsStreamInFrames) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    // Few commands: under the sanitizers each one starts slowly.
    constexpr int kArrays = 5;
    constexpr uint64_t kTasks = 10000;
    std::vector<std::string> ids;
    for (int i = 0; i < kArrays; ++i) {
        CommandResult submitted = cluster.cohort(
                {"batch", "--parsable", "-H", "--array=0-9999", "-J", "many", "--wrap", "true"});
        ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
        const uint64_t array_id = submitted_id(submitted);
        ids.push_back(std::to_string(array_id));
        // Naming every task splits it off the array's one record: jobs of their own.
        std::vector<std::string> hold = {"hold"};
        for (uint64_t task = 0; task < kTasks; ++task) {
            hold.push_back(std::to_string(array_id + task));
        }
        CommandResult held = cluster.cohort(hold, std::chrono::seconds(120));
        ASSERT_EQ(held.exit_code, 0) << held.err;
    }
    const size_t jobs = kArrays * kTasks;
    CommandResult queue = cluster.cohort({"queue", "-t", "PD"}, std::chrono::seconds(120));
    ASSERT_EQ(queue.exit_code, 0) << queue.err;
    EXPECT_EQ(line_count(queue.out), jobs + 1);  // the header, then one line a job
    CommandResult json = cluster.cohort({"queue", "--json"}, std::chrono::seconds(120));
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(nlohmann::json::parse(json.out).at("jobs").size(), jobs);

    std::vector<std::string> cancel = {"cancel"};
    cancel.insert(cancel.end(), ids.begin(), ids.end());
    CommandResult cancelled = cluster.cohort(cancel, std::chrono::seconds(120));
    ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
    CommandResult acct = cluster.cohort({"acct", "-s", "CA"}, std::chrono::seconds(120));
    ASSERT_EQ(acct.exit_code, 0) << acct.err;
    EXPECT_EQ(line_count(acct.out), jobs + 1);
}

// --array=0-99999 is one record, as in Slurm: listed as one line, its tasks split off only
// as they may start, so the record shrinks while they run.
TEST(Scale, AnArrayOfAHundredThousandTasksIsOneRecordUntilItsTasksRun) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    CommandResult submitted = cluster.cohort(
            {"batch", "--parsable", "-H", "--array=0-99999", "-J", "sweep", "--wrap", "true"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const std::string id = std::to_string(submitted_id(submitted));
    CommandResult queue = cluster.cohort({"queue", "-h", "-o", "%i %j %T %r"});
    EXPECT_EQ(queue.out, id + "_[0-99999] sweep PENDING JobHeldUser\n");
    CommandResult json = cluster.cohort({"queue", "--json"});
    auto jobs = nlohmann::json::parse(json.out).at("jobs");
    ASSERT_EQ(jobs.size(), 1u) << json.out;
    EXPECT_EQ(jobs[0].at("array_task_string"), "0-99999");

    ASSERT_EQ(cluster.cohort({"release", id}).exit_code, 0);
    // Bounded: tasks start, finish and leave the record; it never lists them all.
    std::string remaining;
    for (int i = 0; i < 300 && remaining.empty(); ++i) {
        queue = cluster.cohort({"queue", "-h", "-t", "PD", "-o", "%i"});
        if (queue.out.rfind(id + "_[", 0) == 0 && queue.out.rfind(id + "_[0-", 0) != 0) {
            remaining = queue.out;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_FALSE(remaining.empty()) << queue.out;
    EXPECT_LE(line_count(queue.out), 3u) << queue.out;  // the record, and a few split-off tasks
    ASSERT_EQ(cluster.cohort({"cancel", id}).exit_code, 0);
    CommandResult acct;
    for (int i = 0; i < 100 && acct.out.find(id + "_[") == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        acct = cluster.cohort({"acct", "-j", id, "-s", "CA"});
    }
    EXPECT_NE(acct.out.find(id + "_["), std::string::npos) << acct.out;  // the record, CANCELLED
}

}  // namespace
}  // namespace cohort::testing
