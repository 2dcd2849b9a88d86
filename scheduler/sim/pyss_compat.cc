// The pyss-compatible event loop on a virtual clock.
#include "scheduler/sim/pyss_compat.h"

#include <algorithm>
#include <chrono>
#include <list>
#include <queue>

namespace cohort::sim {

FilteredTrace pyss_filter(const SwfTrace& trace, int64_t max_procs) {
    FilteredTrace out;
    for (const SwfJob& job : trace.jobs) {
        int64_t size = job.requested_procs > 0 ? job.requested_procs : job.allocated_procs;
        if (size <= 0) {
            out.skipped["no processor count"]++;
        } else if (job.requested_procs > max_procs || job.allocated_procs > max_procs) {
            out.skipped["more processors than MaxProcs"]++;
        } else if (job.run <= 0) {
            out.skipped["run time <= 0"]++;
        } else if (job.requested_time <= 0) {
            out.skipped["requested time <= 0"]++;
        } else if (job.submit < 0) {
            out.skipped["submit time < 0"]++;
        } else {
            out.jobs.push_back({job.id, job.submit, std::min(job.run, job.requested_time), size,
                                job.requested_time, job.user});
        }
    }
    std::stable_sort(out.jobs.begin(), out.jobs.end(),
                     [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; });
    return out;
}

namespace {

struct Termination {
    int64_t time;
    uint64_t sequence;  // equal times: in the order the jobs started
    size_t job;

    bool operator>(const Termination& other) const {
        return time != other.time ? time > other.time : sequence > other.sequence;
    }
};

class PyssRun {
public:
    PyssRun(const std::vector<SimJob>& jobs,
            int64_t procs,
            sched::BackfillOptions backfill,
            QueueOrder order)
        : jobs_(jobs),
          backfill_(backfill),
          order_(order),
          profile_(procs, jobs.empty() ? 0 : jobs.front().submit) {
        result_.jobs.resize(jobs.size());
    }

    SimResult run() {
        size_t next_submit = 0;
        while (next_submit < jobs_.size() || !terminations_.empty()) {
            const bool submit_first = next_submit < jobs_.size()
                                      && (terminations_.empty()
                                          || jobs_[next_submit].submit <= terminations_.top().time);
            if (submit_first) {
                submit(next_submit++);
            } else {
                Termination done = terminations_.top();
                terminations_.pop();
                terminate(done);
            }
        }
        return std::move(result_);
    }

private:
    void submit(size_t index) {
        const SimJob& job = jobs_[index];
        profile_.advance_origin(job.submit);
        if (order_ == QueueOrder::kSjf) {
            // Stable: after every job with an equal or shorter estimate (submit order).
            auto at = std::upper_bound(
                    waiting_.begin(), waiting_.end(), index,
                    [this](size_t a, size_t b) { return jobs_[a].estimate < jobs_[b].estimate; });
            waiting_.insert(at, index);
        } else {
            waiting_.push_back(index);
        }
        if (profile_.free_at(job.submit) >= job.procs) {
            schedule(job.submit);
        }
    }

    void terminate(const Termination& done) {
        const JobOutcome& outcome = result_.jobs[done.job];
        profile_.advance_origin(done.time);
        // The estimate was reserved; what it did not use is free again.
        profile_.release(outcome.start, jobs_[done.job].estimate, jobs_[done.job].procs);
        schedule(done.time);
    }

    void schedule(int64_t now) {
        auto begin = std::chrono::steady_clock::now();
        std::vector<sched::QueuedJob> queue;
        queue.reserve(waiting_.size());
        for (size_t index : waiting_) {
            queue.push_back(
                    {static_cast<uint64_t>(index), jobs_[index].procs, jobs_[index].estimate});
        }
        std::vector<size_t> started =
                sched::backfill_pass(profile_, queue, now, backfill_).start_now;
        std::vector<bool> is_started(queue.size(), false);
        for (size_t position : started) {
            is_started[position] = true;
            size_t index = static_cast<size_t>(queue[position].id);
            const SimJob& job = jobs_[index];
            result_.jobs[index] = {job.id, job.submit, now, job.run, job.procs};
            terminations_.push({now + job.run, sequence_++, index});
        }
        if (!started.empty()) {
            std::vector<size_t> still;
            still.reserve(waiting_.size() - started.size());
            for (size_t i = 0; i < queue.size(); ++i) {
                if (!is_started[i]) {
                    still.push_back(waiting_[i]);
                }
            }
            waiting_.swap(still);
        }
        result_.pass_ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
                        .count());
    }

    const std::vector<SimJob>& jobs_;
    sched::BackfillOptions backfill_;
    QueueOrder order_;
    sched::AvailabilityProfile profile_;
    std::vector<size_t> waiting_;  // FCFS: submit order
    std::priority_queue<Termination, std::vector<Termination>, std::greater<>> terminations_;
    uint64_t sequence_ = 0;
    SimResult result_;
};

}  // namespace

SimResult simulate_pyss(const std::vector<SimJob>& jobs,
                        int64_t procs,
                        const sched::BackfillOptions& backfill,
                        QueueOrder order) {
    return PyssRun(jobs, procs, backfill, order).run();
}

}  // namespace cohort::sim
