// The controller's one writer: applies state changes to the StateStore in group commits on its
// own thread, then runs each change's completion callback. Acknowledged means durable.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include "scheduler/ctld/state/state_store.h"

namespace cohort::ctld {

struct NextJobId {
    uint64_t value = 0;
};

struct ReservationDeleted {
    std::string name;
};

struct ArrayRemainderEmptied {
    uint64_t array_id = 0;
};

// An ended attempt of a job that runs again (StateStore::put_attempt).
struct JobAttempt {
    protocol::JobRecord record;
};

using StateChange = std::variant<protocol::JobRecord,
                                 StoredPayload,
                                 protocol::StepRecord,
                                 NextJobId,
                                 protocol::ReservationRecord,
                                 ReservationDeleted,
                                 ArrayRemainderEmptied,
                                 JobAttempt,
                                 protocol::NodeAdminRecord>;

class StateWriter {
public:
    using Done = std::function<void(const Status&)>;
    using Read = std::function<void(StateStore&)>;
    // Sees each write's changes on the writer thread once they are committed, before the
    // write's `done` runs (the controller feeds accounting from it).
    using CommitObserver = std::function<void(const std::vector<StateChange>&)>;

    StateWriter(std::unique_ptr<StateStore> store, CommitObserver on_commit);
    ~StateWriter();
    StateWriter(const StateWriter&) = delete;
    StateWriter& operator=(const StateWriter&) = delete;

    // Thread-safe. `done` runs on the writer thread once the changes are committed (or failed).
    void write(std::vector<StateChange> changes, Done done);

    // Thread-safe. Runs `read` on the writer thread after every write queued before it.
    void read(Read read);
    // Thread-safe. Runs `read` on the writer thread on what is committed already, without
    // waiting for queued writes or splitting their group commit: for data written long
    // before, such as a launching job's payload.
    void read_committed(Read read);

    // Thread-safe. Runs `work` alone on the writer thread, between group commits, after every
    // write queued before it: housekeeping that opens transactions of its own.
    void run_alone(Read work) { read(std::move(work)); }

    // Commits what is queued, then stops the thread.
    void stop();

private:
    struct Task {
        std::vector<StateChange> changes;
        Done done;
        Read read;
        bool after_queued_writes = true;  // a read that waits for the writes before it
    };

    void run();
    Status apply(const std::vector<StateChange>& changes);

    std::unique_ptr<StateStore> store_;
    CommitObserver on_commit_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Task> queue_;  // GUARDED_BY(mutex_)
    bool stopping_ = false;   // GUARDED_BY(mutex_)
    std::thread thread_;
};

}  // namespace cohort::ctld
