// The SQLite store and the group-commit writer: what is committed comes back after reopening.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "accounting/sqlite/sqlite_job_store.h"
#include "scheduler/ctld/state_writer.h"
#include "scheduler/ctld/submit_validation.h"

namespace cohort::ctld {
namespace {

std::string temp_db() {
    auto dir = std::filesystem::temp_directory_path()
            / ("cohort-store-" + std::to_string(getpid()) + "-"
                    + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return (dir / "cohort.db").string();
}

protocol::JobRecord job(uint64_t id, JobState state) {
    protocol::JobRecord record;
    record.job_id = id;
    record.state = state;
    record.user_name = "alice";
    record.submit_time = 100 + static_cast<int64_t>(id);
    return record;
}

TEST(StateWriter, CommittedJobsSurviveReopen) {
    const std::string path = temp_db();
    {
        auto store = acct::SqliteJobStore::open(path, "full");
        ASSERT_TRUE(store) << store.status().message();
        StateWriter writer(std::move(*store));
        std::vector<std::future<Status>> done;
        for (uint64_t id = 1; id <= 50; ++id) {
            auto promise = std::make_shared<std::promise<Status>>();
            done.push_back(promise->get_future());
            writer.write({job(id, id % 2 ? JobState::kPending : JobState::kCompleted),
                                 NextJobId{id + 1}},
                    [promise](const Status& s) { promise->set_value(s); });
        }
        for (auto& f : done) {
            EXPECT_TRUE(f.get());
        }
    }
    auto store = acct::SqliteJobStore::open(path, "full");
    ASSERT_TRUE(store);
    auto loaded = (*store)->load_active();
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->next_job_id, 51u);
    EXPECT_EQ(loaded->jobs.size(), 25u);  // the pending ones
    auto finished = (*store)->query_jobs({{}, "alice", 0, {JobState::kCompleted}});
    ASSERT_TRUE(finished);
    EXPECT_EQ(finished->size(), 25u);
    auto nobody = (*store)->query_jobs({{}, "bob", 0, {}});
    ASSERT_TRUE(nobody);
    EXPECT_TRUE(nobody->empty());
}

TEST(StateWriter, ReadSeesEarlierWrites) {
    auto store = acct::SqliteJobStore::open(temp_db(), "normal");
    ASSERT_TRUE(store);
    StateWriter writer(std::move(*store));
    writer.write({job(7, JobState::kRunning)}, nullptr);
    std::promise<size_t> count;
    writer.read([&](acct::JobStore& s) { count.set_value(s.query_jobs({{7}, "", 0, {}})->size()); });
    EXPECT_EQ(count.get_future().get(), 1u);
}

PartitionConfig partition(const std::string& name, bool is_default, int64_t max_time_s) {
    PartitionConfig p;
    p.name = name;
    p.nodes = {"node1"};
    p.is_default = is_default;
    p.max_time_s = max_time_s;
    return p;
}

Result<ValidatedJob> validate(const protocol::JobSpec& spec, const ClusterConfig& config) {
    const std::vector<sched::NodeCapacity> nodes;
    const PartitionNodes partitions = index_partitions(config);
    const Reservations reservations;
    const std::string user = "alice";
    return validate_submission(spec, {config, nodes, partitions, reservations, user});
}

TEST(SubmitValidation, RejectsUnknownPartitionAndNamesTheChoices) {
    ClusterConfig config;
    config.nodes = {"node1"};
    config.partitions = {partition("debug", true, 3600), partition("gpu", false, -1)};
    protocol::JobSpec spec;
    spec.partition = "nope";
    auto result = validate(spec, config);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.status().message(),
            "--partition: invalid partition 'nope' (accepted: debug, gpu)");
}

TEST(SubmitValidation, TimeLimitAbovePartitionMaxIsRefused) {
    ClusterConfig config;
    config.nodes = {"node1"};
    config.partitions = {partition("debug", true, 3600)};
    protocol::JobSpec spec;
    spec.time_limit_s = 7200;
    auto result = validate(spec, config);
    ASSERT_FALSE(result);
    EXPECT_NE(result.status().message().find("exceeds the limit of 1:00:00"), std::string::npos);
    spec.time_limit_s = -2;  // partition default = its max
    auto accepted = validate(spec, config);
    ASSERT_TRUE(accepted);
    EXPECT_EQ(accepted->time_limit_s, 3600);
}

}  // namespace
}  // namespace cohort::ctld
