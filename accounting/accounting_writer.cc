#include "accounting/accounting_writer.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

namespace cohort::accounting {
namespace {

// Retries of a refused write back off up to this.
constexpr auto kMaxRetryDelay = std::chrono::seconds(30);
// How long a batch waits for more records before it is written, unless a read or stop comes
// first or it holds kLingerRecords. A burst of submissions then shares one transaction
// instead of paying one each, on the cores its clients and the state writer need; a batch
// that is already large (1,000 array tasks split at once) is written at once, not held.
constexpr auto kBatchLinger = std::chrono::milliseconds(50);
constexpr size_t kLingerRecords = 256;

size_t record_count(const RecordBatch& batch) {
    return batch.jobs.size() + batch.attempts.size() + batch.array_remainders.size()
           + batch.remainders_emptied.size() + batch.steps.size() + batch.node_events.size();
}

}  // namespace

void AccountingWriter::Pending::add(RecordBatch changes) {
    for (auto& job : changes.jobs) {
        jobs[job.job_id] = std::move(job);
    }
    for (auto& attempt : changes.attempts) {
        attempts[{attempt.job_id, attempt.restart_count}] = std::move(attempt);
    }
    for (auto& remainder : changes.array_remainders) {
        remainders_emptied.erase(remainder.job_id);
        remainders[remainder.job_id] = std::move(remainder);
    }
    for (uint64_t array_id : changes.remainders_emptied) {
        remainders.erase(array_id);
        remainders_emptied[array_id] = true;
    }
    for (auto& step : changes.steps) {
        steps[{step.job_id, step.step_id}] = std::move(step);
    }
    for (auto& event : changes.node_events) {
        node_events[{event.node, event.start}] = std::move(event);
    }
}

RecordBatch AccountingWriter::Pending::take() {
    RecordBatch batch;
    for (auto& [id, job] : jobs) {
        batch.jobs.push_back(std::move(job));
    }
    for (auto& [key, attempt] : attempts) {
        batch.attempts.push_back(std::move(attempt));
    }
    for (auto& [id, remainder] : remainders) {
        batch.array_remainders.push_back(std::move(remainder));
    }
    for (const auto& [array_id, emptied] : remainders_emptied) {
        batch.remainders_emptied.push_back(array_id);
    }
    for (auto& [key, step] : steps) {
        batch.steps.push_back(std::move(step));
    }
    for (auto& [key, event] : node_events) {
        batch.node_events.push_back(std::move(event));
    }
    *this = Pending{};
    return batch;
}

bool AccountingWriter::Pending::empty() const {
    return jobs.empty() && attempts.empty() && remainders.empty() && remainders_emptied.empty()
           && steps.empty() && node_events.empty();
}

AccountingWriter::AccountingWriter(std::unique_ptr<AccountingStore> store)
    : store_(std::move(store)), thread_([this] { run(); }) {}

AccountingWriter::~AccountingWriter() {
    stop();
}

void AccountingWriter::record(RecordBatch changes) {
    if (changes.empty()) {
        return;
    }
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        // Later records join the batch the writer lingers on without waking it, until the
        // batch is large.
        const bool first = queue_.empty();
        const bool was_small = queued_records_ < kLingerRecords;
        queued_records_ += record_count(changes);
        wake = first || (was_small && queued_records_ >= kLingerRecords);
        queue_.push_back({std::move(changes), nullptr});
    }
    if (wake) {
        wake_.notify_one();
    }
}

void AccountingWriter::read(Read read) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({{}, std::move(read)});
    }
    wake_.notify_one();
}

uint64_t AccountingWriter::written() const {
    std::lock_guard lock(mutex_);
    return written_;
}

void AccountingWriter::stop() {
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

bool AccountingWriter::flush() {
    if (pending_.empty()) {
        return true;
    }
    RecordBatch batch = pending_.take();
    const size_t count = batch.jobs.size() + batch.attempts.size() + batch.array_remainders.size()
                         + batch.remainders_emptied.size() + batch.steps.size()
                         + batch.node_events.size();
    if (Status s = store_->record(batch); !s) {
        pending_.add(std::move(batch));
        spdlog::error("accounting: {} records not written, will retry: {}", count, s.message());
        return false;
    }
    std::lock_guard lock(mutex_);
    written_ += count;
    return true;
}

void AccountingWriter::run() {
    auto retry_delay = std::chrono::milliseconds(0);
    for (;;) {
        std::deque<Task> tasks;
        {
            std::unique_lock lock(mutex_);
            // After a refused write, wait before the next try unless a read or stop comes.
            auto ready = [this] {
                return stopping_ || !queue_.empty();
            };
            auto read_or_stop = [this] {
                return stopping_ || std::any_of(queue_.begin(), queue_.end(), [](const Task& t) {
                           return bool(t.read);
                       });
            };
            if (retry_delay.count() > 0) {
                wake_.wait_for(lock, retry_delay, read_or_stop);
            } else {
                wake_.wait(lock, ready);
                wake_.wait_for(lock, kBatchLinger,
                               [&] { return read_or_stop() || queued_records_ >= kLingerRecords; });
            }
            if (stopping_ && queue_.empty()) {
                lock.unlock();
                flush();
                return;
            }
            tasks.swap(queue_);
            queued_records_ = 0;
        }
        for (Task& task : tasks) {
            if (!task.read) {
                pending_.add(std::move(task.records));
                continue;
            }
            flush();
            task.read(*store_);
        }
        if (flush()) {
            retry_delay = std::chrono::milliseconds(0);
        } else {
            retry_delay = std::min<std::chrono::milliseconds>(
                    std::max(retry_delay * 2, std::chrono::milliseconds(500)), kMaxRetryDelay);
        }
    }
}

}  // namespace cohort::accounting
