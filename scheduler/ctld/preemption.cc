// Preemption: after a pass, a waiting job whose QoS lists QoSes it may preempt takes the
// resources of running jobs of those QoSes, when that lets it start now
// (sched::choose_preemptees picks them, lowest priority first). Each gets its warning signal at
// once, SIGTERM after its own QoS's grace time, and is then requeued or cancelled as PREEMPTED.
// A heterogeneous job is preempted whole, through its leader, as it is requeued whole; a
// waiting one preempts through its leader too, for room for every component at once.
#include "scheduler/preemption/preemption.h"

#include <algorithm>
#include <csignal>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "common/warning_signal.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {

void Controller::preempt_for_waiting(const sched::Decisions& decisions,
                                     const sched::Snapshot& snapshot) {
    // A preemption is kept while its preemptor waits (planned_priority needs it) and its
    // victim is known.
    for (auto it = preemptions_.begin(); it != preemptions_.end();) {
        auto preemptor = jobs_.find(it->second.preemptor);
        const bool kept = jobs_.find(it->first) != jobs_.end() && preemptor != jobs_.end()
                          && preemptor->second.state == JobState::kPending;
        it = kept ? std::next(it) : preemptions_.erase(it);
    }
    const auto& all_qos = config_.policy.qos;
    if (std::none_of(all_qos.begin(), all_qos.end(),
                     [](const QosConfig& q) { return !q.preempt.empty(); })) {
        return;
    }
    // What running jobs hold, gathered once: the pass's steps run often on a busy cluster.
    const int64_t now = clock_.unix_seconds();
    const auto node_index = [this](const std::string& name) {
        return nodes_.index_of(name);
    };
    std::vector<sched::RunningAllocation> held;
    std::vector<const Job*> holders;
    std::unordered_map<uint64_t, size_t> held_by;  // job id -> index in held and holders
    for (const auto& [id, running] : jobs_) {
        if (running.state == JobState::kRunning || running.state == JobState::kCompleting) {
            held_by[id] = held.size();
            held.push_back(running_allocation_of(running, node_index, gres_names_, now));
            holders.push_back(&running);
        }
    }
    // Each waiting job tried costs a placement per candidate: a few per step is enough, as
    // the highest-priority ones come first and the next step tries again.
    constexpr int kMaxPreemptorsPerStep = 8;
    int tried = 0;
    for (const auto& wait : decisions.waits) {
        if (wait.reason != sched::WaitReason::kResources
            && wait.reason != sched::WaitReason::kPriority) {
            continue;  // a limit or a reservation holds it: freeing nodes would not help
        }
        auto waiting = jobs_.find(wait.job_id);
        // A waiting hetjob preempts through its leader, for all its components at once.
        if (waiting == jobs_.end() || waiting->second.state != JobState::kPending
            || waiting->second.held
            || (waiting->second.is_het_component() && !waiting->second.is_het_leader())) {
            continue;
        }
        const Job& job = waiting->second;
        const bool awaited =
                std::any_of(preemptions_.begin(), preemptions_.end(), [&](const auto& p) {
                    return p.second.preemptor == job.job_id && being_preempted(jobs_.at(p.first));
                });
        std::vector<sched::WaitingPart> parts;
        std::vector<const QosConfig*> qos_of_parts;
        for (uint32_t offset = 0; offset < std::max<uint32_t>(job.het_size, 1); ++offset) {
            const uint64_t id = job.job_id + offset;
            auto pending = std::find_if(snapshot.pending.begin(), snapshot.pending.end(),
                                        [&](const sched::PendingJob& p) { return p.id == id; });
            const QosConfig* qos = config_.policy.find_qos(jobs_.at(id).spec.qos);
            if (pending == snapshot.pending.end() || qos == nullptr || qos->preempt.empty()) {
                parts.clear();
                break;
            }
            parts.push_back({pending->request,
                             snapshot.partitions.at(static_cast<size_t>(pending->partition))});
            qos_of_parts.push_back(qos);
        }
        if (parts.empty() || awaited) {
            continue;
        }
        if (++tried > kMaxPreemptorsPerStep) {
            return;
        }
        // Every part's QoS must be one that may preempt the running job's.
        const auto preemptable = [&](const Job& running) {
            return running.state == JobState::kRunning
                   && std::all_of(qos_of_parts.begin(), qos_of_parts.end(),
                                  [&](const QosConfig* qos) {
                                      return std::find(qos->preempt.begin(), qos->preempt.end(),
                                                       running.spec.qos.str())
                                             != qos->preempt.end();
                                  });
        };
        std::vector<sched::PreemptionCandidate> candidates;
        for (size_t i = 0; i < holders.size(); ++i) {
            const Job& running = *holders[i];
            if ((running.is_het_component() && !running.is_het_leader())
                || being_preempted(running)) {
                continue;  // a hetjob's other components come with its leader
            }
            sched::PreemptionCandidate candidate{running.job_id, running.priority, {held[i]}};
            bool whole = preemptable(running);
            for (const Job* part : running_parts(running)) {
                if (part == &running) {
                    continue;
                }
                whole = whole && preemptable(*part);
                candidate.allocations.push_back(held[held_by.at(part->job_id)]);
                candidate.priority = std::max(candidate.priority, part->priority);
            }
            if (whole) {
                candidates.push_back(std::move(candidate));
            }
        }
        if (candidates.empty()) {
            continue;
        }
        const std::vector<uint64_t> victims =
                sched::choose_preemptees(nodes_.capacities(), parts, held, std::move(candidates));
        if (victims.empty()) {
            continue;
        }
        for (uint64_t id : victims) {
            start_preemption(jobs_.at(id), job.job_id);
        }
        return;  // one at a time: the next pass sees what these free
    }
}

std::vector<const Job*> Controller::running_parts(const Job& job) const {
    std::vector<const Job*> parts{&job};
    for (uint32_t offset = 1; job.is_het_leader() && offset < job.het_size; ++offset) {
        auto component = jobs_.find(job.job_id + offset);
        if (component != jobs_.end()
            && (component->second.state == JobState::kRunning
                || component->second.state == JobState::kCompleting)) {
            parts.push_back(&component->second);
        }
    }
    return parts;
}

bool Controller::being_preempted(const Job& job) const {
    auto it = preemptions_.find(job.job_id);
    return it != preemptions_.end() && it->second.attempt == job.restart_count
           && (job.state == JobState::kRunning || job.state == JobState::kCompleting);
}

std::optional<int64_t> Controller::preempted_end(const Job& job) const {
    const uint64_t victim = job.is_het_component() ? job.het_job_id : job.job_id;
    auto it = preemptions_.find(victim);
    if (it == preemptions_.end()) {
        return std::nullopt;  // almost always, once per running job and pass: no job lookup
    }
    auto leader = jobs_.find(victim);
    if (leader == jobs_.end() || it->second.attempt != leader->second.restart_count) {
        return std::nullopt;
    }
    return it->second.ends_by;
}

int64_t Controller::planned_priority(const Job& job) const {
    int64_t priority = job.priority;
    // A hetjob preempts through its leader, for every component.
    const uint64_t preemptor = job.is_het_component() ? job.het_job_id : job.job_id;
    for (const auto& [victim_id, preemption] : preemptions_) {
        auto victim = jobs_.find(victim_id);
        if (preemption.preemptor == preemptor && victim != jobs_.end()) {
            priority = std::max(priority, victim->second.priority + 1);
        }
    }
    return priority;
}

void Controller::start_preemption(Job& victim, uint64_t preemptor) {
    const QosConfig* qos = config_.policy.find_qos(victim.spec.qos);
    const int64_t grace_s = qos != nullptr ? qos->grace_time_s : 0;
    preemptions_[victim.job_id] = {preemptor, victim.restart_count,
                                   clock_.unix_seconds() + grace_s};
    // Its --signal (R: ones wait for this moment), else SIGTERM: either way it is told now.
    auto warning = parse_warning_signal("--signal", victim.spec.signal);
    const bool has_warning = warning && warning->signal != 0;
    const int signal = has_warning ? warning->signal : SIGTERM;
    const auto target = has_warning && warning->batch_shell_only
                                ? protocol::SignalTarget::kBatchShell
                        : has_warning ? protocol::SignalTarget::kSteps
                                      : protocol::SignalTarget::kFull;
    spdlog::info("job {}: preempted for job {}: signal {} now, SIGTERM in {} s", victim.job_id,
                 preemptor, signal, grace_s);
    for (const Job* part : running_parts(victim)) {
        jobs_.at(part->job_id).reason = "Preempted by job " + std::to_string(preemptor);
        if (part == &victim || target != protocol::SignalTarget::kBatchShell) {
            signal_job(*part, signal, target);
        }
    }
    auto timer = std::make_shared<asio::steady_timer>(strand_, std::chrono::seconds(grace_s));
    timer->async_wait([this, timer, id = victim.job_id,
                       attempt = victim.restart_count](boost::system::error_code ec) {
        if (!ec) {
            finish_preemption(id, attempt);
        }
    });
}

void Controller::finish_preemption(uint64_t victim_id, uint32_t attempt) {
    auto it = jobs_.find(victim_id);
    if (it == jobs_.end() || it->second.state != JobState::kRunning
        || it->second.restart_count != attempt) {
        return;  // it ended on its own meanwhile
    }
    Job& job = it->second;
    const QosConfig* qos = config_.policy.find_qos(job.spec.qos);
    const bool requeue_it =
            (qos == nullptr || qos->preempt_mode == PreemptMode::kRequeue) && requeue_allowed(job);
    spdlog::info("job {}: grace time over, {} it", victim_id,
                 requeue_it ? "requeueing" : "cancelling");
    if (requeue_it) {
        requeue(job, JobState::kPreempted, /*hold=*/false, "");
    } else {
        end_job(job, JobState::kPreempted, "");
    }
}

}  // namespace cohort::ctld
