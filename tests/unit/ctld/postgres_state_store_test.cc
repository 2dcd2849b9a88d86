// The controller's state in a real PostgreSQL server (tests/fixtures/private_postgres.h):
// records round-trip, and only one store at a time holds the controllers' lock.
#include "scheduler/ctld/state/postgres_state_store.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "tests/fixtures/private_postgres.h"

namespace cohort::ctld {
namespace {

class PostgresStateStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!testing::shared_postgres().ready()) {
            GTEST_SKIP() << "no PostgreSQL server: " << testing::shared_postgres().why_not();
        }
        static int databases = 0;
        uri_ = testing::shared_postgres().create_database("state_" + std::to_string(getpid()) + "_"
                                                          + std::to_string(++databases));
        ASSERT_FALSE(uri_.empty());
    }

    std::unique_ptr<PostgresStateStore> open() const {
        auto store = PostgresStateStore::open(uri_);
        EXPECT_TRUE(store) << store.status().message();
        return store ? std::move(*store) : nullptr;
    }

    std::string uri_;
};

protocol::JobRecord job(uint64_t id, JobState state) {
    protocol::JobRecord record;
    record.job_id = id;
    record.state = state;
    record.user_name = "alice";
    record.spec.name = "job-" + std::to_string(id);
    static const char kHostile[] = "bytes \0\x01\xff and quotes '\"";  // NUL and 0xff too
    record.spec.comment = std::string(kHostile, sizeof(kHostile) - 1);
    record.end_time = state == JobState::kCompleted ? 500 : 0;
    return record;
}

TEST_F(PostgresStateStoreTest, RecordsRoundTripAndARestartLoadsTheUnfinished) {
    {
        auto store = open();
        ASSERT_TRUE(store->begin());
        ASSERT_TRUE(store->put_job(job(1, JobState::kCompleted)));
        ASSERT_TRUE(store->put_job(job(2, JobState::kRunning)));
        ASSERT_TRUE(store->put_job(job(3, JobState::kPending)));
        ASSERT_TRUE(store->put_next_job_id(10));
        JobPayload payload;
        payload.script = "#!/bin/sh\necho hi\n";
        payload.env = {{"A", "1"}, {"B", "2"}};
        ASSERT_TRUE(store->put_payload({3, payload}));
        protocol::StepRecord step;
        step.job_id = 2;
        step.step_id = 0;
        step.name = "train";
        ASSERT_TRUE(store->put_step(step));
        protocol::ReservationRecord reservation;
        reservation.name = "maint";
        ASSERT_TRUE(store->put_reservation(reservation));
        ASSERT_TRUE(store->commit());
    }
    auto store = open();
    auto loaded = store->load_active();
    ASSERT_TRUE(loaded) << loaded.status().message();
    ASSERT_EQ(loaded->jobs.size(), 2u);
    EXPECT_EQ(loaded->next_job_id, 10u);
    ASSERT_EQ(loaded->reservations.size(), 1u);
    auto finished = store->query_jobs({{1}, "", 0, {}});
    ASSERT_TRUE(finished);
    ASSERT_EQ(finished->size(), 1u);
    EXPECT_EQ((*finished)[0].spec.comment, job(1, JobState::kCompleted).spec.comment);
    auto payload = store->payload(3);
    ASSERT_TRUE(payload) << payload.status().message();
    EXPECT_EQ(payload->script, "#!/bin/sh\necho hi\n");
    EXPECT_EQ(payload->env.size(), 2u);
    EXPECT_EQ(payload->env[1].second, "2");
    auto steps = store->query_steps({2});
    ASSERT_TRUE(steps);
    ASSERT_EQ(steps->size(), 1u);
    EXPECT_EQ((*steps)[0].name, "train");
    ASSERT_TRUE(store->begin());
    auto purged = store->purge_finished(1000, 100);
    ASSERT_TRUE(purged) << purged.status().message();
    EXPECT_EQ(*purged, 1u);
    ASSERT_TRUE(store->commit());
}

TEST_F(PostgresStateStoreTest, ASecondControllerWaitsForTheLockUntilTheFirstIsGone) {
    auto first = open();
    bool first_waited = false;
    ASSERT_TRUE(first->wait_until_active([&] { first_waited = true; }));
    EXPECT_FALSE(first_waited);
    std::atomic<bool> second_waited = false;
    std::atomic<bool> second_active = false;
    auto second_done = std::async(std::launch::async, [&] {
        auto second = open();
        Status active = second->wait_until_active([&] { second_waited = true; });
        second_active = active.is_ok();
        return active;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_TRUE(second_waited);
    EXPECT_FALSE(second_active) << "two controllers active at once";
    first.reset();  // the session ends, and its lock with it
    ASSERT_EQ(second_done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(second_done.get());
    EXPECT_TRUE(second_active);
}

}  // namespace
}  // namespace cohort::ctld
