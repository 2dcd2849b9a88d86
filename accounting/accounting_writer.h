// The controller's accounting thread: records what the state store committed into the
// AccountingStore in batches, each job's latest record only, and runs accounting queries in
// order with those writes. While the database is unreachable, records wait (one per job) and
// the write is retried; the controller's state store holds them durably meanwhile, and a
// restarted controller records again what the accounting store may lack (replay_since()).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "accounting/accounting_store.h"

namespace cohort::accounting {

class AccountingWriter {
public:
    using Read = std::function<void(AccountingStore&)>;

    explicit AccountingWriter(std::unique_ptr<AccountingStore> store);
    ~AccountingWriter();
    AccountingWriter(const AccountingWriter&) = delete;
    AccountingWriter& operator=(const AccountingWriter&) = delete;

    // Thread-safe. Later records of the same job, attempt or step replace earlier ones.
    void record(RecordBatch changes);
    // Thread-safe. Runs `read` on the writer thread once every record queued before it is
    // written (or has failed to be).
    void read(Read read);
    // Records written so far and write failures, for the log and tests.
    uint64_t written() const;
    // Writes what is queued (one try), then stops the thread.
    void stop();

private:
    // Records waiting to be written, one per key.
    struct Pending {
        std::map<uint64_t, protocol::JobRecord> jobs;
        std::map<std::pair<uint64_t, uint32_t>, protocol::JobRecord> attempts;
        std::map<uint64_t, protocol::JobRecord> remainders;
        std::map<uint64_t, bool> remainders_emptied;
        std::map<std::pair<uint64_t, uint32_t>, protocol::StepRecord> steps;
        std::map<std::pair<std::string, int64_t>, NodeEvent> node_events;

        void add(RecordBatch changes);
        RecordBatch take();
        bool empty() const;
    };

    struct Task {
        RecordBatch records;
        Read read;  // null: a record task
    };

    void run();
    // Writes pending_; false (and keeps them) when the store refused.
    bool flush();

    std::unique_ptr<AccountingStore> store_;
    Pending pending_;  // writer thread only
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Task> queue_;     // GUARDED_BY(mutex_)
    size_t queued_records_ = 0;  // in queue_; GUARDED_BY(mutex_)
    bool stopping_ = false;      // GUARDED_BY(mutex_)
    uint64_t written_ = 0;       // GUARDED_BY(mutex_)
    std::thread thread_;
};

}  // namespace cohort::accounting
