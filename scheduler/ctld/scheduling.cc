// The scheduling loop around the pure core, and the job life cycle it drives.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "common/licenses.h"
#include "common/mail_type.h"
#include "scheduler/backfill/plan.h"
#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/job_nodes.h"
#include "scheduler/ctld/submit_validation.h"
#include "scheduler/job_rules.h"

namespace cohort::ctld {
namespace {

// Limits of one user under one QoS, as indexes into Snapshot::limits.
using LimitKey = std::pair<std::string, std::string>;  // qos, user

int64_t allocated_gpus(const Job& job) {
    return static_cast<int64_t>(job.resources.gpus_per_node)
           * static_cast<int64_t>(job.nodes.size());
}

int64_t allocated_cpus(const Job& job) {
    int64_t cpus = 0;
    for (uint32_t c : job.cpus_per_node) {
        cpus += c;
    }
    return cpus;
}

// `members` less the nodes named.
std::vector<int> without(std::vector<int> members,
                         const std::vector<std::string>& names,
                         const NodeTable& nodes) {
    for (const std::string& name : names) {
        members.erase(std::remove(members.begin(), members.end(), nodes.index_of(name)),
                      members.end());
    }
    return members;
}

// Jobs that choose their nodes alike share one partition of the snapshot: a pass over many
// jobs with the same -C computes its nodes once, and the planner sees them as one shape.
using NodeChoiceKey = std::tuple<int,
                                 std::string,
                                 std::string,
                                 std::vector<std::string>,
                                 std::vector<std::string>,
                                 uint32_t>;
using ChosenPartitions = std::map<NodeChoiceKey, int>;

// The nodes a job may run on: its partition's as its -w, -x, -C and --prefer choose them
// and, once requeued, less the nodes that failed it (unless that would leave too few:
// avoiding a node never keeps a job from running). Added to the snapshot as a partition of
// its own when it differs.
int partition_for(sched::Snapshot& snapshot,
                  int partition,
                  const Job& job,
                  const NodeTable& nodes,
                  const ClusterConfig& config,
                  bool avoid_failed_nodes,
                  ChosenPartitions& chosen) {
    const JobRequest& spec = job.spec;
    // Nodes named with -w are never avoided: the job must have them.
    const bool avoiding_some =
            avoid_failed_nodes && !job.failed_nodes.empty() && spec.nodelist.empty();
    const bool chooses = !spec.nodelist.empty() || !spec.exclude.empty() || !spec.constraint.empty()
                         || !spec.prefer.empty();
    if (!chooses && !avoiding_some) {
        return partition;  // most jobs: no copy of the partition
    }
    const NodeChoiceKey key{partition,     spec.constraint.str(), spec.prefer.str(),
                            spec.nodelist, spec.exclude,          job.resources.nodes_min};
    if (auto it = chosen.find(key); it != chosen.end() && !avoiding_some) {
        return it->second;
    }
    const std::vector<int>& whole = snapshot.partitions[static_cast<size_t>(partition)];
    std::vector<int> members = whole;
    if (chooses) {
        // Checked at submission, so it parses.
        auto choice = node_choice(spec.nodelist, spec.exclude, spec.constraint.str(),
                                  spec.prefer.str(), job.resources.nodes_min);
        if (choice) {
            members = eligible_nodes(whole, *choice, config, snapshot.nodes, false);
        }
    }
    if (avoiding_some) {
        std::vector<int> avoiding = without(members, job.failed_nodes, nodes);
        if (avoiding.size() >= std::max<uint32_t>(job.resources.nodes_min, 1)) {
            members = std::move(avoiding);
        }
    }
    int index = partition;
    if (members != whole) {
        snapshot.partitions.push_back(std::move(members));
        index = static_cast<int>(snapshot.partitions.size()) - 1;
    }
    if (!avoiding_some) {
        chosen.emplace(key, index);
    }
    return index;
}

// A hetjob is offered to the pass only whole: a component held, or waiting on its own
// dependency or begin time, keeps the others back.
void offer_whole_het_jobs_only(std::vector<sched::PendingJob>& pending, const JobTable& jobs) {
    std::map<uint64_t, size_t> offered;
    for (const sched::PendingJob& job : pending) {
        if (job.het_leader != 0) {
            ++offered[job.het_leader];
        }
    }
    if (offered.empty()) {
        return;
    }
    std::erase_if(pending, [&](const sched::PendingJob& job) {
        if (job.het_leader == 0) {
            return false;
        }
        auto leader = jobs.find(job.het_leader);
        return leader == jobs.end() || offered.at(job.het_leader) != leader->second.het_size;
    });
}

}  // namespace

void Controller::persist(const Job& job, std::function<void()> after) {
    changed_since_pass_ = true;
    const uint64_t id = job.job_id;
    writer_.write({to_record(job)}, [this, id, after = std::move(after)](const Status& status) {
        on_strand([this, id, after, status] {
            if (!status) {
                spdlog::error("job {}: state not stored: {}", id, status.message());
            }
            // Finished jobs leave memory once durable; accounting answers for them.
            auto it = jobs_.find(id);
            if (it != jobs_.end() && is_final(it->second.state)) {
                jobs_.remember_final(it->second);
                jobs_.forget(id);
            }
            if (after) {
                after();
            }
        });
    });
}

void Controller::persist(const ArrayRemainder& remainder) {
    changed_since_pass_ = true;
    const uint64_t id = remainder.job.job_id;
    writer_.write({to_record(remainder)}, [this, id](const Status& status) {
        on_strand([this, id, status] {
            if (!status) {
                spdlog::error("array {}: state not stored: {}", id, status.message());
            }
            auto it = jobs_.remainders().find(id);
            if (it != jobs_.remainders().end() && is_final(it->second.job.state)) {
                jobs_.forget_remainder(id);
            }
        });
    });
}

std::vector<uint64_t> Controller::split_tasks(uint64_t array_id,
                                              const std::vector<uint32_t>& indexes) {
    std::vector<StateChange> changes;
    std::vector<uint64_t> ids;
    for (uint32_t index : indexes) {
        const Job& task = jobs_.split_task(array_id, index);
        ids.push_back(task.job_id);
        changes.emplace_back(to_record(task));
    }
    auto rest = jobs_.remainders().find(array_id);
    if (rest == jobs_.remainders().end()) {
        changes.emplace_back(ArrayRemainderEmptied{array_id});
    } else {
        changes.emplace_back(to_record(rest->second));
    }
    // Ordered before any later write of these tasks, so a task is never RUNNING in the store
    // while its index is still in the remainder.
    writer_.write(std::move(changes), [array_id](const Status& status) {
        if (!status) {
            spdlog::error("array {}: split tasks not stored: {}", array_id, status.message());
        }
    });
    return ids;
}

void Controller::after_durable(std::function<void()> then) {
    // The writer commits in queue order, so an empty write completes after every earlier one.
    writer_.write({}, [this, then = std::move(then)](const Status&) { on_strand(then); });
}

void Controller::schedule_if_due(int64_t now_ms) {
    if (changed_since_pass_ || clock_.unix_seconds() >= next_timed_change_
        || now_ms - pass_started_ms_ >= kIdlePassIntervalMs) {
        request_schedule();
    } else {
        spare_pending_ = {};  // quiet: the next pass may be a minute away
    }
}

void Controller::request_schedule() {
    changed_since_pass_ = true;
    if (schedule_posted_) {
        return;
    }
    schedule_posted_ = true;
    on_strand([this] { schedule(); });
}

void Controller::schedule() {
    schedule_posted_ = false;
    if (usage_loading_) {
        changed_since_pass_ = true;  // the next tick asks again
        return;
    }
    if (pass_) {
        pass_again_ = true;  // the pass in progress plans from older state; plan anew after it
        return;
    }
    if (const int64_t now_ms = clock_.steady_ms(); now_ms < next_pass_ms_) {
        delay_pass(next_pass_ms_ - now_ms);
        return;
    }
    const int64_t now = clock_.unix_seconds();
    pass_started_ms_ = clock_.steady_ms();
    changed_since_pass_ = false;
    next_timed_change_ = INT64_MAX;
    expire_reservations(now);
    refresh_fairshare(now);
    refresh_remainder_priorities(now);
    sched::Snapshot snapshot = build_snapshot(now);
    pass_snapshot_ms_ = clock_.steady_ms() - pass_started_ms_;
    pass_longest_step_ms_ = 0;
    note_timed_changes(snapshot);
    if (snapshot.pending.empty()) {
        return;
    }
    pass_ = std::make_unique<sched::PlanPass>(std::move(snapshot), backfill_);
    pass_steps_ = 0;
    pass_starts_ = 0;
    // Building the snapshot held the strand long enough: requests queued meanwhile go first.
    on_strand([this] { continue_pass(); });
}

void Controller::delay_pass(int64_t delay_ms) {
    changed_since_pass_ = true;
    if (pass_delayed_) {
        return;
    }
    pass_delayed_ = true;
    pass_delay_.expires_after(std::chrono::milliseconds(delay_ms));
    pass_delay_.async_wait([this](boost::system::error_code ec) {
        pass_delayed_ = false;
        if (!ec) {
            request_schedule();
        }
    });
}

void Controller::note_eligible(Job& job, int64_t now) {
    // Kept in memory until the job's next write (its start, at the latest): a controller
    // restart before then records the first offer after it instead.
    if (job.eligible_time == 0) {
        job.eligible_time = now;
    }
}

void Controller::note_timed_change(int64_t at, int64_t now) {
    if (at > now) {
        next_timed_change_ = std::min(next_timed_change_, at);
    }
}

void Controller::note_timed_changes(const sched::Snapshot& snapshot) {
    const int64_t now = snapshot.now;
    for (const sched::RunningAllocation& running : snapshot.running) {
        note_timed_change(running.expected_end, now);
    }
    for (const sched::ReservationWindow& window : snapshot.windows) {
        note_timed_change(window.start, now);
        note_timed_change(window.end, now);
    }
    for (const sched::PendingJob& pending : snapshot.pending) {
        note_timed_change(pending.switches_wait_until, now);
    }
    for (const auto& [id, remainder] : jobs_.remainders()) {
        note_timed_change(remainder.job.spec.begin_time, now);
    }
}

sched::Snapshot Controller::cluster_snapshot(int64_t now,
                                             std::map<std::string, int>& partition_index) const {
    sched::Snapshot snapshot;
    snapshot.now = now;
    snapshot.nodes = nodes_.capacities();
    snapshot.network = network_;
    for (const auto& partition : config_.partitions) {
        partition_index[partition.name] = static_cast<int>(snapshot.partitions.size());
        snapshot.partitions.push_back(partition_nodes_.at(partition.name));
    }
    return snapshot;
}

Result<protocol::WillRunReply> Controller::will_run(
        const std::vector<protocol::JobRecord>& components) {
    const int64_t now = clock_.unix_seconds();
    std::map<std::string, int> partition_index;
    sched::Snapshot snapshot = cluster_snapshot(now, partition_index);
    const auto node_index = [this](const std::string& name) {
        return nodes_.index_of(name);
    };
    for (const auto& [id, job] : jobs_) {
        if (job.state == JobState::kRunning || job.state == JobState::kCompleting) {
            snapshot.running.push_back(running_allocation_of(job, node_index, gres_names_, now));
        }
    }
    snapshot.windows = reservations_.windows(node_index);
    int64_t begin_time = 0;
    for (const protocol::JobRecord& record : components) {
        const Job job = job_from_record(record);
        sched::PendingJob pending;
        pending.id = record.job_id;
        pending.submit_time = now;
        pending.time_limit_s = job.time_limit_s;
        pending.time_min_s = job.spec.time_min_s;
        pending.request = job.resources;
        pending.request.gres_per_node = gres_uses_of(job.spec.gres.str(), gres_names_);
        ChosenPartitions chosen;
        pending.partition = partition_for(snapshot, partition_index.at(job.partition), job, nodes_,
                                          config_, false, chosen);
        for (const std::string& name : job.spec.nodelist) {
            pending.required_nodes.push_back(nodes_.index_of(name));
        }
        for (size_t i = 0; i < snapshot.windows.size(); ++i) {
            if (snapshot.windows[i].name == job.spec.reservation) {
                pending.reservation = static_cast<int>(i);
            }
        }
        // A hetjob's components are planned as one: their common start.
        pending.het_leader = components.size() > 1 ? components.front().job_id : 0;
        begin_time = std::max(begin_time, job.spec.begin_time);
        snapshot.pending.push_back(std::move(pending));
    }
    // EASY plans the first waiting job's start whatever the cluster's policy.
    const sched::Decisions decisions = sched::plan(snapshot, sched::BackfillOptions{});
    protocol::WillRunReply reply;
    reply.job_id = components.front().job_id;
    reply.partition = components.front().partition;
    std::vector<const sched::Placement*> placements;
    for (const sched::StartJob& start : decisions.starts) {
        reply.start_time = now;
        placements.push_back(&start.placement);
    }
    for (const sched::ReservedJob& reserved : decisions.reservations) {
        reply.start_time = reserved.start;
        placements.push_back(&reserved.placement);
    }
    if (placements.size() != components.size()) {
        return Status::unavailable("no start found: too few of the nodes it may use are up");
    }
    // As sbatch --test-only: one line for a hetjob, its CPUs summed over the components.
    std::set<int> nodes;
    for (const sched::Placement* placement : placements) {
        nodes.insert(placement->nodes.begin(), placement->nodes.end());
        for (int32_t cpus : placement->cpus_per_node) {
            reply.cpus += cpus;
        }
    }
    for (int node : nodes) {
        reply.nodes.push_back(nodes_[static_cast<size_t>(node)].info.name);
    }
    reply.start_time = std::max(reply.start_time, begin_time);
    return reply;
}

sched::Snapshot Controller::build_snapshot(int64_t now) {
    std::map<std::string, int> partition_index;
    sched::Snapshot snapshot = cluster_snapshot(now, partition_index);
    // Per-user QoS caps: what each (QoS, user) holds now, and the limits that bind it.
    std::map<LimitKey, std::vector<int>> limits_of;
    static const std::vector<int> kNoLimits;
    auto limits_for = [&](const Job& job) -> const std::vector<int>& {
        const QosConfig* qos = config_.policy.find_qos(job.spec.qos);
        if (qos == nullptr
            || (qos->max_jobs_per_user < 0 && qos->max_cpus_per_user < 0
                && qos->max_gpus_per_user < 0)) {
            return kNoLimits;  // no key of two strings to build for each of 100,000 jobs
        }
        LimitKey key{job.spec.qos, job.user_name};
        auto [it, fresh] = limits_of.try_emplace(key);
        if (fresh) {
            const std::tuple<int64_t, sched::LimitedResource, const char*> caps[] = {
                    {qos->max_jobs_per_user, sched::LimitedResource::kJobs,
                     "QOSMaxJobsPerUserLimit"},
                    {qos->max_cpus_per_user, sched::LimitedResource::kCpus,
                     "QOSMaxCpuPerUserLimit"},
                    {qos->max_gpus_per_user, sched::LimitedResource::kGpus, "QOSMaxGRESPerUser"}};
            for (const auto& [max, resource, reason] : caps) {
                if (max >= 0) {
                    it->second.push_back(static_cast<int>(snapshot.limits.size()));
                    snapshot.limits.push_back({reason, resource, max, 0});
                }
            }
        }
        return it->second;
    };
    // The cluster's licenses (-L): one limit each, held by the running jobs that took some.
    std::map<std::string, int> license_limit;
    for (const auto& [name, total] : config_.licenses) {
        license_limit[name] = static_cast<int>(snapshot.limits.size());
        snapshot.limits.push_back({"Licenses", sched::LimitedResource::kLicense, total, 0});
    }
    const auto licenses_of = [&](const Job& job) {
        std::vector<sched::LicenseUse> uses;
        auto parsed = parse_licenses(job.spec.licenses.str());
        for (const LicenseRequest& license : parsed ? *parsed : std::vector<LicenseRequest>{}) {
            if (auto it = license_limit.find(license.name); it != license_limit.end()) {
                uses.push_back({it->second, license.count});
            }
        }
        return uses;
    };
    const auto node_index = [this](const std::string& name) {
        return nodes_.index_of(name);
    };
    // One walk over the jobs (each walk of 100,000 cost the strand about 15 ms): the running
    // ones' allocations and usage, what each throttled array (--array=...%N) runs, how many
    // tasks each array has split off, and the pending jobs, offered further below.
    sched::ArrayThrottle throttle;
    std::map<uint64_t, ArrayTaskCounts> task_counts;  // by array id, while remainders wait
    const bool count_tasks = !jobs_.remainders().empty();
    std::vector<Job*> pending_jobs;
    pending_jobs.reserve(last_pass_pending_);
    for (auto& [id, job] : jobs_) {
        job.expected_start = 0;  // this pass plans anew
        const bool running = job.state == JobState::kRunning || job.state == JobState::kCompleting;
        if (job.is_array_task()) {
            throttle.count(job.array_job_id, job.array_max_running, running);
            if (count_tasks && !is_final(job.state)) {
                ArrayTaskCounts& counts = task_counts[job.array_job_id];
                if (job.state != JobState::kPending) {
                    ++counts.running;
                } else if (!job.held) {
                    ++counts.waiting;
                }
            }
        }
        if (job.state == JobState::kPending) {
            pending_jobs.push_back(&job);
            continue;
        }
        if (!running) {
            continue;
        }
        snapshot.running.push_back(running_allocation_of(job, node_index, gres_names_, now));
        if (const std::optional<int64_t> end = preempted_end(job)) {
            snapshot.running.back().expected_end =
                    std::min(snapshot.running.back().expected_end, std::max(*end, now));
        }
        if (!job.spec.licenses.empty()) {
            for (const sched::LicenseUse& use : licenses_of(job)) {
                snapshot.limits[static_cast<size_t>(use.limit)].used += use.count;
            }
        }
        for (int limit : limits_for(job)) {
            sched::UsageLimit& l = snapshot.limits[static_cast<size_t>(limit)];
            l.used += l.resource == sched::LimitedResource::kJobs   ? 1
                      : l.resource == sched::LimitedResource::kCpus ? allocated_cpus(job)
                                                                    : allocated_gpus(job);
        }
    }
    snapshot.windows = reservations_.windows(
            [this](const std::string& node) { return nodes_.index_of(node); });
    std::map<std::string, int> window_index;
    for (size_t i = 0; i < snapshot.windows.size(); ++i) {
        window_index[snapshot.windows[i].name] = static_cast<int>(i);
    }
    int64_t idle_cpus = 0;
    for (const auto& node : snapshot.nodes) {
        idle_cpus += node.up ? node.cpus : 0;
    }
    for (const auto& running : snapshot.running) {
        for (int32_t cpus : running.cpus_per_node) {
            idle_cpus -= cpus;
        }
    }
    for (uint64_t id :
         split_startable_tasks(now, std::max<int64_t>(idle_cpus, 0), task_counts, window_index)) {
        pending_jobs.push_back(&jobs_.at(id));  // a copy of its array's record: plans anew
        pending_jobs.back()->expected_start = 0;
    }
    ChosenPartitions chosen_partitions;
    // -p a,b: the first partition with the job's CPUs free now, else the first.
    std::vector<int64_t> free_cpus;
    const auto partition_with_room = [&](const Job& job) -> std::string {
        if (free_cpus.empty()) {
            for (const sched::NodeCapacity& node : snapshot.nodes) {
                free_cpus.push_back(node.up ? node.cpus : 0);
            }
            for (const sched::RunningAllocation& running : snapshot.running) {
                for (size_t i = 0; i < running.nodes.size(); ++i) {
                    free_cpus[static_cast<size_t>(running.nodes[i])] -= running.cpus_per_node[i];
                }
            }
        }
        const std::vector<std::string> names = partition_list(job.spec.partition);
        for (const std::string& name : names) {
            int64_t free = 0;
            for (int node : snapshot.partitions[static_cast<size_t>(partition_index.at(name))]) {
                free += std::max<int64_t>(free_cpus[static_cast<size_t>(node)], 0);
            }
            if (free >= requested_cpus_of(job.spec)) {
                return name;
            }
        }
        return names.front();
    };
    std::vector<uint64_t> never;  // dependencies that can never be met
    // Back-to-back passes reuse the last one's memory: 100,000 pending jobs are 20 MB, which
    // fresh pages and regrowth made cost more than the rest of building the snapshot.
    snapshot.pending = std::move(spare_pending_);
    snapshot.pending.clear();
    snapshot.pending.reserve(last_pass_pending_);
    for (Job* pending_job : pending_jobs) {
        Job& job = *pending_job;
        const uint64_t id = job.job_id;
        refresh_priority(job, now);  // here, not in a walk of its own over 100,000 jobs
        if (job.held || !jobs_.is_committed(id)) {
            continue;
        }
        if (job.is_array_task()) {
            throttle.count(job.array_job_id, job.array_max_running, false);  // split just now
        }
        note_timed_change(job.spec.begin_time, now);
        auto window = job.spec.reservation.empty() ? window_index.end()
                                                   : window_index.find(job.spec.reservation);
        sched::EligibilityFacts facts = eligibility_facts(job, now, window != window_index.end());
        facts.array_id = job.is_array_task() ? job.array_job_id : 0;
        const sched::Eligibility eligibility = sched::check_eligibility(facts, now, throttle);
        if (eligibility.verdict != sched::Eligibility::Verdict::kOffer) {
            job.reason = std::string(eligibility.reason);
            if (eligibility.verdict == sched::Eligibility::Verdict::kCancel) {
                never.push_back(id);
            }
            continue;
        }
        note_eligible(job, now);
        const int reservation = facts.wants_reservation ? window->second : -1;
        sched::PendingJob pending;
        pending.id = id;
        pending.submit_time = job.submit_time;
        pending.priority = planned_priority(job);
        pending.time_limit_s = job.time_limit_s;
        pending.time_min_s = job.spec.time_min_s;
        pending.request = job.resources;
        if (!job.spec.gres.empty()) {
            pending.request.gres_per_node = gres_uses_of(job.spec.gres.str(), gres_names_);
        }
        if (job.spec.partition.str().find(',') != std::string::npos) {
            job.partition = partition_with_room(job);
        }
        pending.partition =
                partition_for(snapshot, partition_index.at(job.partition), job, nodes_, config_,
                              config_.requeue_avoid_failed_nodes, chosen_partitions);
        for (const std::string& name : job.spec.nodelist) {
            pending.required_nodes.push_back(nodes_.index_of(name));
        }
        pending.limits = limits_for(job);
        if (!job.spec.licenses.empty()) {
            pending.licenses = licenses_of(job);
        }
        pending.reservation = reservation;
        if (job.spec.switches > 0) {
            const int64_t wait = job.spec.switches_wait_s >= 0 ? job.spec.switches_wait_s
                                                               : config_.network.max_switch_wait_s;
            pending.switches_wait_until = std::max(job.submit_time, job.spec.begin_time) + wait;
        }
        pending.het_leader = job.het_job_id;
        snapshot.pending.push_back(std::move(pending));
    }
    offer_whole_het_jobs_only(snapshot.pending, jobs_);
    for (uint64_t id : never) {
        spdlog::info("job {}: dependency '{}' can never be satisfied; cancelling", id,
                     jobs_.at(id).spec.dependency);
        cancel_pending(jobs_.at(id), "DependencyNeverSatisfied");
        mail(jobs_.at(id), kMailInvalidDepend);
    }
    return snapshot;
}

sched::EligibilityFacts Controller::eligibility_facts(const Job& job,
                                                      int64_t now,
                                                      bool reservation_exists) const {
    sched::EligibilityFacts facts;
    facts.begin_time = job.spec.begin_time;
    if (!job.spec.dependency.empty() && job.spec.begin_time <= now) {
        facts.dependency = dependency_status(job, now);
    }
    facts.kill_on_invalid_dep = job.spec.kill_on_invalid_dep;
    facts.wants_reservation = !job.spec.reservation.empty();
    facts.reservation_exists = reservation_exists;
    return facts;
}

std::vector<uint64_t> Controller::split_startable_tasks(
        int64_t now,
        int64_t idle_cpus,
        const std::map<uint64_t, ArrayTaskCounts>& task_counts,
        const std::map<std::string, int>& window_index) {
    std::vector<uint64_t> split;
    if (jobs_.remainders().empty()) {
        return split;
    }
    std::vector<uint64_t> never;
    std::vector<std::pair<uint64_t, std::vector<uint32_t>>> splits;
    for (auto& [id, remainder] : jobs_.remainders()) {
        Job& job = remainder.job;
        if (job.state != JobState::kPending || job.held || !jobs_.is_committed(id)) {
            continue;
        }
        const sched::EligibilityFacts facts = eligibility_facts(
                job, now, window_index.contains(std::string(job.spec.reservation)));
        sched::ArrayThrottle unthrottled;  // the throttle is applied below, to the count
        const sched::Eligibility eligibility = sched::check_eligibility(facts, now, unthrottled);
        if (eligibility.verdict != sched::Eligibility::Verdict::kOffer) {
            job.reason = std::string(eligibility.reason);
            if (eligibility.verdict == sched::Eligibility::Verdict::kCancel) {
                never.push_back(id);
            }
            continue;
        }
        note_eligible(job, now);  // its tasks, split off later, keep this time
        // As many tasks as the idle CPUs could start, and one more to plan ahead for, less
        // those already split off and waiting; never beyond the %N throttle.
        auto counted = task_counts.find(id);
        const ArrayTaskCounts c =
                counted != task_counts.end() ? counted->second : ArrayTaskCounts{};
        const int64_t task_cpus = std::max<int64_t>(
                1, int64_t{job.resources.cpus_per_task} * std::max(1u, job.resources.ntasks));
        int64_t wanted = idle_cpus / task_cpus + 1 - c.waiting;
        if (job.array_max_running != 0) {
            const int64_t room = int64_t{job.array_max_running} - c.running - c.waiting;
            if (room <= 0) {
                job.reason = "JobArrayTaskLimit";
            }
            wanted = std::min(wanted, room);
        }
        wanted = std::min<int64_t>(wanted, remainder.pending.size());
        if (wanted > 0) {
            std::vector<uint32_t> indexes;
            for (uint32_t i = 0; i < wanted; ++i) {
                indexes.push_back(remainder.pending.at(i));
            }
            splits.emplace_back(id, std::move(indexes));
        }
    }
    for (const auto& [id, indexes] : splits) {
        const std::vector<uint64_t> ids = split_tasks(id, indexes);
        split.insert(split.end(), ids.begin(), ids.end());
    }
    for (uint64_t id : never) {
        ArrayRemainder& remainder = jobs_.remainders().at(id);
        spdlog::info("array {}: dependency '{}' can never be satisfied; cancelling", id,
                     remainder.job.spec.dependency);
        cancel_remainder(remainder, "DependencyNeverSatisfied");
    }
    return split;
}

void Controller::continue_pass() {
    const PassBudgetConfig& limits = config_.policy.pass_budget;
    sched::PassBudget budget;
    if (limits.max_jobs > 0) {
        budget.max_jobs = static_cast<size_t>(limits.max_jobs);
    }
    if (limits.max_ms > 0) {
        const int64_t deadline = clock_.steady_ms() + limits.max_ms;
        budget.out_of_time = [this, deadline] {
            return clock_.steady_ms() >= deadline;
        };
    }
    const int64_t step_started_ms = clock_.steady_ms();
    sched::Decisions decisions = pass_->step(budget);
    ++pass_steps_;
    pass_starts_ += decisions.starts.size();
    apply(decisions, pass_->snapshot());
    pass_longest_step_ms_ = std::max(pass_longest_step_ms_, clock_.steady_ms() - step_started_ms);
    if (!pass_->done()) {
        on_strand([this] { continue_pass(); });  // requests queued meanwhile are served first
        return;
    }
    log_pass();
    const int64_t now_ms = clock_.steady_ms();
    next_pass_ms_ = now_ms + (now_ms - pass_started_ms_);
    last_pass_pending_ = pass_->snapshot().pending.size();
    spare_pending_ = std::move(*pass_).release_snapshot().pending;
    pass_.reset();
    if (pass_again_) {
        pass_again_ = false;
        request_schedule();
    }
}

// As Slurm's backfill log line: what a pass cost, at info when it took long enough for an
// operator to care (the budget then spreads it over steps), else at debug.
void Controller::log_pass() const {
    const int64_t took_ms = clock_.steady_ms() - pass_started_ms_;
    const auto level = took_ms >= kSlowPassMs ? spdlog::level::info : spdlog::level::debug;
    spdlog::log(level,
                "scheduling pass: {} pending jobs on {} nodes, {} started, {} ms in {} steps "
                "(snapshot {} ms, longest step {} ms)",
                pass_->snapshot().pending.size(), pass_->snapshot().nodes.size(), pass_starts_,
                took_ms, pass_steps_, pass_snapshot_ms_, pass_longest_step_ms_);
}

void Controller::apply(const sched::Decisions& decisions, const sched::Snapshot& snapshot) {
    // Between steps jobs may have been cancelled or held and nodes lost; those are skipped.
    auto still_pending = [this](uint64_t id) -> Job* {
        auto it = jobs_.find(id);
        return it != jobs_.end() && it->second.state == JobState::kPending && !it->second.held
                       ? &it->second
                       : nullptr;
    };
    for (const auto& wait : decisions.waits) {
        if (Job* job = still_pending(wait.job_id)) {
            job->reason = sched::wait_reason_name(wait, snapshot.limits);
            // The remainder shows why its tasks wait, as Slurm's array record does.
            auto remainder = jobs_.remainders().find(job->array_job_id);
            if (job->is_array_task() && remainder != jobs_.remainders().end()) {
                remainder->second.job.reason = job->reason;
            }
        }
    }
    for (const auto& reserved : decisions.reservations) {
        if (Job* job = still_pending(reserved.job_id)) {
            job->expected_start = reserved.start;
        }
    }
    // A hetjob starts whole or not at all: all its components must still be pending.
    std::set<uint64_t> het_started;
    for (const auto& start : decisions.starts) {
        const Job* job = still_pending(start.job_id);
        if (job != nullptr && job->is_het_leader()) {
            het_started.insert(job->job_id);
        }
    }
    std::erase_if(het_started, [&](uint64_t leader) {
        const uint32_t size = jobs_.at(leader).het_size;
        for (uint64_t id = leader; id < leader + size; ++id) {
            if (still_pending(id) == nullptr
                || std::none_of(decisions.starts.begin(), decisions.starts.end(),
                                [&](const sched::StartJob& start) { return start.job_id == id; })) {
                return true;
            }
        }
        return false;
    });
    for (const auto& start : decisions.starts) {
        Job* pending = still_pending(start.job_id);
        if (pending != nullptr && pending->is_het_component()
            && !het_started.contains(pending->het_job_id)) {
            pass_again_ = true;
            continue;
        }
        const bool nodes_up = std::all_of(
                start.placement.nodes.begin(), start.placement.nodes.end(),
                [&](int index) { return nodes_.takes_jobs(static_cast<size_t>(index)); });
        if (pending == nullptr || !nodes_up) {
            pass_again_ = true;
            continue;
        }
        Job& job = *pending;
        if (start.time_limit_s > 0) {
            spdlog::info("job {}: time limit lowered from {} s to {} s (--time-min) to start now",
                         job.job_id, job.time_limit_s, start.time_limit_s);
            job.time_limit_s = start.time_limit_s;
        }
        job.state = JobState::kRunning;
        job.reason = "None";
        job.start_time = clock_.unix_seconds();
        job.nodes.clear();
        for (int index : start.placement.nodes) {
            job.nodes.push_back(nodes_[index].info.name);
        }
        job.tasks_per_node = start.placement.tasks_per_node;
        job.cpus_per_node = std::vector<uint32_t>(start.placement.cpus_per_node.begin(),
                                                  start.placement.cpus_per_node.end());
        job.mem_per_node_mib = start.placement.memory_mib_per_node;
        assign_gpus(job, start.placement.gpus_per_node);
        nodes_.claim(job);
        watch_time_limit(job);
        // Launch only once RUNNING is durable, so a restarted controller never meets a
        // running job it believes pending. A hetjob's leader, which runs the script, is
        // launched once its last component is durable; the others run steps only.
        const uint64_t to_launch = !job.is_het_component()                  ? job.job_id
                                   : job.het_job_offset + 1 == job.het_size ? job.het_job_id
                                                                            : 0;
        persist(job, [this, to_launch] {
            if (to_launch != 0) {
                launch(to_launch);
            }
        });
    }
    preempt_for_waiting(decisions, snapshot);
}

void Controller::launch(uint64_t job_id) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || it->second.state != JobState::kRunning) {
        return;
    }
    Job& job = it->second;
    mail(job, kMailBegin);
    if (job.interactive) {
        auto client = job_clients_.find(job_id);
        if (client == job_clients_.end()) {
            end_job(job, JobState::kCancelled, "");
            return;
        }
        ConnectionPtr conn = client->second;
        protocol::StepCreateRequest whole_job;  // the step of `cohort run` without a job
        whole_job.job_id = job_id;
        whole_job.name = job.spec.name;
        std::vector<protocol::JobRecord> components;
        for (uint32_t offset = 0; offset < job.het_size; ++offset) {
            components.push_back(to_record(jobs_.at(job_id + offset)));
        }
        open_step(job, whole_job,
                  [this, conn, job_id, components = std::move(components)](
                          const Result<protocol::StepLayout>& layout) mutable {
                      if (!layout) {
                          conn->send_error(layout.status());
                          on_strand([this, job_id] {
                              if (auto found = jobs_.find(job_id); found != jobs_.end()) {
                                  end_job(found->second, JobState::kFailed, "");
                              }
                          });
                          return;
                      }
                      protocol::AllocationReply reply;
                      reply.job_id = job_id;
                      reply.started = true;
                      reply.layout = *layout;
                      reply.het_components = std::move(components);
                      conn->send(reply);
                  });
        return;
    }
    // The script and environment are read from the state store only now.
    protocol::LaunchBatchRequest request;
    request.job = to_record(job);
    request.cluster_name = config_.cluster_name;
    request.submit_dir = job.spec.cwd;
    for (uint32_t offset = 0; offset < job.het_size; ++offset) {
        request.het_components.push_back(to_record(jobs_.at(job_id + offset)));
    }
    writer_.read_committed([this, request = std::move(request)](StateStore& store) mutable {
        Result<JobPayload> payload = store.payload(payload_key(request.job));
        on_strand([this, request = std::move(request), payload = std::move(payload)]() mutable {
            auto running = jobs_.find(request.job.job_id);
            if (running == jobs_.end() || running->second.state != JobState::kRunning) {
                return;  // it ended while its payload was read
            }
            if (!payload) {
                spdlog::error("job {}: {}", request.job.job_id, payload.status().message());
                end_job(running->second, JobState::kFailed, "");
                return;
            }
            NodeEntry* node = nodes_.find(request.job.nodes.front());
            if (node == nullptr || !node->connection) {
                fail_job_on_node(running->second, request.job.nodes.front());
                return;
            }
            restore_payload(request.job.spec, std::move(*payload));
            node->connection->send(request);
        });
    });
}

void Controller::end_job(Job& job, JobState final_state, const std::string& clean_node) {
    if (job.state != JobState::kRunning) {
        return;
    }
    job.state = JobState::kCompleting;
    job.final_state = final_state;
    job.end_time = clock_.unix_seconds();
    job.nodes_cleaning.clear();
    drop_deferred_report(job.job_id);
    // An allocation's client (salloc, cohort run) that did not end it itself learns of the
    // end by its connection closing: "Job allocation N has been revoked".
    if (auto client = job_clients_.find(job.job_id); client != job_clients_.end()) {
        client->second->close_after_writes();
        job_clients_.erase(client);
    }
    for (const auto& name : job.nodes) {
        NodeEntry* node = nodes_.find(name);
        if (name == clean_node || node == nullptr || !node->connection || !node->responding) {
            continue;
        }
        job.nodes_cleaning.push_back(name);
        node->connection->send(protocol::TerminateJobRequest{job.job_id, 0, job.restart_count});
    }
    if (job.nodes_cleaning.empty()) {
        finish_if_clean(job);
    } else {
        persist(job);
    }
    // The script's end, a cancel, a failure or a requeue of the leader ends every component
    // (a requeue starts them all again).
    for (uint32_t offset = 1; job.is_het_leader() && offset < job.het_size; ++offset) {
        if (auto component = jobs_.find(job.job_id + offset);
            component != jobs_.end() && component->second.state == JobState::kRunning) {
            component->second.requeue_action = job.requeue_action;
            end_job(component->second, final_state, "");
        }
    }
}

void Controller::signal_job(const Job& job, int signal, protocol::SignalTarget target) {
    for (const auto& name : job.nodes) {
        NodeEntry* node = nodes_.find(name);
        if (node != nullptr && node->connection) {
            node->connection->send(
                    protocol::TerminateJobRequest{job.job_id, signal, job.restart_count, target});
        }
    }
}

void Controller::finish_if_clean(Job& job) {
    if (job.state != JobState::kCompleting || !job.nodes_cleaning.empty()) {
        return;
    }
    if (job.requeue_action != protocol::RequeueAction::kNone) {
        restart_when_clean(job);
        return;
    }
    job.state = job.final_state;
    charge_job(job, job.end_time);
    usage_.forget(job.job_id);
    nodes_.release(job);
    // Steps whose client never reported (it died, or the job was cancelled) end with the job.
    for (protocol::StepRecord& step : steps_.close_all_of(job.job_id)) {
        close_step(step, job.state == JobState::kCompleted ? JobState::kCancelled : job.state, 0,
                   0);
    }
    job_clients_.erase(job.job_id);
    spdlog::info("job {} {} (exit {}:{})", job.job_id, job_state_name(job.state), job.exit_code,
                 job.exit_signal);
    const bool failed = job.state != JobState::kCompleted;
    mail(job, failed && (job.spec.mail_type & kMailFail) != 0 ? kMailFail : kMailEnd);
    persist(job);
    request_schedule();
}

}  // namespace cohort::ctld
