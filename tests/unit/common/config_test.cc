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

TEST(ClusterConfigFile, NodeGresRoundTripsAndBadEntriesNameTheNodeAndValue) {
    std::string text = kMinimal;
    text.insert(1, R"("node_gres": {"n[1-2]": {"nvme": 20, "fpga": 2}}, )");
    auto config = load_config(temp_config(text));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->gres_names(), (std::vector<std::string>{"fpga", "nvme"}));
    EXPECT_EQ(config->node_gres.at("n2"), (std::vector<GresCount>{{"fpga", 2}, {"nvme", 20}}));
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->node_gres, config->node_gres);

    const std::pair<const char*, const char*> bad[] = {
            {R"("node_gres": {"n1": {"nvme": -1}}, )", "node_gres: n1: nvme: invalid count -1"},
            {R"("node_gres": {"n1": {"gpu": 4}}, )", "node_gres: n1: gpu (accepted: other"},
            {R"("node_gres": {"n9": {"nvme": 1}}, )", "node_gres: node 'n9' is not in the cluster"},
            {R"("node_gres": {"n1": ["nvme"]}, )", "node_gres: n1: [\"nvme\"] (accepted: an"},
            {R"("node_gres": {"n1": {"nv me": 1}}, )", "invalid generic resource 'nv me'"}};
    for (const auto& [entry, message] : bad) {
        text = kMinimal;
        text.insert(1, entry);
        auto refused = load_config(temp_config(text));
        ASSERT_FALSE(refused) << entry;
        EXPECT_NE(refused.status().message().find(message), std::string::npos)
                << refused.status().message();
    }
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

// Up to max_heartbeats_per_s nodes heartbeat at heartbeat_interval_ms; more nodes spread
// theirs further apart, and a silent node is given three of those longer intervals.
TEST(ClusterConfigFile, HeartbeatIntervalLengthensWithTheNodeCount) {
    auto config = load_config(temp_config(kMinimal));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->max_heartbeats_per_s, 2000);
    EXPECT_EQ(config->agent_heartbeat_interval_ms(), 1000);  // 2 nodes
    EXPECT_EQ(config->effective_node_timeout_ms(), 10000);
    config->nodes.resize(2000);
    EXPECT_EQ(config->agent_heartbeat_interval_ms(), 1000);
    EXPECT_EQ(config->effective_node_timeout_ms(), 10000);
    config->nodes.resize(10000);
    EXPECT_EQ(config->agent_heartbeat_interval_ms(), 5000);
    EXPECT_EQ(config->effective_node_timeout_ms(), 15000);
    config->node_timeout_ms = 60000;  // longer than three intervals: kept
    EXPECT_EQ(config->effective_node_timeout_ms(), 60000);
    config->max_heartbeats_per_s = 3000;  // 3.34 s, rounded up to whole milliseconds
    EXPECT_EQ(config->agent_heartbeat_interval_ms(), 3334);

    config->nodes.resize(2);
    config->max_heartbeats_per_s = 500;
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->max_heartbeats_per_s, 500);
}

TEST(ClusterConfigFile, BadHeartbeatSettingsNameTheKeyAndWhatIsAccepted) {
    const std::pair<const char*, const char*> cases[] = {
            {R"("heartbeat_interval_ms": 50, )",
             "heartbeat_interval_ms: invalid value '50' (accepted: 100 or more)"},
            {R"("node_timeout_ms": 1500, )",
             "node_timeout_ms: invalid value '1500' (accepted: twice heartbeat_interval_ms or "
             "more, 2000 or more)"},
            {R"("max_heartbeats_per_s": 0, )",
             "max_heartbeats_per_s: invalid value '0' (accepted: 1 or more)"},
    };
    for (const auto& [setting, message] : cases) {
        std::string text = kMinimal;
        text.insert(1, setting);
        auto bad = load_config(temp_config(text));
        ASSERT_FALSE(bad) << setting;
        EXPECT_NE(bad.status().message().find(message), std::string::npos)
                << bad.status().message();
    }
}

TEST(ClusterConfigFile, NodeHooksAndPidsCapRoundTripAndRefuseBadValues) {
    auto config = parse_config_text(kMinimal, "minimal.json");
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->prolog, "");
    EXPECT_EQ(config->prolog_epilog_timeout_s, 300);
    EXPECT_EQ(config->job_pids_max, 0);
    config->prolog = "/etc/cohort/prolog";
    config->epilog = "/etc/cohort/epilog";
    config->job_pids_max = 512;
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->prolog, "/etc/cohort/prolog");
    EXPECT_EQ(again->epilog, "/etc/cohort/epilog");
    EXPECT_EQ(again->job_pids_max, 512);
    for (const auto& [setting, message] : std::vector<std::pair<std::string, std::string>>{
                 {R"("prolog": "prolog.sh", )",
                  "prolog: invalid value 'prolog.sh' (accepted: an absolute path, or empty"},
                 {R"("prolog_epilog_timeout_s": 0, )",
                  "prolog_epilog_timeout_s: invalid value '0' (accepted: 1 or more)"},
                 {R"("job_pids_max": -1, )", "job_pids_max: invalid value '-1' (accepted: 0"}}) {
        std::string text = kMinimal;
        text.insert(1, setting);
        auto bad = parse_config_text(text, "bad.json");
        ASSERT_FALSE(bad) << setting;
        EXPECT_NE(bad.status().message().find(message), std::string::npos)
                << bad.status().message();
    }
}

TEST(ClusterConfigFile, AuthAndRolesDefaultToOneUsersInstanceAndRoundTrip) {
    auto config = load_config(temp_config(kMinimal));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->auth, "cluster_key");
    EXPECT_EQ(config->munge_socket, "/run/munge/munge.socket.2");
    EXPECT_EQ(config->daemon_user, "root");
    EXPECT_TRUE(config->operators.empty());
    EXPECT_TRUE(config->private_data.empty());
    config->auth = "munge";
    config->munge_socket = "/tmp/m.socket";
    config->operators = {"alice"};
    config->admins = {"bob"};
    config->private_data = {"jobs"};
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->auth, "munge");
    EXPECT_EQ(again->munge_socket, "/tmp/m.socket");
    EXPECT_EQ(again->operators, std::vector<std::string>{"alice"});
    EXPECT_EQ(again->admins, std::vector<std::string>{"bob"});
    EXPECT_EQ(again->private_data, std::vector<std::string>{"jobs"});
}

TEST(ClusterConfigFile, BadAuthAndPrivateDataNameTheKey) {
    std::string text = kMinimal;
    text.insert(1, R"("auth": "kerberos", )");
    auto bad = load_config(temp_config(text));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.status().message().find(
                      "auth: invalid value 'kerberos' (accepted: cluster_key, munge)"),
              std::string::npos)
            << bad.status().message();
    text = kMinimal;
    text.insert(1, R"("private_data": ["jobs", "usage"], )");
    bad = load_config(temp_config(text));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.status().message().find("private_data: invalid value 'usage' (accepted: jobs)"),
              std::string::npos)
            << bad.status().message();
}

TEST(ClusterConfigFile, MailProgramDefaultsToMailAndMustBeAnAbsolutePath) {
    auto config = load_config(temp_config(kMinimal));
    ASSERT_TRUE(config) << config.status().message();
    EXPECT_EQ(config->mail_program, "/usr/bin/mail");
    config->mail_program = "/opt/site/bin/notify";
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->mail_program, "/opt/site/bin/notify");
    std::string text = kMinimal;
    text.insert(1, R"("mail_program": "mail", )");
    auto bad = load_config(temp_config(text));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.status().message().find(
                      "mail_program: invalid value 'mail' (accepted: an absolute path"),
              std::string::npos)
            << bad.status().message();
}

TEST(ClusterConfigFile, PreemptionKeysRoundTripAndBadOnesNameTheQos) {
    std::string text = kMinimal;
    text.insert(1, R"("qos": [{"name": "low", "preempt_mode": "cancel", "grace_time": 30},
                           {"name": "high", "priority": 10, "preempt": ["low"]}], )");
    auto config = load_config(temp_config(text));
    ASSERT_TRUE(config) << config.status().message();
    const QosConfig* low = config->policy.find_qos("low");
    ASSERT_NE(low, nullptr);
    EXPECT_EQ(low->preempt_mode, PreemptMode::kCancel);
    EXPECT_EQ(low->grace_time_s, 30);
    EXPECT_EQ(config->policy.find_qos("high")->preempt, std::vector<std::string>{"low"});
    const std::string path = temp_config("");
    ASSERT_TRUE(save_config(*config, path));
    auto again = load_config(path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_EQ(again->policy.find_qos("low")->grace_time_s, 30);
    EXPECT_EQ(again->policy.find_qos("high")->preempt, std::vector<std::string>{"low"});

    const std::pair<const char*, const char*> bad[] = {
            {R"({"name": "high", "preempt": ["gold"]})",
             "qos high: preempt: unknown QoS 'gold' (accepted: a QoS listed under qos)"},
            {R"({"name": "high", "preempt": ["high"]})",
             "qos high: preempt: invalid entry \"high\" (accepted: names of other QoSes)"},
            {R"({"name": "high", "preempt_mode": "suspend"})",
             "qos high: preempt_mode: invalid value 'suspend' (accepted: requeue, cancel)"},
            {R"({"name": "high", "grace_time": -5})", "qos high: grace_time: invalid value -5"},
    };
    for (const auto& [qos, message] : bad) {
        std::string bad_text = kMinimal;
        bad_text.insert(1, std::string(R"("qos": [)") + qos + "], ");
        auto refused = load_config(temp_config(bad_text));
        ASSERT_FALSE(refused) << qos;
        EXPECT_NE(refused.status().message().find(message), std::string::npos)
                << refused.status().message();
    }
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
