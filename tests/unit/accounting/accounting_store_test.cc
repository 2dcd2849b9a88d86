// The accounting store, run on both backends: SQLite in a temporary file and a real
// PostgreSQL server started for the test program (tests/fixtures/private_postgres.h).
#include "accounting/accounting_store.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "tests/fixtures/private_postgres.h"

namespace cohort::accounting {
namespace {

using protocol::JobRecord;
using protocol::StepRecord;

class AccountingStoreTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        static int databases = 0;
        const std::string name =
                "acct_" + std::to_string(getpid()) + "_" + std::to_string(++databases);
        if (GetParam() == "postgresql") {
            if (!testing::shared_postgres().ready()) {
                GTEST_SKIP() << "no PostgreSQL server: " << testing::shared_postgres().why_not();
            }
            location_ = testing::shared_postgres().create_database(name);
            ASSERT_FALSE(location_.empty()) << "CREATE DATABASE " << name << " failed";
        } else {
            location_ = (std::filesystem::temp_directory_path() / (name + ".db")).string();
            std::filesystem::remove(location_);
        }
        store_ = open();
    }

    void TearDown() override {
        store_.reset();
        if (GetParam() == "sqlite") {
            for (const char* suffix : {"", "-wal", "-shm"}) {
                std::filesystem::remove(location_ + suffix);
            }
        }
    }

    std::unique_ptr<AccountingStore> open(BillingWeights weights = {}) {
        auto store = AccountingStore::open(location_, weights);
        EXPECT_TRUE(store) << store.status().message();
        return store ? std::move(*store) : nullptr;
    }

    std::vector<JobRecord> list(const AcctFilter& filter) {
        auto jobs = store_->jobs(filter);
        EXPECT_TRUE(jobs) << jobs.status().message();
        return jobs ? *jobs : std::vector<JobRecord>{};
    }

    std::string location_;
    std::unique_ptr<AccountingStore> store_;
};

JobRecord finished(uint64_t id, const std::string& user, int64_t start, int64_t end) {
    JobRecord job;
    job.job_id = id;
    job.user_name = user;
    job.uid = 1000;
    job.spec.name = "train-" + std::to_string(id);
    job.spec.account = "physics";
    job.spec.qos = "normal";
    job.spec.cwd = "/home/" + user;
    job.partition = "batch";
    job.state = JobState::kCompleted;
    job.submit_time = start - 10;
    job.start_time = start;
    job.end_time = end;
    job.time_limit_s = 3600;
    job.nodes = {"node1", "node2"};
    job.cpus_per_node = {4, 4};
    job.tasks_per_node = {2, 2};
    job.mem_per_node_mib = 1024;
    return job;
}

TEST_P(AccountingStoreTest, RecordsJobsAndStepsAndListsThemBack) {
    JobRecord job = finished(7, "alice", 1000, 2000);
    job.exit_code = 3;
    job.restart_count = 1;
    job.usage.cpu_user_usec = 1500000;
    job.usage.cpu_system_usec = 250000;
    job.usage.max_rss_kib = 204800;
    job.usage.max_rss_node = "node2";
    job.gpu_alloc = {{{0, 1}, {}, {}, "nvidia"}, {{2}, {}, {}, "nvidia"}};
    job.spec.gres = "nvme:20,fpga";
    StepRecord step;
    step.job_id = 7;
    step.step_id = 0;
    step.name = "python";
    step.nodes = {"node1", "node2"};
    step.cpus_per_node = {4, 4};
    step.ntasks = 4;
    step.start_time = 1001;
    step.end_time = 1999;
    step.state = JobState::kOutOfMemory;
    step.usage = {900000, 100000, 102400, "node1", 1};
    ASSERT_TRUE(store_->record({{job}, {}, {}, {}, {step}, {}}));

    const auto jobs = list({});
    ASSERT_EQ(jobs.size(), 1u);
    const JobRecord& back = jobs[0];
    EXPECT_EQ(back.job_id, 7u);
    EXPECT_EQ(back.spec.name, "train-7");
    EXPECT_EQ(back.user_name, "alice");
    EXPECT_EQ(back.spec.account, "physics");
    EXPECT_EQ(back.partition, "batch");
    EXPECT_EQ(back.state, JobState::kCompleted);
    EXPECT_EQ(back.exit_code, 3);
    EXPECT_EQ(back.start_time, 1000);
    EXPECT_EQ(back.end_time, 2000);
    EXPECT_EQ(back.nodes, (std::vector<std::string>{"node1", "node2"}));
    EXPECT_EQ(back.cpus_per_node, (std::vector<uint32_t>{4, 4}));
    EXPECT_EQ(back.restart_count, 1u);
    EXPECT_EQ(back.spec.gres, "nvme:20,fpga");
    EXPECT_EQ(back.usage.cpu_user_usec, 1500000u);
    EXPECT_EQ(back.usage.cpu_system_usec, 250000u);
    EXPECT_EQ(back.usage.max_rss_kib, 204800u);
    EXPECT_EQ(back.usage.max_rss_node, "node2");
    EXPECT_EQ(back.spec.cwd, "/home/alice");
    ASSERT_EQ(back.gpu_alloc.size(), 2u);
    EXPECT_EQ(back.gpu_alloc[0].gpus, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(back.gpu_alloc[1].gpus, (std::vector<int32_t>{2}));

    auto steps = store_->steps({7});
    ASSERT_TRUE(steps) << steps.status().message();
    ASSERT_EQ(steps->size(), 1u);
    EXPECT_EQ((*steps)[0].name, "python");
    EXPECT_EQ((*steps)[0].ntasks, 4u);
    EXPECT_EQ((*steps)[0].nodes, step.nodes);
    EXPECT_EQ((*steps)[0].end_time, 1999);
    EXPECT_EQ((*steps)[0].state, JobState::kOutOfMemory);
    EXPECT_EQ((*steps)[0].usage.cpu_user_usec, 900000u);
    EXPECT_EQ((*steps)[0].usage.cpu_system_usec, 100000u);
    EXPECT_EQ((*steps)[0].usage.max_rss_kib, 102400u);
    EXPECT_EQ((*steps)[0].usage.max_rss_node, "node1");
    EXPECT_EQ((*steps)[0].usage.oom_kills, 1u);
}

TEST_P(AccountingStoreTest, ALaterRecordOfAJobReplacesTheEarlierOne) {
    JobRecord job = finished(1, "alice", 0, 0);
    job.state = JobState::kPending;
    ASSERT_TRUE(store_->record({{job}, {}, {}, {}, {}, {}}));
    job.state = JobState::kRunning;
    job.start_time = 100;
    ASSERT_TRUE(store_->record({{job}, {}, {}, {}, {}, {}}));
    job.state = JobState::kFailed;
    job.end_time = 200;
    ASSERT_TRUE(store_->record({{job}, {}, {}, {}, {}, {}}));
    const auto jobs = list({});
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, JobState::kFailed);
    EXPECT_EQ(jobs[0].end_time, 200);
}

TEST_P(AccountingStoreTest, FiltersByUserAccountStateWindowAndIds) {
    JobRecord a = finished(1, "alice", 1000, 2000);
    JobRecord b = finished(2, "bob", 1000, 5000);
    b.spec.account = "chemistry";
    b.state = JobState::kFailed;
    JobRecord c = finished(3, "alice", 6000, 0);
    c.state = JobState::kRunning;
    JobRecord task = finished(11, "carol", 100, 200);
    task.array_job_id = 10;
    task.array_task_id = 1;
    ASSERT_TRUE(store_->record({{a, b, c, task}, {}, {}, {}, {}, {}}));

    auto ids = [](const std::vector<JobRecord>& jobs) {
        std::vector<uint64_t> out;
        for (const auto& job : jobs) {
            out.push_back(job.job_id);
        }
        return out;
    };
    AcctFilter users;
    users.users = {"alice"};
    EXPECT_EQ(ids(list(users)), (std::vector<uint64_t>{1, 3}));
    AcctFilter accounts;
    accounts.accounts = {"chemistry"};
    EXPECT_EQ(ids(list(accounts)), (std::vector<uint64_t>{2}));
    AcctFilter states;
    states.states = {JobState::kFailed, JobState::kRunning};
    EXPECT_EQ(ids(list(states)), (std::vector<uint64_t>{2, 3}));
    AcctFilter since;  // unfinished, or ended at or after 3000
    since.since = 3000;
    EXPECT_EQ(ids(list(since)), (std::vector<uint64_t>{2, 3}));
    AcctFilter until;  // submitted by 2000
    until.until = 2000;
    EXPECT_EQ(ids(list(until)), (std::vector<uint64_t>{1, 2, 11}));
    AcctFilter named;  // an array's id names its tasks
    named.job_ids = {2, 10};
    EXPECT_EQ(ids(list(named)), (std::vector<uint64_t>{2, 11}));
}

TEST_P(AccountingStoreTest, ListsEndedAttemptsBeforeTheJobWhenAsked) {
    JobRecord attempt = finished(5, "alice", 100, 200);
    attempt.state = JobState::kNodeFail;
    attempt.restart_count = 0;
    JobRecord job = finished(5, "alice", 300, 400);
    job.restart_count = 1;
    ASSERT_TRUE(store_->record({{job}, {attempt}, {}, {}, {}, {}}));
    ASSERT_EQ(list({}).size(), 1u);
    AcctFilter duplicates;
    duplicates.attempts = true;
    const auto jobs = list(duplicates);
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].state, JobState::kNodeFail);
    EXPECT_EQ(jobs[0].restart_count, 0u);
    EXPECT_EQ(jobs[1].state, JobState::kCompleted);
}

TEST_P(AccountingStoreTest, KeepsAnArrayRemainderAfterItsFirstTaskUntilEmptied) {
    JobRecord remainder = finished(20, "alice", 0, 0);
    remainder.state = JobState::kPending;
    remainder.array_job_id = 20;
    remainder.array_pending = "1-99";
    JobRecord first = finished(20, "alice", 100, 0);
    first.state = JobState::kRunning;
    first.array_job_id = 20;
    ASSERT_TRUE(store_->record({{first}, {}, {remainder}, {}, {}, {}}));
    auto jobs = list({});
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].display_id(), "20_0");
    EXPECT_EQ(jobs[1].display_id(), "20_[1-99]");
    ASSERT_TRUE(store_->record({{}, {}, {}, {20}, {}, {}}));
    jobs = list({});
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].display_id(), "20_0");
}

TEST_P(AccountingStoreTest, UsageCountsWhatRanInsideTheWindowIncludingEarlierAttempts) {
    // 8 CPUs from 1000 to 2000; in [1500, 3000) that is 500 s of it.
    JobRecord a = finished(1, "alice", 1000, 2000);
    // An earlier attempt of bob's job: 8 CPUs, 1600 to 1700 (100 s), then 2500 on, running.
    JobRecord attempt = finished(2, "bob", 1600, 1700);
    attempt.state = JobState::kNodeFail;
    JobRecord b = finished(2, "bob", 2500, 0);
    b.state = JobState::kRunning;
    b.restart_count = 1;
    b.gpu_alloc = {{{0, 1}, {}, {}, "nvidia"}, {{0}, {}, {}, "nvidia"}};  // 3 GPUs
    // Outside the window altogether.
    JobRecord c = finished(3, "alice", 100, 900);
    ASSERT_TRUE(store_->record({{a, b, c}, {attempt}, {}, {}, {}, {}}));

    auto totals = store_->usage(1500, 3000);
    ASSERT_TRUE(totals) << totals.status().message();
    ASSERT_EQ(totals->size(), 2u);
    const protocol::UsageTotalEntry& alice = (*totals)[0];
    EXPECT_EQ(alice.user, "alice");
    EXPECT_DOUBLE_EQ(alice.cpu_seconds, 8 * 500);
    EXPECT_EQ(alice.jobs, 1);
    const protocol::UsageTotalEntry& bob = (*totals)[1];
    EXPECT_EQ(bob.user, "bob");
    EXPECT_DOUBLE_EQ(bob.cpu_seconds, 8 * 100 + 8 * 500);
    EXPECT_DOUBLE_EQ(bob.gpu_seconds, 3 * 500);
    EXPECT_DOUBLE_EQ(bob.billing_seconds, bob.cpu_seconds);  // default: billing = CPUs
    EXPECT_EQ(bob.jobs, 2);
}

TEST_P(AccountingStoreTest, NodeTimeCountsDownAndMaintenanceInsideTheWindow) {
    // node1 (4 CPUs) down 1000-1600; node2 (8 CPUs, 2 GPUs) in maintenance from 1500, still.
    NodeEvent down{"node1", 1000, 0, "DOWN", "Not responding", 4, 0};
    NodeEvent maintenance{"node2", 1500, 0, "MAINT", "maintenance reservation m", 8, 2};
    ASSERT_TRUE(store_->record({{}, {}, {}, {}, {}, {down, maintenance}}));
    auto open = store_->open_node_events();
    ASSERT_TRUE(open) << open.status().message();
    ASSERT_EQ(open->size(), 2u);
    EXPECT_EQ((*open)[0].node, "node1");
    EXPECT_EQ((*open)[1].reason, "maintenance reservation m");
    down.end = 1600;  // it ends: the same event, replaced
    ASSERT_TRUE(store_->record({{}, {}, {}, {}, {}, {down}}));
    ASSERT_EQ(store_->open_node_events()->size(), 1u);

    // Window [1200, 1800): node1 400 s of 4 CPUs; node2 300 s of 8 CPUs and 2 GPUs.
    auto lost = store_->node_time(1200, 1800);
    ASSERT_TRUE(lost) << lost.status().message();
    EXPECT_DOUBLE_EQ(lost->down_cpu_seconds, 1600);
    EXPECT_DOUBLE_EQ(lost->down_gpu_seconds, 0);
    EXPECT_DOUBLE_EQ(lost->planned_down_cpu_seconds, 2400);
    EXPECT_DOUBLE_EQ(lost->planned_down_gpu_seconds, 600);
    // Before any event, nothing is lost; a purge keeps what has not ended.
    EXPECT_DOUBLE_EQ(store_->node_time(0, 1000)->down_cpu_seconds, 0);
    ASSERT_TRUE(store_->purge(5000, 100));
    EXPECT_DOUBLE_EQ(store_->node_time(0, 5000)->down_cpu_seconds, 0);
    EXPECT_DOUBLE_EQ(store_->node_time(0, 5000)->planned_down_cpu_seconds, 8 * 3500);
}

TEST_P(AccountingStoreTest, BillingFollowsTheConfiguredWeights) {
    store_.reset();
    auto weights = parse_billing_weights("CPU=0.5,Mem=1G,GRES/gpu=10");
    ASSERT_TRUE(weights) << weights.status().message();
    store_ = open(*weights);
    JobRecord job = finished(1, "alice", 1000, 1100);  // 8 CPUs, 2 GiB, 1 GPU
    job.gpu_alloc = {{{0}, {}, {}, "nvidia"}, {}};
    ASSERT_TRUE(store_->record({{job}, {}, {}, {}, {}, {}}));
    auto totals = store_->usage(1000, 1100);
    ASSERT_TRUE(totals) << totals.status().message();
    ASSERT_EQ(totals->size(), 1u);
    EXPECT_DOUBLE_EQ((*totals)[0].billing_seconds, (8 * 0.5 + 2 * 1.0 + 10) * 100);
}

// Waits are split per clock hour, as sreport's hourly rollup splits them: a wait during a
// full hour is OverCommitted even though a later hour of the window stood idle.
TEST_P(AccountingStoreTest, EligibleWaitsArePlannedOnlyInHoursThatLeftTimeIdle) {
    constexpr int64_t kHour = 3600;
    constexpr int64_t kStart = 500000 * kHour;                      // on the hour
    JobRecord full = finished(1, "alice", kStart, kStart + kHour);  // all 8 CPUs, first hour
    JobRecord queued = finished(2, "bob", kStart + kHour, kStart + kHour + 400);
    queued.eligible_time = kStart;  // waited the whole first hour, for its 8 CPUs
    JobRecord pending = finished(3, "bob", 0, 0);
    pending.state = JobState::kPending;
    pending.nodes.clear();
    pending.cpus_per_node.clear();
    pending.spec.ntasks = 2;
    pending.submit_time = kStart + 5000;
    pending.eligible_time = kStart + 5000;  // waits for 2 CPUs to the window's end
    ASSERT_TRUE(store_->record({{full, queued, pending}, {}, {}, {}, {}, {}}));

    auto split = store_->eligible_wait(kStart, kStart + 2 * kHour, 8, 0);
    ASSERT_TRUE(split) << split.status().message();
    EXPECT_DOUBLE_EQ(split->overcommitted_cpu_seconds, 8.0 * kHour);
    EXPECT_DOUBLE_EQ(split->planned_cpu_seconds, 2.0 * (2 * kHour - 5000));
    EXPECT_DOUBLE_EQ(split->planned_gpu_seconds, 0);

    // On a 4-CPU cluster the second hour leaves 4 x 3600 - 8 x 400 idle: still room.
    split = store_->eligible_wait(kStart + 1800, kStart + 2 * kHour, 4, 0);
    ASSERT_TRUE(split) << split.status().message();
    EXPECT_DOUBLE_EQ(split->overcommitted_cpu_seconds, 8.0 * 1800);
    EXPECT_DOUBLE_EQ(split->planned_cpu_seconds, 2.0 * (2 * kHour - 5000));
}

TEST_P(AccountingStoreTest, DecayedUsageWeighsEachSecondByItsAge) {
    constexpr int64_t kHalfLife = 3600;
    constexpr int64_t kNow = 100000;
    // Alice: 8 CPUs over the hour that ended one half-life ago, and an earlier attempt
    // (8 CPUs, one second long) 10 half-lives ago. Bob: 8 CPUs for the last 100 s, running.
    JobRecord a = finished(1, "alice", kNow - 2 * kHalfLife, kNow - kHalfLife);
    JobRecord attempt = finished(1, "alice", kNow - 10 * kHalfLife, kNow - 10 * kHalfLife + 1);
    attempt.state = JobState::kNodeFail;
    JobRecord b = finished(2, "bob", kNow - 100, 0);
    b.state = JobState::kRunning;
    JobRecord pending = finished(3, "carol", 0, 0);
    pending.state = JobState::kPending;
    // Started after `now`: nothing yet.
    JobRecord later = finished(4, "dave", kNow + 10, 0);
    later.state = JobState::kRunning;
    ASSERT_TRUE(store_->record({{a, b, pending, later}, {attempt}, {}, {}, {}, {}}));

    auto usage = store_->decayed_usage(kNow, kHalfLife);
    ASSERT_TRUE(usage) << usage.status().message();
    ASSERT_EQ(usage->size(), 2u);
    // Over [s, e]: billing * half_life / ln 2 * (2^-((now-e)/h) - 2^-((now-s)/h)).
    const double per_unit = kHalfLife / std::log(2.0);
    EXPECT_EQ((*usage)[0].user, "alice");
    EXPECT_EQ((*usage)[0].account, "physics");
    EXPECT_NEAR((*usage)[0].billing_seconds, 8 * per_unit * (0.5 - 0.25) + 8 * std::pow(2.0, -10),
                0.01);
    EXPECT_EQ((*usage)[1].user, "bob");
    EXPECT_NEAR((*usage)[1].billing_seconds, 8 * per_unit * (1 - std::pow(2.0, -100.0 / kHalfLife)),
                0.01);

    // No half-life: plain billing-seconds.
    auto undecayed = store_->decayed_usage(kNow, 0);
    ASSERT_TRUE(undecayed) << undecayed.status().message();
    ASSERT_EQ(undecayed->size(), 2u);
    EXPECT_DOUBLE_EQ((*undecayed)[0].billing_seconds, 8 * 3600 + 8 * 1);
    EXPECT_DOUBLE_EQ((*undecayed)[1].billing_seconds, 8 * 100);
}

TEST_P(AccountingStoreTest, RecordsLargeBatchesInOneTransaction) {
    std::vector<JobRecord> jobs;
    std::vector<StepRecord> steps;
    for (uint64_t id = 1; id <= 1000; ++id) {  // 7 x 128 + 64 + 32 + 8 rows per statement
        jobs.push_back(finished(id, id % 2 ? "alice" : "bob", 1000, 2000));
        StepRecord step;
        step.job_id = id;
        step.state = JobState::kCompleted;
        steps.push_back(step);
    }
    ASSERT_TRUE(store_->record({jobs, {}, {}, {}, steps, {}}));
    EXPECT_EQ(list({}).size(), 1000u);
    std::vector<uint64_t> ids;
    for (uint64_t id = 1; id <= 1000; ++id) {
        ids.push_back(id);
    }
    auto stored_steps = store_->steps(ids);
    ASSERT_TRUE(stored_steps);
    EXPECT_EQ(stored_steps->size(), 1000u);
    AcctFilter named;
    named.job_ids = ids;
    EXPECT_EQ(list(named).size(), 1000u);
}

// Listings are read a page of records at a time: across pages the order holds, nothing is
// listed twice or left out, and the caller may query the store while it is handed each job
// (a frame's steps are read so), which PostgreSQL allows only between queries.
TEST_P(AccountingStoreTest, AListingLongerThanAPageKeepsItsOrderAndLetsTheCallerQuery) {
    std::vector<JobRecord> jobs;
    std::vector<JobRecord> attempts;
    std::vector<StepRecord> steps;
    for (uint64_t id = 1; id <= 5000; ++id) {
        jobs.push_back(finished(id, id % 3 ? "alice" : "bob", 1000, 2000 + id));
        if (id % 7 == 0) {  // ended attempts, so some job's records straddle a page's edge
            for (int attempt = 0; attempt < 3; ++attempt) {
                JobRecord ended = finished(id, jobs.back().user_name, 100, 900);
                ended.state = JobState::kNodeFail;
                ended.restart_count = attempt;
                attempts.push_back(ended);
            }
            jobs.back().restart_count = 3;
        }
        StepRecord step;
        step.job_id = id;
        step.state = JobState::kCompleted;
        steps.push_back(step);
    }
    ASSERT_TRUE(store_->record({jobs, attempts, {}, {}, steps, {}}));

    AcctFilter all;
    all.attempts = true;
    std::vector<std::pair<uint64_t, uint32_t>> listed;
    size_t steps_read = 0;
    Status s = store_->each_job(all, [&](JobRecord&& job) {
        listed.emplace_back(job.job_id, job.restart_count);
        auto own_steps = store_->steps({job.job_id});
        ASSERT_TRUE(own_steps) << own_steps.status().message();
        steps_read += own_steps->size();
    });
    ASSERT_TRUE(s) << s.message();
    ASSERT_EQ(listed.size(), jobs.size() + attempts.size());
    EXPECT_EQ(steps_read, listed.size());
    EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
    EXPECT_EQ(std::adjacent_find(listed.begin(), listed.end()), listed.end());

    AcctFilter bob_late;  // by range, with a filter: every third job, from id 2500 on
    bob_late.users = {"bob"};
    bob_late.since = 4500;
    const auto bobs = list(bob_late);
    ASSERT_EQ(bobs.size(), 833u);
    EXPECT_EQ(bobs.front().job_id, 2502u);
    EXPECT_EQ(bobs.back().job_id, 4998u);

    AcctFilter named;  // by ids, far apart and repeated
    named.job_ids = {4998, 3, 4998, 2100};
    named.attempts = true;
    const auto found = list(named);
    ASSERT_EQ(found.size(), 9u);  // 2100 and 4998 have three ended attempts each
    EXPECT_EQ(found[0].job_id, 3u);
    EXPECT_EQ(found[1].job_id, 2100u);
    EXPECT_EQ(found[1].restart_count, 0u);
    EXPECT_EQ(found[4].job_id, 2100u);
    EXPECT_EQ(found[4].restart_count, 3u);
    EXPECT_EQ(found[5].job_id, 4998u);
    EXPECT_EQ(found[8].restart_count, 3u);
}

TEST_P(AccountingStoreTest, PurgeDeletesOldJobsWithTheirStepsAndAttempts) {
    JobRecord old_job = finished(1, "alice", 100, 200);
    JobRecord old_attempt = finished(1, "alice", 50, 90);
    old_attempt.state = JobState::kNodeFail;
    JobRecord recent = finished(2, "alice", 100, 5000);
    JobRecord running = finished(3, "alice", 100, 0);
    running.state = JobState::kRunning;
    StepRecord step;
    step.job_id = 1;
    step.state = JobState::kCompleted;
    ASSERT_TRUE(store_->record({{old_job, recent, running}, {old_attempt}, {}, {}, {step}, {}}));
    auto purged = store_->purge(1000, 100);
    ASSERT_TRUE(purged) << purged.status().message();
    EXPECT_EQ(*purged, 1u);
    AcctFilter all;
    all.attempts = true;
    const auto left = list(all);
    ASSERT_EQ(left.size(), 2u);
    EXPECT_EQ(left[0].job_id, 2u);
    EXPECT_EQ(left[1].job_id, 3u);
    auto steps = store_->steps({1});
    ASSERT_TRUE(steps);
    EXPECT_TRUE(steps->empty());
    auto latest = store_->latest_end_time();
    ASSERT_TRUE(latest);
    EXPECT_EQ(*latest, 5000);
}

TEST_P(AccountingStoreTest, RefusesADatabaseOfANewerSchema) {
    store_.reset();
    {
        auto sql = sql::connect_sql(location_);
        ASSERT_TRUE(sql);
        ASSERT_TRUE((*sql)->execute("UPDATE schema_version SET version = 99"));
    }
    auto refused = AccountingStore::open(location_);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.status().message().find("schema version 99 is newer"), std::string::npos)
            << refused.status().message();
}

TEST_P(AccountingStoreTest, AVersion1DatabaseGainsStepUsageAndKeepsItsSteps) {
    StepRecord step;
    step.job_id = 3;
    step.name = "old";
    step.state = JobState::kCompleted;
    ASSERT_TRUE(store_->record({{finished(3, "alice", 1, 2)}, {}, {}, {}, {step}, {}}));
    store_.reset();
    {
        // Back to version 1: the steps table without the columns versions 2 and 6 added.
        auto sql = sql::connect_sql(location_);
        ASSERT_TRUE(sql);
        for (const char* column : {"cpu_user_usec", "cpu_system_usec", "max_rss_kib",
                                   "max_rss_node", "oom_kills", "gpus", "gres"}) {
            ASSERT_TRUE((*sql)->execute(std::string("ALTER TABLE steps DROP COLUMN ") + column));
        }
        ASSERT_TRUE((*sql)->execute("DROP TABLE node_events"));
        ASSERT_TRUE((*sql)->execute("DROP INDEX jobs_array"));
        ASSERT_TRUE((*sql)->execute("DROP INDEX jobs_het"));
        for (const char* table : {"jobs", "job_attempts", "array_remainders"}) {
            for (const char* column : {"req_gres", "het_job_id", "het_job_offset", "het_size"}) {
                ASSERT_TRUE((*sql)->execute(std::string("ALTER TABLE ") + table + " DROP COLUMN "
                                            + column));
            }
        }
        ASSERT_TRUE((*sql)->execute("UPDATE schema_version SET version = 1"));
    }
    store_ = open();
    ASSERT_TRUE(store_);
    auto steps = store_->steps({3});
    ASSERT_TRUE(steps) << steps.status().message();
    ASSERT_EQ(steps->size(), 1u);
    EXPECT_EQ((*steps)[0].name, "old");
    EXPECT_EQ((*steps)[0].usage.max_rss_kib, 0u);
    step.usage.max_rss_kib = 2048;
    ASSERT_TRUE(store_->record({{}, {}, {}, {}, {step}, {}}));
    steps = store_->steps({3});
    ASSERT_TRUE(steps && steps->size() == 1u);
    EXPECT_EQ((*steps)[0].usage.max_rss_kib, 2048u);
}

TEST_P(AccountingStoreTest, ReopeningKeepsTheRecordsAndTheSchema) {
    ASSERT_TRUE(store_->record({{finished(1, "alice", 1, 2)}, {}, {}, {}, {}, {}}));
    store_.reset();
    store_ = open();
    ASSERT_NE(store_, nullptr);
    EXPECT_EQ(list({}).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends,
                         AccountingStoreTest,
                         ::testing::Values("sqlite", "postgresql"),
                         [](const auto& backend) { return backend.param; });

}  // namespace
}  // namespace cohort::accounting
