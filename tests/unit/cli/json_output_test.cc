// Slurm-shaped JSON: a listing printed one item at a time reads exactly as the whole document.
#include "cli/json_output.h"

#include <sstream>

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

std::string streamed(const std::vector<nlohmann::json>& items) {
    std::ostringstream out;
    JsonPayloadStream stream(out, "jobs");
    for (const auto& item : items) {
        stream.add(item);
    }
    stream.finish();
    return out.str();
}

TEST(JsonPayloadStream, PrintsWhatDumpOfTheWholeDocumentPrints) {
    protocol::JobRecord job;
    job.job_id = 7;
    job.spec.name = "train";
    job.array_job_id = 5;
    job.array_pending = "2-9";
    for (size_t count : {0, 1, 3}) {
        std::vector<nlohmann::json> items(count, job_to_json(job));
        nlohmann::json all = nlohmann::json::array();
        for (const auto& item : items) {
            all.push_back(item);
        }
        EXPECT_EQ(streamed(items), wrap_payload("jobs", all).dump(2) + "\n") << count << " items";
    }
}

}  // namespace
}  // namespace cohort::cli
