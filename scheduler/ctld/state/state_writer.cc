// Group commit: every write queued while the previous transaction was committing goes into
// the next one, so one fsync serves many submissions.
#include "scheduler/ctld/state/state_writer.h"

#include <spdlog/spdlog.h>

namespace cohort::ctld {

StateWriter::StateWriter(std::unique_ptr<StateStore> store, CommitObserver on_commit)
    : store_(std::move(store)), on_commit_(std::move(on_commit)), thread_([this] { run(); }) {}

StateWriter::~StateWriter() {
    stop();
}

void StateWriter::write(std::vector<StateChange> changes, Done done) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({std::move(changes), std::move(done), nullptr});
    }
    wake_.notify_one();
}

void StateWriter::read(Read read) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({{}, nullptr, std::move(read), true});
    }
    wake_.notify_one();
}

void StateWriter::read_committed(Read read) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({{}, nullptr, std::move(read), false});
    }
    wake_.notify_one();
}

void StateWriter::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            return;
        }
        stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) {
        thread_.join();
    }
}

Status StateWriter::apply(const std::vector<StateChange>& changes) {
    for (const auto& change : changes) {
        Status status = std::visit(
                [this](const auto& value) -> Status {
                    using T = std::decay_t<decltype(value)>;
                    if constexpr (std::is_same_v<T, protocol::JobRecord>) {
                        return store_->put_job(value);
                    } else if constexpr (std::is_same_v<T, StoredPayload>) {
                        return store_->put_payload(value);
                    } else if constexpr (std::is_same_v<T, protocol::StepRecord>) {
                        return store_->put_step(value);
                    } else if constexpr (std::is_same_v<T, NextJobId>) {
                        return store_->put_next_job_id(value.value);
                    } else if constexpr (std::is_same_v<T, protocol::ReservationRecord>) {
                        return store_->put_reservation(value);
                    } else if constexpr (std::is_same_v<T, ReservationDeleted>) {
                        return store_->delete_reservation(value.name);
                    } else if constexpr (std::is_same_v<T, ArrayRemainderEmptied>) {
                        return store_->delete_array_remainder(value.array_id);
                    } else if constexpr (std::is_same_v<T, JobAttempt>) {
                        return store_->put_attempt(value.record);
                    } else {
                        return store_->put_node_admin(value);
                    }
                },
                change);
        if (!status) {
            return status;
        }
    }
    return Status::ok();
}

void StateWriter::run() {
    for (;;) {
        std::deque<Task> batch;
        std::vector<Read> committed_reads;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty() && stopping_) {
                return;
            }
            // Take writes up to the first read, so a read sees every write queued before it.
            while (!queue_.empty()) {
                if (queue_.front().read && !queue_.front().after_queued_writes) {
                    committed_reads.push_back(std::move(queue_.front().read));
                    queue_.pop_front();
                    continue;
                }
                bool is_read = static_cast<bool>(queue_.front().read);
                if (is_read && !batch.empty()) {
                    break;
                }
                batch.push_back(std::move(queue_.front()));
                queue_.pop_front();
                if (is_read) {
                    break;
                }
            }
        }
        for (auto& read : committed_reads) {
            read(*store_);
        }
        if (batch.empty()) {
            continue;
        }
        if (batch.front().read) {
            batch.front().read(*store_);
            continue;
        }
        Status status = store_->begin();
        for (const auto& task : batch) {
            if (status) {
                status = apply(task.changes);
            }
        }
        if (status) {
            status = store_->commit();
        }
        if (!status) {
            spdlog::error("state commit failed: {}", status.message());
            store_->rollback();
        }
        for (const auto& task : batch) {
            if (status && on_commit_) {
                on_commit_(task.changes);
            }
        }
        for (auto& task : batch) {
            if (task.done) {
                task.done(status);
            }
        }
    }
}

}  // namespace cohort::ctld
