// The SQLite store and the group-commit writer: what is committed comes back after reopening.
#include <algorithm>
#include <filesystem>
#include <future>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "scheduler/ctld/state/sqlite_state_store.h"
#include "scheduler/ctld/state/state_writer.h"
#include "scheduler/ctld/submit_validation.h"
#include "tests/unit/ctld/validate_for_test.h"

namespace cohort::ctld {
namespace {

// The tests' database directories, removed when the test program exits.
struct TempDirs {
    std::vector<std::filesystem::path> dirs;

    ~TempDirs() {
        for (const auto& dir : dirs) {
            std::filesystem::remove_all(dir);
        }
    }
};

std::string temp_db() {
    static TempDirs made;
    auto dir = std::filesystem::temp_directory_path()
               / ("cohort-store-" + std::to_string(getpid()) + "-"
                  + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    made.dirs.push_back(dir);
    return (dir / "cohort.db").string();
}

protocol::JobRecord job_record(uint64_t id, JobState state) {
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
        auto store = SqliteStateStore::open(path, "full");
        ASSERT_TRUE(store) << store.status().message();
        StateWriter writer(std::move(*store), nullptr);
        std::vector<std::future<Status>> done;
        for (uint64_t id = 1; id <= 50; ++id) {
            auto promise = std::make_shared<std::promise<Status>>();
            done.push_back(promise->get_future());
            writer.write({job_record(id, id % 2 ? JobState::kPending : JobState::kCompleted),
                          NextJobId{id + 1}},
                         [promise](const Status& s) { promise->set_value(s); });
        }
        for (auto& f : done) {
            EXPECT_TRUE(f.get());
        }
    }
    auto store = SqliteStateStore::open(path, "full");
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
    auto store = SqliteStateStore::open(temp_db(), "normal");
    ASSERT_TRUE(store);
    StateWriter writer(std::move(*store), nullptr);
    writer.write({job_record(7, JobState::kRunning)}, nullptr);
    std::promise<size_t> count;
    writer.read([&](StateStore& s) { count.set_value(s.query_jobs({{7}, "", 0, {}})->size()); });
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

// A database written by the first, unversioned layout (tests/data/state/SOURCES.md) is
// migrated on open: every job survives, and scripts and environments move to payloads.
TEST(SqliteStateStore, MigratesTheUnversionedLayoutKeepingEveryJobScriptAndEnvironment) {
    const std::string path = temp_db();
    std::filesystem::copy_file(COHORT_TEST_DATA_DIR "/state/v1-cohort.db", path);
    {
        auto store = SqliteStateStore::open(path, "full");
        ASSERT_TRUE(store) << store.status().message();
        auto loaded = (*store)->load_active();
        ASSERT_TRUE(loaded) << loaded.status().message();
        std::vector<uint64_t> ids;
        for (const auto& job : loaded->jobs) {
            ids.push_back(job.job_id);
            EXPECT_TRUE(job.spec.env.empty()) << "job " << job.job_id << " keeps its payload";
            EXPECT_TRUE(job.spec.script.empty());
        }
        EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3, 4, 5, 6}));
        EXPECT_EQ(loaded->next_job_id, 7u);
        EXPECT_EQ(loaded->jobs[0].spec.name, "fixture-script");
        EXPECT_EQ(loaded->jobs[0].spec.ntasks, 2u);
        EXPECT_TRUE(loaded->jobs[0].held);
        EXPECT_EQ(loaded->jobs[1].array_max_running, 2u);

        auto script = (*store)->payload(1);
        ASSERT_TRUE(script) << script.status().message();
        EXPECT_NE(script->script.find("hello from the v1 fixture"), std::string::npos);
        const std::pair<std::string, std::string> fixture_var{"FIXTURE_VAR",
                                                              "kept-through-migration"};
        EXPECT_NE(std::find(script->env.begin(), script->env.end(), fixture_var),
                  script->env.end());
        auto array = (*store)->payload(payload_key(loaded->jobs[3]));  // task 3_2
        ASSERT_TRUE(array);
        EXPECT_NE(array->script.find("echo task"), std::string::npos);
        auto finished = (*store)->query_jobs({{2}, "", 0, {}});
        ASSERT_TRUE(finished);
        ASSERT_EQ(finished->size(), 1u);
        EXPECT_EQ(finished->front().state, JobState::kCompleted);
        EXPECT_EQ((*store)->payload(99).status().code(), StatusCode::kNotFound);
    }
    // Opened again, it is already current: nothing moves twice.
    auto again = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_TRUE((*again)->payload(1));
}

// Version 3 (tests/data/state/SOURCES.md) stored every array task as a job, and records
// without `array_pending` (encoded as JobRecord version 0): they load as they were.
TEST(SqliteStateStore, MigratesVersion3KeepingItsArrayTasksAsJobs) {
    const std::string path = temp_db();
    std::filesystem::copy_file(COHORT_TEST_DATA_DIR "/state/v3-cohort.db", path);
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store) << store.status().message();
    auto loaded = (*store)->load_active();
    ASSERT_TRUE(loaded) << loaded.status().message();
    std::vector<std::string> ids;
    for (const auto& job : loaded->jobs) {
        ids.push_back(job.display_id());
        EXPECT_TRUE(job.held);
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"1", "2_0", "2_1", "2_2", "2_3"}));
    EXPECT_EQ(loaded->next_job_id, 6u);
    auto array = (*store)->payload(payload_key(loaded->jobs[4]));
    ASSERT_TRUE(array) << array.status().message();
    EXPECT_NE(array->script.find("echo a"), std::string::npos);
}

// Version 4 (tests/data/state/SOURCES.md) encoded JobSpec before requeue and open_mode and
// JobRecord before failed_nodes, and had no job_attempts: its jobs, array and history load
// with the defaults, and attempts can be stored at once.
TEST(SqliteStateStore, MigratesVersion4KeepingJobsAndHistory) {
    const std::string path = temp_db();
    std::filesystem::copy_file(COHORT_TEST_DATA_DIR "/state/v4-cohort.db", path);
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store) << store.status().message();
    auto loaded = (*store)->load_active();
    ASSERT_TRUE(loaded) << loaded.status().message();
    std::vector<std::string> ids;
    for (const auto& job : loaded->jobs) {
        ids.push_back(job.display_id());
        EXPECT_TRUE(job.held);
        EXPECT_EQ(job.spec.requeue, -1);
        EXPECT_EQ(job.spec.open_mode, "");
        EXPECT_TRUE(job.failed_nodes.empty());
        EXPECT_EQ(job.requeue_action, protocol::RequeueAction::kNone);
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"1", "2_[0-3]"}));
    EXPECT_EQ(loaded->next_job_id, 7u);
    JobFilter with_attempts;
    with_attempts.job_ids = {6};
    with_attempts.attempts = true;
    auto finished = (*store)->query_jobs(with_attempts);
    ASSERT_TRUE(finished) << finished.status().message();
    ASSERT_EQ(finished->size(), 1u);
    EXPECT_EQ(finished->front().state, JobState::kCompleted);
    protocol::JobRecord attempt = finished->front();
    attempt.state = JobState::kNodeFail;
    ASSERT_TRUE((*store)->begin());
    ASSERT_TRUE((*store)->put_attempt(attempt));
    ASSERT_TRUE((*store)->commit());
}

// A requeued job's earlier attempts are listed before it, oldest first, only when asked
// for (sacct -D), and go with it when it is purged.
TEST(SqliteStateStore, AttemptsComeBeforeTheirJobAndArePurgedWithIt) {
    const std::string path = temp_db();
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store) << store.status().message();
    protocol::JobRecord final_attempt = job_record(7, JobState::kCompleted);
    final_attempt.restart_count = 2;
    final_attempt.end_time = 900;
    ASSERT_TRUE((*store)->begin());
    ASSERT_TRUE((*store)->put_job(final_attempt));
    for (uint32_t n : {1u, 0u}) {
        protocol::JobRecord earlier = final_attempt;
        earlier.restart_count = n;
        earlier.state = n == 0 ? JobState::kNodeFail : JobState::kRequeued;
        earlier.end_time = 500 + n;
        ASSERT_TRUE((*store)->put_attempt(earlier));
    }
    ASSERT_TRUE((*store)->commit());
    JobFilter filter;
    auto plain = (*store)->query_jobs(filter);
    ASSERT_TRUE(plain);
    ASSERT_EQ(plain->size(), 1u);
    filter.attempts = true;
    auto all = (*store)->query_jobs(filter);
    ASSERT_TRUE(all);
    std::vector<std::pair<uint32_t, JobState>> seen;
    for (const auto& record : *all) {
        seen.emplace_back(record.restart_count, record.state);
    }
    EXPECT_EQ(seen, (std::vector<std::pair<uint32_t, JobState>>{{0, JobState::kNodeFail},
                                                                {1, JobState::kRequeued},
                                                                {2, JobState::kCompleted}}));
    filter.states = {JobState::kNodeFail};
    auto failed = (*store)->query_jobs(filter);
    ASSERT_TRUE(failed);
    ASSERT_EQ(failed->size(), 1u);
    EXPECT_EQ(failed->front().restart_count, 0u);

    ASSERT_TRUE((*store)->begin());
    auto purged = (*store)->purge_finished(1000, 10);
    ASSERT_TRUE(purged);
    ASSERT_TRUE((*store)->commit());
    auto left = (*store)->query_jobs({{}, "", 0, {}, 0, true});
    ASSERT_TRUE(left);
    EXPECT_TRUE(left->empty());
}

TEST(SqliteStateStore, NodeStatesComeBackReplacedNotAdded) {
    const std::string path = temp_db();
    {
        auto store = SqliteStateStore::open(path, "full");
        ASSERT_TRUE(store) << store.status().message();
        ASSERT_TRUE((*store)->begin());
        ASSERT_TRUE((*store)->put_node_admin({"node1", true, false, "disk check", "ops", 1700}));
        ASSERT_TRUE((*store)->put_node_admin({"node2", false, true, "bad DIMM", "ops", 1800}));
        ASSERT_TRUE((*store)->put_node_admin({"node1", false, false, "", "", 0}));  // resumed
        ASSERT_TRUE((*store)->commit());
    }
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store);
    auto loaded = (*store)->load_active();
    ASSERT_TRUE(loaded) << loaded.status().message();
    ASSERT_EQ(loaded->node_admin.size(), 2u);
    EXPECT_EQ(loaded->node_admin[0].name, "node1");
    EXPECT_FALSE(loaded->node_admin[0].drain);
    const protocol::NodeAdminRecord& down = loaded->node_admin[1];
    EXPECT_EQ(down.name, "node2");
    EXPECT_TRUE(down.held_down);
    EXPECT_EQ(down.reason, "bad DIMM");
    EXPECT_EQ(down.reason_user, "ops");
    EXPECT_EQ(down.reason_time, 1800);
}

// An array's remainder shares its id with its first task, so it is kept apart from jobs:
// both load, an ended remainder is listed after its first task, an emptied one is deleted.
TEST(SqliteStateStore, ArrayRemaindersLiveBesideTheirTasks) {
    const std::string path = temp_db();
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store) << store.status().message();
    protocol::JobRecord task = job_record(10, JobState::kPending);
    task.array_job_id = 10;
    protocol::JobRecord remainder = task;
    remainder.array_pending = "1-99999";
    protocol::JobRecord other = remainder;
    other.job_id = other.array_job_id = 200000;
    ASSERT_TRUE((*store)->begin());
    ASSERT_TRUE((*store)->put_job(task));
    ASSERT_TRUE((*store)->put_job(remainder));
    ASSERT_TRUE((*store)->put_job(other));
    ASSERT_TRUE((*store)->commit());
    auto loaded = (*store)->load_active();
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->jobs.size(), 3u);
    EXPECT_EQ(std::count_if(loaded->jobs.begin(), loaded->jobs.end(),
                            [](const auto& j) { return j.is_array_remainder(); }),
              2);

    remainder.state = JobState::kCancelled;
    remainder.end_time = 500;
    ASSERT_TRUE((*store)->begin());
    ASSERT_TRUE((*store)->put_job(remainder));
    ASSERT_TRUE((*store)->delete_array_remainder(200000));
    ASSERT_TRUE((*store)->commit());
    loaded = (*store)->load_active();
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->jobs.size(), 1u);
    EXPECT_FALSE(loaded->jobs[0].is_array_remainder());
    auto listed = (*store)->query_jobs({{10}, "alice", 0, {}});
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 2u);
    EXPECT_EQ((*listed)[0].display_id(), "10_0");
    EXPECT_EQ((*listed)[1].display_id(), "10_[1-99999]");
    EXPECT_EQ((*listed)[1].state, JobState::kCancelled);
}

// purge_jobs_after_days: jobs that ended before the cut go with their steps and payload;
// unfinished and recent ones stay, and so does a payload another job still refers to.
TEST(SqliteStateStore, PurgeDeletesOnlyHistoryOlderThanTheCut) {
    const std::string path = temp_db();
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store) << store.status().message();
    ASSERT_TRUE((*store)->begin());
    for (uint64_t id = 1; id <= 30; ++id) {
        protocol::JobRecord record =
                job_record(id, id <= 20 ? JobState::kCompleted : JobState::kPending);
        record.end_time = id <= 10 ? 1000 : id <= 20 ? 5000 : 0;  // old, recent, unfinished
        ASSERT_TRUE((*store)->put_job(record));
        ASSERT_TRUE((*store)->put_payload({id, {}}));
        protocol::StepRecord step;
        step.job_id = id;
        ASSERT_TRUE((*store)->put_step(step));
    }
    // An array whose first task is old and second still pending keeps its payload.
    protocol::JobRecord first = job_record(40, JobState::kCompleted);
    first.array_job_id = 40;
    first.array_count = 2;
    first.end_time = 1000;
    protocol::JobRecord second = first;
    second.job_id = 41;
    second.state = JobState::kPending;
    second.end_time = 0;
    ASSERT_TRUE((*store)->put_job(first));
    ASSERT_TRUE((*store)->put_job(second));
    ASSERT_TRUE((*store)->put_payload({40, {}}));
    ASSERT_TRUE((*store)->commit());

    ASSERT_TRUE((*store)->begin());
    auto purged = (*store)->purge_finished(2000, 8);  // a batch smaller than the history
    ASSERT_TRUE(purged) << purged.status().message();
    EXPECT_EQ(*purged, 8u);
    purged = (*store)->purge_finished(2000, 8);
    ASSERT_TRUE(purged);
    EXPECT_EQ(*purged, 3u);  // jobs 1-10 and task 40
    ASSERT_TRUE((*store)->commit());

    auto left = (*store)->query_jobs({});
    ASSERT_TRUE(left);
    EXPECT_EQ(left->size(), 21u);
    EXPECT_EQ(left->front().job_id, 11u);
    EXPECT_EQ((*store)->payload(5).status().code(), StatusCode::kNotFound);
    EXPECT_TRUE((*store)->payload(15));
    EXPECT_TRUE((*store)->payload(40));
    auto steps = (*store)->query_steps({5, 15});
    ASSERT_TRUE(steps);
    ASSERT_EQ(steps->size(), 1u);
    EXPECT_EQ(steps->front().job_id, 15u);
}

TEST(SqliteStateStore, RefusesADatabaseOfANewerSchema) {
    const std::string path = temp_db();
    ASSERT_TRUE(SqliteStateStore::open(path, "full"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_FALSE(store);
    EXPECT_NE(store.status().message().find(
                      fmt::format("schema version 99 is newer than this cohortctld's ({})",
                                  SqliteStateStore::kSchemaVersion)),
              std::string::npos)
            << store.status().message();
}

// Version 3 adds the indexes `acct` filters by (end time, and user with end time).
TEST(SqliteStateStore, MigratesVersion2ByIndexingTheHistory) {
    const std::string path = temp_db();
    ASSERT_TRUE(SqliteStateStore::open(path, "full"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(
            sqlite3_exec(db, "DROP INDEX jobs_end; DROP INDEX jobs_user_end; PRAGMA user_version=2",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
    sqlite3_close(db);
    ASSERT_TRUE(SqliteStateStore::open(path, "full"));
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    auto single_int = [db](const char* sql) {
        sqlite3_stmt* stmt = nullptr;
        sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
        const int value = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : -1;
        sqlite3_finalize(stmt);
        return value;
    };
    EXPECT_EQ(single_int("PRAGMA user_version"), SqliteStateStore::kSchemaVersion);
    EXPECT_EQ(single_int("SELECT count(*) FROM sqlite_master WHERE type='index' AND name IN "
                         "('jobs_end','jobs_user_end')"),
              2);
    sqlite3_close(db);
}

// acct's filters: jobs still unfinished or ended since `since`, submitted by `until`.
TEST(SqliteStateStore, HistoryQueriesSelectByEndAndSubmitTime) {
    const std::string path = temp_db();
    auto store = SqliteStateStore::open(path, "full");
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->begin());
    for (uint64_t id = 1; id <= 4; ++id) {
        protocol::JobRecord record =
                job_record(id, id == 4 ? JobState::kRunning : JobState::kCompleted);
        record.submit_time = 1000 * static_cast<int64_t>(id);
        record.end_time = id == 4 ? 0 : record.submit_time + 500;  // 1500, 2500, 3500, running
        ASSERT_TRUE((*store)->put_job(record));
    }
    ASSERT_TRUE((*store)->commit());
    auto ids = [&](const JobFilter& filter) {
        std::vector<uint64_t> out;
        auto found = (*store)->query_jobs(filter);
        for (const auto& record : *found) {
            out.push_back(record.job_id);
        }
        return out;
    };
    EXPECT_EQ(ids({{}, "", 2500, {}, 0}), (std::vector<uint64_t>{2, 3, 4}));
    EXPECT_EQ(ids({{}, "alice", 3000, {}, 0}), (std::vector<uint64_t>{3, 4}));
    EXPECT_EQ(ids({{}, "", 0, {}, 2000}), (std::vector<uint64_t>{1, 2}));
    EXPECT_EQ(ids({{}, "", 0, {JobState::kRunning}, 0}), (std::vector<uint64_t>{4}));
}

}  // namespace
}  // namespace cohort::ctld
