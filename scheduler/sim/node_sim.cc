// The node-level event loop on a virtual clock. The simulator may read the wall clock (to
// time the passes); the planner it calls may not.
#include "scheduler/sim/node_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <queue>

#include <fmt/format.h>

#include "scheduler/backfill/node_timelines.h"
#include "scheduler/backfill/plan.h"
#include "scheduler/job_rules.h"
#include "scheduler/priority/multifactor.h"

namespace cohort::sim {
namespace {

constexpr double kTau = 10.0;  // bounded slowdown's threshold, seconds
// Cohort's order: the job's bounded slowdown if it started now, plus one per kAgingS waited,
// so that long jobs, whose slowdown grows slowly, still rise to the front within about a day.
constexpr double kAgingS = 14400.0;
// How often the node timelines forget their past, in simulated seconds.
constexpr int64_t kForgetEveryS = 86400;

struct Completion {
    int64_t time;
    size_t job;

    bool operator>(const Completion& other) const {
        return time != other.time ? time > other.time : job > other.job;
    }
};

std::vector<sched::NodeCapacity> nodes_of(const NodeMachine& machine) {
    std::vector<sched::NodeCapacity> nodes;
    nodes.reserve(static_cast<size_t>(machine.nodes));
    for (int64_t i = 0; i < machine.nodes; ++i) {
        sched::NodeCapacity node;
        node.name = "n" + std::to_string(i);
        node.cpus = static_cast<int32_t>(machine.cpus_per_node);
        node.up = true;
        nodes.push_back(std::move(node));
    }
    return nodes;
}

// Every event time runs a pass over the same nodes: the snapshot keeps them between passes,
// and the node timelines take each job when it starts and give it back when it ends.
class NodeRun {
public:
    NodeRun(const std::vector<SimJob>& jobs, const NodeSimOptions& options)
        : jobs_(jobs),
          options_(options),
          timelines_(nodes_of(options.machine), jobs.empty() ? 0 : jobs.front().submit) {
        const NodeMachine& m = options_.machine;
        snapshot_.nodes = nodes_of(m);
        std::vector<int> all;
        for (int64_t i = 0; i < m.nodes; ++i) {
            all.push_back(static_cast<int>(i));
        }
        snapshot_.partitions.push_back(std::move(all));
        forgotten_before_ = jobs.empty() ? 0 : jobs.front().submit;
        free_.assign(static_cast<size_t>(m.nodes), static_cast<int32_t>(m.cpus_per_node));
        free_total_ = m.procs();
        estimate_.assign(jobs.size(), 0);
        held_until_.assign(jobs.size(), 0);
        overran_.assign(jobs.size(), false);
        result_.jobs.resize(jobs.size());
        for (size_t i = 0; i < jobs.size(); ++i) {
            result_.jobs[i] = {jobs[i].id, jobs[i].submit, -1, jobs[i].run, jobs[i].procs, {}, {}};
        }
    }

    NodeSimResult run() {
        size_t next = 0;
        while (next < jobs_.size() || !completions_.empty()) {
            int64_t now = INT64_MAX;
            if (next < jobs_.size()) {
                now = jobs_[next].submit;
            }
            if (!completions_.empty()) {
                now = std::min(now, completions_.top().time);
            }
            while (!completions_.empty() && completions_.top().time == now) {
                complete(completions_.top().job);
                completions_.pop();
            }
            while (next < jobs_.size() && jobs_[next].submit == now) {
                submit(next++);
            }
            schedule(now);
        }
        return std::move(result_);
    }

private:
    void submit(size_t index) {
        const SimJob& job = jobs_[index];
        int64_t estimate = job.estimate;
        if (options_.estimates == Estimates::kActual) {
            estimate = job.run;
        } else if (options_.estimates == Estimates::kPredicted) {
            auto it = history_.find(job.user);
            if (it != history_.end() && it->second.size() == 2) {
                estimate = std::min(job.estimate, (it->second[0] + it->second[1] + 1) / 2);
            }
        }
        estimate_[index] = std::max<int64_t>(estimate, 1);
        pending_.push_back(index);
        fresh_.push_back(index);
    }

    void complete(size_t index) {
        const NodeOutcome& outcome = result_.jobs[index];
        for (size_t i = 0; i < outcome.nodes.size(); ++i) {
            free_[static_cast<size_t>(outcome.nodes[i])] += outcome.cpus_per_node[i];
            free_total_ += outcome.cpus_per_node[i];
        }
        timelines_.remove(index);
        held_until_[index] = 0;
        resources_changed_ = true;
        std::vector<int64_t>& last = history_[jobs_[index].user];
        last.push_back(jobs_[index].run);
        if (last.size() > 2) {
            last.erase(last.begin());
        }
    }

    int64_t priority_of(size_t index, int64_t now) const {
        const SimJob& job = jobs_[index];
        const double estimate = static_cast<double>(estimate_[index]);
        const double wait = static_cast<double>(now - job.submit);
        switch (options_.order) {
            case NodeOrder::kFcfs:
                return 0;  // ties go to the earlier submit
            case NodeOrder::kSjf:
                return -estimate_[index];
            case NodeOrder::kF1:
                return -static_cast<int64_t>(
                        std::llround(1000.0
                                     * (std::log10(estimate) * static_cast<double>(job.procs)
                                        + 870.0
                                                  * std::log10(std::max<double>(
                                                          static_cast<double>(job.submit), 1.0)))));
            case NodeOrder::kPriority: {
                sched::PriorityWeights weights;
                weights.fairshare = 0;
                weights.partition = 0;
                weights.qos = 0;
                sched::PriorityInputs inputs;
                inputs.eligible_s = now - job.submit;
                inputs.cpus = job.procs;
                inputs.cluster_cpus = options_.machine.procs();
                return sched::multifactor_priority(inputs, weights).priority;
            }
            case NodeOrder::kCohort:
                return static_cast<int64_t>(std::llround(
                        1000.0 * ((wait + estimate) / std::max(estimate, kTau) + wait / kAgingS)));
        }
        return 0;
    }

    // Running jobs still held past their expected end hold their nodes longer: the planner
    // must never see a running job's nodes as free.
    void extend_overruns(int64_t now) {
        while (!held_ends_.empty() && held_ends_.top().time <= now) {
            const Completion held = held_ends_.top();
            held_ends_.pop();
            if (held_until_[held.job] != held.time) {
                continue;  // ended, or already extended
            }
            const int64_t end = expected_end(held.job, now);
            timelines_.extend(held.job, end);
            resources_changed_ = true;
            held_until_[held.job] = end;
            held_ends_.push({end, held.job});
        }
    }

    // What the planner must assume a running job holds its nodes until: never the past.
    int64_t expected_end(size_t index, int64_t now) {
        const int64_t start = result_.jobs[index].start;
        if (start + estimate_[index] <= now && !overran_[index]) {
            overran_[index] = true;
            ++result_.estimate_overruns;
        }
        // EASY++: a job that outlives its prediction is planned with its requested time.
        return sched::expected_end(start, estimate_[index], now, jobs_[index].estimate);
    }

    void schedule(int64_t now) {
        if (pending_.empty()) {
            return;
        }
        int64_t smallest = INT64_MAX;
        for (size_t index : pending_) {
            smallest = std::min(smallest, jobs_[index].procs);
        }
        if (smallest > free_total_) {
            ++result_.passes_skipped;  // nothing can start, whatever the order
            return;
        }
        const auto begin = std::chrono::steady_clock::now();
        extend_overruns(now);
        if (now - forgotten_before_ >= kForgetEveryS) {
            timelines_.forget_before(now);
            forgotten_before_ = now;
        }
        sched::Snapshot snapshot = std::move(snapshot_);
        snapshot.now = now;
        snapshot.pending.clear();
        const bool over_new_jobs = only_fresh_jobs_matter();
        const std::vector<size_t>& planned = over_new_jobs ? fresh_ : pending_;
        snapshot.pending.reserve(planned.size() + 1);
        if (over_new_jobs) {
            ++result_.passes_over_new_jobs;
            snapshot.pending.push_back(pending_job(*head_, now));
        }
        for (size_t index : planned) {
            snapshot.pending.push_back(pending_job(index, now));
        }
        sched::PlanPass pass(std::move(snapshot), options_.backfill, &timelines_);
        sched::Decisions decisions = pass.step({});
        snapshot_ = std::move(pass).release_snapshot();
        result_.pass_ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
                        .count());
        fresh_.clear();
        resources_changed_ = false;
        head_.reset();
        if (!decisions.reservations.empty()) {
            head_ = static_cast<size_t>(decisions.reservations.front().job_id);
        }
        start_jobs(decisions, now);
    }

    // EASY over a submit-ordered queue, when no job ended and none outlived its estimate
    // since the last pass: every job that waited then waits now (what is free now is the
    // same, the head's reservation is the same, and each window only reaches further into
    // it), and every new job ranks below them. So the pass needs only the head, for its
    // reservation, and the new jobs: it decides for them what a full pass would.
    bool only_fresh_jobs_matter() const {
        return options_.plan_only_what_changed && options_.order == NodeOrder::kFcfs
               && options_.backfill.policy == sched::BackfillPolicy::kEasy && !resources_changed_
               && head_.has_value();
    }

    sched::PendingJob pending_job(size_t index, int64_t now) const {
        sched::PendingJob job;
        job.id = index;
        job.submit_time = jobs_[index].submit;
        job.priority = priority_of(index, now);
        job.time_limit_s = estimate_[index];
        job.request.ntasks = static_cast<uint32_t>(jobs_[index].procs);
        job.request.cpus_per_task = 1;
        return job;
    }

    void start_jobs(sched::Decisions& decisions, int64_t now) {
        if (decisions.starts.empty()) {
            return;
        }
        for (sched::StartJob& start : decisions.starts) {
            const size_t index = static_cast<size_t>(start.job_id);
            NodeOutcome& outcome = result_.jobs[index];
            outcome.start = now;
            outcome.nodes = std::move(start.placement.nodes);
            outcome.cpus_per_node = std::move(start.placement.cpus_per_node);
            for (size_t i = 0; i < outcome.nodes.size(); ++i) {
                free_[static_cast<size_t>(outcome.nodes[i])] -= outcome.cpus_per_node[i];
                free_total_ -= outcome.cpus_per_node[i];
            }
            const int64_t held_until = expected_end(index, now);
            timelines_.add(index, {outcome.nodes, outcome.cpus_per_node, 0, held_until, 0, {}},
                           now);
            held_until_[index] = held_until;
            held_ends_.push({held_until, index});
            completions_.push({now + jobs_[index].run, index});
        }
        std::erase_if(pending_, [&](size_t index) { return result_.jobs[index].start >= 0; });
    }

    const std::vector<SimJob>& jobs_;
    NodeSimOptions options_;
    sched::Snapshot snapshot_;  // the nodes and partition, kept between passes
    sched::NodeTimelines timelines_;
    int64_t forgotten_before_ = 0;
    std::vector<int32_t> free_;  // per node: CPUs not held
    int64_t free_total_ = 0;
    std::vector<int64_t> estimate_;    // per job: what the planner is told at submit
    std::vector<int64_t> held_until_;  // per running job: its hold's end in timelines_; 0 when not
    std::vector<bool> overran_;
    std::vector<size_t> pending_;    // in submit order
    std::vector<size_t> fresh_;      // submitted since the last pass
    bool resources_changed_ = true;  // a job ended or outlived its estimate since the last pass
    std::optional<size_t> head_;     // the job the last pass reserved for
    std::map<int64_t, std::vector<int64_t>> history_;  // user -> last two actual run times
    std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
    // Running jobs by the end of their hold (stale entries are skipped when popped).
    std::priority_queue<Completion, std::vector<Completion>, std::greater<>> held_ends_;
    NodeSimResult result_;
};

}  // namespace

Result<NamedPolicy> policy_by_name(const std::string& name) {
    if (name == "cohort") {
        return NamedPolicy{"cohort",
                           NodeOrder::kCohort,
                           {sched::BackfillPolicy::kEasy, 1, sched::CandidateOrder::kShortestFirst},
                           Estimates::kPredicted};
    }
    if (name == "easy") {
        return NamedPolicy{
                "easy", NodeOrder::kFcfs, {sched::BackfillPolicy::kEasy}, Estimates::kRequested};
    }
    if (name == "easy++") {
        return NamedPolicy{"easy++",
                           NodeOrder::kFcfs,
                           {sched::BackfillPolicy::kEasy, 1, sched::CandidateOrder::kShortestFirst},
                           Estimates::kPredicted};
    }
    return Status::invalid("--policy: invalid value '" + name
                           + "' (accepted: cohort, easy, easy++)");
}

Result<NodeMachine> node_machine(const SwfTrace& trace, int64_t nodes, int64_t procs) {
    if (nodes < 0) {
        return Status::invalid(fmt::format(
                "--nodes: invalid value '{}' (accepted: a positive number of nodes)", nodes));
    }
    if (procs < 0) {
        return Status::invalid(fmt::format(
                "--procs: invalid value '{}' (accepted: a positive number of processors)", procs));
    }
    if (nodes > 0 && procs > 0) {
        return Status::invalid("--nodes and --procs: give one of them, not both");
    }
    const int64_t max_procs = trace.max_procs > 0 ? trace.max_procs : trace.max_nodes;
    const int64_t max_nodes = trace.max_nodes > 0 ? trace.max_nodes : trace.max_procs;
    int64_t per_node = 1;
    if (max_procs > 0 && max_nodes > 0) {
        per_node = std::max<int64_t>(max_procs / max_nodes, 1);
    }
    NodeMachine machine;
    machine.cpus_per_node = per_node;
    if (nodes > 0) {
        machine.nodes = nodes;
    } else if (procs > 0) {
        if (procs % per_node != 0) {
            return Status::invalid(
                    fmt::format("--procs: invalid value '{}' (accepted: a multiple "
                                "of the trace's {} CPUs per node)",
                                procs, per_node));
        }
        machine.nodes = procs / per_node;
    } else if (max_nodes > 0) {
        machine.nodes = max_nodes;
    } else {
        return Status::invalid(
                "--nodes: the trace has no MaxNodes or MaxProcs header; give --nodes or --procs");
    }
    return machine;
}

SimResult NodeSimResult::as_sim_result() const {
    SimResult out;
    out.jobs.reserve(jobs.size());
    for (const NodeOutcome& job : jobs) {
        out.jobs.push_back({job.id, job.submit, job.start, job.run, job.procs});
    }
    out.pass_ms = pass_ms;
    return out;
}

NodeSimResult simulate_nodes(const std::vector<SimJob>& jobs, const NodeSimOptions& options) {
    return NodeRun(jobs, options).run();
}

}  // namespace cohort::sim
