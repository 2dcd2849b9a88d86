// Slurm-shaped JSON written a value at a time: laid out as nlohmann's dump(2), parsed back to
// the record's fields, one document however many items arrive.
#include "cli/json_output.h"

#include <limits>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cohort::cli {
namespace {

using nlohmann::ordered_json;

std::string dumped(const ordered_json& document) {
    return document.dump(2, ' ', false, ordered_json::error_handler_t::replace);
}

TEST(JsonWriter, LaysOutValuesAsDumpOfTheSameDocument) {
    std::string text;
    JsonWriter w(text);
    w.begin_object()
            .member("name", "plain")
            .member("quoted", "say \"hi\"\\now\n\ttab\x01")
            .member("utf8", "caf\xc3\xa9")
            .member("invalid", "bad\xff byte")
            .member("negative", -42)
            .member("largest", std::numeric_limits<uint64_t>::max())
            .member("yes", true)
            .member("no", false)
            .key("empty_object")
            .begin_object()
            .end_object()
            .key("empty_array")
            .begin_array()
            .end_array()
            .key("list")
            .begin_array()
            .value(1)
            .begin_object()
            .member("inner", "x")
            .end_object()
            .begin_array()
            .value("y")
            .end_array()
            .end_array()
            .end_object();
    const ordered_json expected = {{"name", "plain"},
                                   {"quoted", "say \"hi\"\\now\n\ttab\x01"},
                                   {"utf8", "caf\xc3\xa9"},
                                   {"invalid", "bad\xff byte"},
                                   {"negative", -42},
                                   {"largest", std::numeric_limits<uint64_t>::max()},
                                   {"yes", true},
                                   {"no", false},
                                   {"empty_object", ordered_json::object()},
                                   {"empty_array", ordered_json::array()},
                                   {"list", {1, {{"inner", "x"}}, {"y"}}}};
    EXPECT_EQ(text, dumped(expected));
    EXPECT_EQ(ordered_json::parse(text)["invalid"], "bad\xef\xbf\xbd byte");
}

TEST(JsonWriter, IndentsFromTheDepthItStartsAt) {
    std::string text;
    JsonWriter(text, 2).begin_object().member("a", 1).end_object();
    EXPECT_EQ(text, "{\n      \"a\": 1\n    }");
}

std::string listing(const std::vector<protocol::JobRecord>& jobs) {
    std::ostringstream out;
    JsonPayloadStream stream(out, "jobs");
    for (const auto& job : jobs) {
        stream.add([&](JsonWriter& w) {
            write_job_fields(w.begin_object(), job);
            w.end_object();
        });
    }
    stream.finish();
    return out.str();
}

TEST(JsonPayloadStream, PrintsOneSlurmShapedDocumentOfEveryItem) {
    protocol::JobRecord job;
    job.job_id = 7;
    job.spec.name = "train \"big\"\n";
    job.array_job_id = 5;
    job.array_pending = "2-9";
    job.time_limit_s = 90;
    job.spec.kept_options = {{"--gpu-bind", "closest"}};
    for (size_t count : {0, 1, 3}) {
        const std::string text = listing(std::vector<protocol::JobRecord>(count, job));
        ASSERT_EQ(text.back(), '\n');
        const nlohmann::json document = nlohmann::json::parse(text);
        ASSERT_EQ(document["jobs"].size(), count);
        EXPECT_EQ(document["meta"]["plugin"]["type"], "cohort");
        EXPECT_EQ(document["errors"], nlohmann::json::array());
        EXPECT_EQ(document["warnings"], nlohmann::json::array());
        for (const auto& item : document["jobs"]) {
            EXPECT_EQ(item["job_id"], 7);
            EXPECT_EQ(item["name"], job.spec.name);
            EXPECT_EQ(item["array_job_id"],
                      (nlohmann::json{{"set", true}, {"infinite", false}, {"number", 5}}));
            EXPECT_EQ(item["array_task_string"], "2-9");
            EXPECT_EQ(item["time_limit"]["number"], 2);  // minutes, rounded up
            EXPECT_EQ(item["job_state"], nlohmann::json::array({"PENDING"}));
            EXPECT_EQ(item["kept_options"]["--gpu-bind"], "closest");
            EXPECT_EQ(item["exit_code"]["status"], nlohmann::json::array({"PENDING"}));
        }
    }
}

TEST(JsonPayloadStream, ItemsLaidOutAsTheDocumentWouldBe) {
    std::ostringstream out;
    JsonPayloadStream stream(out, "nodes");
    for (const char* name : {"n1", "n2"}) {
        stream.add([&](JsonWriter& w) { w.begin_object().member("name", name).end_object(); });
    }
    stream.finish();
    const ordered_json expected = {{"nodes", {{{"name", "n1"}}, {{"name", "n2"}}}},
                                   {"meta", {{"plugin", {{"type", "cohort"}, {"name", "cohort"}}}}},
                                   {"errors", ordered_json::array()},
                                   {"warnings", ordered_json::array()}};
    EXPECT_EQ(out.str(), dumped(expected) + "\n");
}

}  // namespace
}  // namespace cohort::cli
