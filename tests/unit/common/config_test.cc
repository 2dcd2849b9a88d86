// The cluster config file: defaults, round trip through save_config, and bad values named.
#include "common/config.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace cohort {
namespace {

// The tests' config files, removed when the test program exits.
struct TempFiles {
    std::vector<std::filesystem::path> paths;

    ~TempFiles() {
        for (const auto& path : paths) {
            std::filesystem::remove(path);
        }
    }
};

std::string temp_config(const std::string& text) {
    static TempFiles made;
    auto path = std::filesystem::temp_directory_path()
                / ("cohort-config-" + std::to_string(getpid()) + "-"
                   + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
    std::ofstream(path) << text;
    made.paths.push_back(path);
    return path.string();
}

constexpr const char* kMinimal =
        R"({"nodes": "n[1-2]", "partitions": [{"name": "p", "nodes": "n[1-2]", "default": true}]})";

TEST(ClusterConfigFile, ArraySizeAndPurgeDefaultAndRoundTrip) {
    auto config = load_config(temp_config(kMinimal));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->max_array_size, 100001);
    EXPECT_EQ(config->purge_jobs_after_days, 0);  // keep forever
    config->max_array_size = 1001;
    config->purge_jobs_after_days = 365;
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->max_array_size, 1001);
    EXPECT_EQ(again->purge_jobs_after_days, 365);
}

TEST(ClusterConfigFile, BadArraySizeAndPurgeNameTheKey) {
    std::string text = kMinimal;
    text.insert(1, R"("max_array_size": 0, )");
    auto config = load_config(temp_config(text));
    ASSERT_FALSE(config);
    EXPECT_NE(config.status().message().find(
                      "max_array_size: invalid value '0' (accepted: 1 to 4000001)"),
              std::string::npos)
            << config.status().message();
    text = kMinimal;
    text.insert(1, R"("purge_jobs_after_days": -1, )");
    config = load_config(temp_config(text));
    ASSERT_FALSE(config);
    EXPECT_NE(config.status().message().find("purge_jobs_after_days: invalid value '-1'"),
              std::string::npos)
            << config.status().message();
}

TEST(ClusterConfigFile, RequeueSettingsDefaultAsSlurmsAndRoundTrip) {
    auto config = load_config(temp_config(kMinimal));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_TRUE(config->job_requeue);
    EXPECT_EQ(config->max_batch_requeue, 5);
    EXPECT_TRUE(config->requeue_avoid_failed_nodes);
    EXPECT_TRUE(config->requeue_exit.empty());
    config->job_requeue = false;
    config->max_batch_requeue = 2;
    config->requeue_avoid_failed_nodes = false;
    config->requeue_exit = {42};
    config->requeue_exit_hold = {43, 44};
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_FALSE(again->job_requeue);
    EXPECT_EQ(again->max_batch_requeue, 2);
    EXPECT_FALSE(again->requeue_avoid_failed_nodes);
    EXPECT_EQ(again->requeue_exit, std::vector<int32_t>{42});
    EXPECT_EQ(again->requeue_exit_hold, (std::vector<int32_t>{43, 44}));
}

TEST(ClusterConfigFile, ReturnToServiceDefaultsToSlurmsAndRefusesOtherValues) {
    auto config = load_config(temp_config(kMinimal));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->return_to_service, 0);
    config->return_to_service = 2;
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->return_to_service, 2);
    std::string text = kMinimal;
    text.insert(1, R"("return_to_service": 3, )");
    auto bad = load_config(temp_config(text));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.status().message().find("return_to_service: invalid value '3' (accepted: 0"),
              std::string::npos)
            << bad.status().message();
}

TEST(ClusterConfigFile, BadRequeueExitCodeNamesTheKeyAndTheCode) {
    std::string text = kMinimal;
    text.insert(1, R"("requeue_exit_hold": [3, 256], )");
    auto config = load_config(temp_config(text));
    ASSERT_FALSE(config);
    EXPECT_NE(config.status().message().find("requeue_exit_hold: invalid exit code 256 (accepted: "
                                             "a list of codes from 1 to 255)"),
              std::string::npos)
            << config.status().message();
}

}  // namespace
}  // namespace cohort
