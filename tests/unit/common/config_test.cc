// The cluster config file: defaults, round trip through save_config, and bad values named.
#include "common/config.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace cohort {
namespace {

std::string temp_config(const std::string& text) {
    auto path = std::filesystem::temp_directory_path()
                / ("cohort-config-" + std::to_string(getpid()) + "-"
                   + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
    std::ofstream(path) << text;
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

}  // namespace
}  // namespace cohort
