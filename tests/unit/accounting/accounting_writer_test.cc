// The accounting thread: later records of a job replace earlier ones before they are written,
// and a read sees every record queued before it.
#include "accounting/accounting_writer.h"

#include <filesystem>
#include <future>

#include <gtest/gtest.h>

namespace cohort::accounting {
namespace {

class AccountingWriterTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = (std::filesystem::temp_directory_path()
                 / ("acct-writer-" + std::to_string(getpid()) + ".db"))
                        .string();
        std::filesystem::remove(path_);
        auto store = AccountingStore::open(path_);
        ASSERT_TRUE(store) << store.status().message();
        writer_ = std::make_unique<AccountingWriter>(std::move(*store));
    }

    void TearDown() override {
        writer_.reset();
        for (const char* suffix : {"", "-wal", "-shm"}) {
            std::filesystem::remove(path_ + suffix);
        }
    }

    std::vector<protocol::JobRecord> listed() {
        std::promise<std::vector<protocol::JobRecord>> done;
        writer_->read([&done](AccountingStore& store) {
            auto jobs = store.jobs({});
            done.set_value(jobs ? *jobs : std::vector<protocol::JobRecord>{});
        });
        return done.get_future().get();
    }

    std::string path_;
    std::unique_ptr<AccountingWriter> writer_;
};

protocol::JobRecord job(uint64_t id, JobState state) {
    protocol::JobRecord record;
    record.job_id = id;
    record.state = state;
    record.user_name = "alice";
    return record;
}

TEST_F(AccountingWriterTest, AReadSeesEveryRecordQueuedBeforeIt) {
    for (uint64_t id = 1; id <= 500; ++id) {
        writer_->record({{job(id, JobState::kPending)}, {}, {}, {}, {}, {}});
    }
    EXPECT_EQ(listed().size(), 500u);
}

TEST_F(AccountingWriterTest, TheLastRecordOfAJobWins) {
    writer_->record({{job(1, JobState::kPending)}, {}, {}, {}, {}, {}});
    writer_->record({{job(1, JobState::kRunning)}, {}, {}, {}, {}, {}});
    writer_->record({{job(1, JobState::kCompleted)}, {}, {}, {}, {}, {}});
    const auto jobs = listed();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, JobState::kCompleted);
    EXPECT_GE(writer_->written(), 1u);
}

TEST_F(AccountingWriterTest, StopWritesWhatIsQueued) {
    writer_->record({{job(1, JobState::kCompleted)}, {}, {}, {}, {}, {}});
    writer_->stop();
    writer_.reset();
    auto store = AccountingStore::open(path_);
    ASSERT_TRUE(store);
    auto jobs = (*store)->jobs({});
    ASSERT_TRUE(jobs);
    EXPECT_EQ(jobs->size(), 1u);
}

}  // namespace
}  // namespace cohort::accounting
