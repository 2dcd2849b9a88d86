// At a cluster's size: listings of tens of thousands of jobs. Its tests run alone (RUN_SERIAL):
// under the sanitizers they take minutes and would starve the timed tests beside them.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

uint64_t submitted_id(const CommandResult& result) {
    return std::strtoull(result.out.c_str(), nullptr, 10);
}

size_t line_count(const std::string& text) {
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// 50,000 jobs: their listing (tens of MiB) is more than one frame may hold (16 MiB), so
// `queue`, `queue --json` and `acct` only work because replies stream in frames.
TEST(Scale, ListingsOfFiftyThousandJobsStreamInFrames) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    constexpr int kArrays = 50;  // of 1,000 tasks each, the largest array Slurm allows
    std::vector<std::string> ids;
    for (int i = 0; i < kArrays; ++i) {
        CommandResult submitted = cluster.cohort(
                {"batch", "--parsable", "-H", "--array=0-999", "-J", "many", "--wrap", "true"});
        ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
        ids.push_back(std::to_string(submitted_id(submitted)));
    }
    const size_t jobs = kArrays * 1000;
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

}  // namespace
}  // namespace cohort::testing
