// The RLScheduler heuristic environment on a virtual clock. Event order, tie-breaking and
// the once-computed shadow time follow that simulator, since its figures depend on them.
#include "scheduler/sim/rlscheduler_compat.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cohort::sim {

std::vector<SimJob> rlscheduler_filter(const SwfTrace& trace) {
    std::vector<SimJob> out;
    for (const SwfJob& job : trace.jobs) {
        SimJob rl;
        rl.id = job.id;
        rl.submit = job.submit;
        rl.procs = std::max(job.allocated_procs, job.requested_procs);
        rl.estimate = job.requested_time == -1 ? job.run : job.requested_time;
        rl.run = job.run < 0 ? 10 : job.run;
        if (rl.run > 0) {
            out.push_back(rl);
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const SimJob& a, const SimJob& b) { return a.id < b.id; });
    return out;
}

RlMachine rlscheduler_machine(const SwfTrace& trace) {
    const int64_t procs = trace.max_procs > 0 ? trace.max_procs : trace.max_nodes;
    return {trace.max_nodes, static_cast<double>(procs) / static_cast<double>(trace.max_nodes)};
}

const std::vector<size_t>& rlscheduler_windows() {
    static const std::vector<size_t> kWindows = {1981, 2756, 4299, 8850, 3316,
                                                 2714, 5228, 7762, 4022, 7085};
    return kWindows;
}

namespace {

struct Slot {
    size_t job;
    int64_t start = -1;
    int64_t nodes = 0;
};

class Window {
public:
    Window(const std::vector<SimJob>& jobs,
           const RlMachine& machine,
           size_t first,
           size_t length,
           RlOrder order,
           bool backfill)
        : jobs_(jobs),
          machine_(machine),
          order_(order),
          backfill_(backfill),
          next_arrival_(first + 1),
          end_(first + length),
          length_(length),
          free_nodes_(machine.nodes),
          start_(jobs.size(), -1),
          now_(jobs[first].submit) {
        queue_.push_back(first);
    }

    double run() {
        double bsld_sum = 0;
        for (;;) {
            sort_queue(order_);
            const size_t head = queue_.front();
            if (!fits(head)) {
                wait_for(head);
            }
            start(head);
            bsld_sum += bsld(head);
            for (size_t j : backfilled_) {
                bsld_sum += bsld(j);
            }
            backfilled_.clear();
            if (!next_job()) {
                break;
            }
        }
        return bsld_sum / static_cast<double>(length_);  // every job of the window started
    }

private:
    int64_t nodes_of(size_t job) const {
        return static_cast<int64_t>(
                std::ceil(static_cast<double>(jobs_[job].procs) / machine_.procs_per_node));
    }

    bool fits(size_t job) const { return nodes_of(job) <= free_nodes_; }

    double score(size_t job, RlOrder order) const {
        const SimJob& j = jobs_[job];
        switch (order) {
            case RlOrder::kFcfs:
                return static_cast<double>(j.submit);
            case RlOrder::kSjf:
                return static_cast<double>(j.estimate);  // ties by submit, below
            case RlOrder::kF1:
                return std::log10(j.estimate > 0 ? static_cast<double>(j.estimate) : 0.1)
                               * static_cast<double>(j.procs)
                       + 870 * std::log10(j.submit > 0 ? static_cast<double>(j.submit) : 0.1);
        }
        return 0;
    }

    // A stable sort, as that simulator's, so equal scores keep the queue's current order.
    void sort_queue(RlOrder order) {
        std::stable_sort(queue_.begin(), queue_.end(), [&](size_t a, size_t b) {
            double sa = score(a, order);
            double sb = score(b, order);
            if (sa != sb) {
                return sa < sb;
            }
            return order == RlOrder::kSjf && jobs_[a].submit < jobs_[b].submit;
        });
    }

    void start(size_t job) {
        start_[job] = now_;
        free_nodes_ -= nodes_of(job);
        running_.push_back({job, now_, nodes_of(job)});
        queue_.erase(std::find(queue_.begin(), queue_.end(), job));
    }

    double bsld(size_t job) const {
        const SimJob& j = jobs_[job];
        double response = static_cast<double>(start_[job] - j.submit + j.run);
        return std::max(1.0, response / static_cast<double>(std::max<int64_t>(j.run, 10)));
    }

    // The running job that ends first (by its real run time), after a stable sort.
    Slot& first_to_end() {
        std::stable_sort(running_.begin(), running_.end(), [&](const Slot& a, const Slot& b) {
            return a.start + jobs_[a.job].run < b.start + jobs_[b.job].run;
        });
        return running_.front();
    }

    // One event: the next arrival if it comes no later than the next end, else that end.
    void advance() {
        const Slot& ending = first_to_end();
        const int64_t release = ending.start + jobs_[ending.job].run;
        if (next_arrival_ < end_ && jobs_[next_arrival_].submit <= release) {
            now_ = std::max(now_, jobs_[next_arrival_].submit);
            queue_.push_back(next_arrival_++);
        } else {
            now_ = std::max(now_, release);
            free_nodes_ += ending.nodes;
            running_.erase(running_.begin());
        }
    }

    void wait_for(size_t head) {
        if (!backfill_) {
            while (!fits(head)) {
                advance();
            }
            return;
        }
        // The shadow time: when, by the running jobs' estimates, enough processors free up.
        std::stable_sort(running_.begin(), running_.end(), [&](const Slot& a, const Slot& b) {
            return a.start + jobs_[a.job].estimate < b.start + jobs_[b.job].estimate;
        });
        double free_procs = static_cast<double>(free_nodes_) * machine_.procs_per_node;
        int64_t shadow = now_;
        for (const Slot& slot : running_) {
            free_procs += static_cast<double>(slot.nodes) * machine_.procs_per_node;
            shadow = slot.start + jobs_[slot.job].estimate;
            if (free_procs >= static_cast<double>(jobs_[head].procs)) {
                break;
            }
        }
        while (!fits(head)) {
            sort_queue(RlOrder::kFcfs);
            const std::vector<size_t> candidates = queue_;
            for (size_t job : candidates) {
                if (now_ + jobs_[job].estimate < shadow && fits(job)) {
                    start(job);
                    backfilled_.push_back(job);
                }
            }
            advance();
        }
    }

    // After a start: true if a job is waiting, moving time forward to the next arrival when
    // the queue is empty; false once the window's jobs have all arrived and started.
    bool next_job() {
        if (!queue_.empty()) {
            return true;
        }
        if (next_arrival_ >= end_) {
            return false;
        }
        for (;;) {
            int64_t release = std::numeric_limits<int64_t>::max();
            if (!running_.empty()) {
                const Slot& ending = first_to_end();
                release = ending.start + jobs_[ending.job].run;
            }
            if (jobs_[next_arrival_].submit <= release) {
                now_ = std::max(now_, jobs_[next_arrival_].submit);
                queue_.push_back(next_arrival_++);
                return true;
            }
            now_ = std::max(now_, release);
            free_nodes_ += running_.front().nodes;
            running_.erase(running_.begin());
        }
    }

    const std::vector<SimJob>& jobs_;
    RlMachine machine_;
    RlOrder order_;
    bool backfill_;
    size_t next_arrival_;
    size_t end_;
    size_t length_;
    int64_t free_nodes_;
    std::vector<int64_t> start_;
    int64_t now_;
    std::vector<size_t> queue_;
    std::vector<Slot> running_;
    std::vector<size_t> backfilled_;
};

}  // namespace

double rlscheduler_window_bsld(const std::vector<SimJob>& jobs,
                               const RlMachine& machine,
                               size_t first,
                               size_t length,
                               RlOrder order,
                               bool backfill) {
    return Window(jobs, machine, first, length, order, backfill).run();
}

}  // namespace cohort::sim
