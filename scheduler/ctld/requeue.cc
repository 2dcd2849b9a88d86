// Requeue: a running batch job ends its attempt and waits to run again with the same id,
// after a node failure, at its script's exit code, or at a user's request. The attempt is
// recorded for accounting (sacct -D) and the job's restart count goes up.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "common/mail_type.h"
#include "common/warning_signal.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {

bool Controller::requeue_allowed(const Job& job) const {
    if (job.interactive) {
        return false;  // its client holds the allocation; there is nothing to start again
    }
    // Set at submit; jobs stored before requeue existed follow the cluster's setting.
    return job.spec.requeue >= 0 ? job.spec.requeue == 1 : config_.job_requeue;
}

bool Controller::under_requeue_cap(Job& job) {
    if (job.restart_count < static_cast<uint32_t>(config_.max_batch_requeue)) {
        return true;
    }
    job.reason = fmt::format("requeue limit reached ({} restarts, max_batch_requeue)",
                             job.restart_count);
    spdlog::warn("job {}: {}; ending it", job.job_id, job.reason);
    return false;
}

void Controller::fail_job_on_node(Job& job, const std::string& node, bool lost) {
    if (job.state != JobState::kRunning) {
        return;
    }
    if (std::find(job.failed_nodes.begin(), job.failed_nodes.end(), node)
        == job.failed_nodes.end()) {
        job.failed_nodes.push_back(node);
    }
    // A heterogeneous job is requeued or ended whole, as its leader decides; ending the
    // leader ends the components (end_job).
    if (job.is_het_component() && !job.is_het_leader()) {
        if (auto leader = jobs_.find(job.het_job_id); leader != jobs_.end()) {
            fail_job_on_node(leader->second, node, lost);
        }
        return;
    }
    // A lost node has nothing left to clean; one taken down by an operator still runs the
    // job's processes until they are terminated.
    const std::string clean_node = lost ? node : "";
    if (!requeue_allowed(job) || !under_requeue_cap(job)) {
        end_job(job, JobState::kNodeFail, clean_node);
        return;
    }
    spdlog::warn("job {}: node {} was {}; requeueing it (restart {})", job.job_id, node,
                 lost ? "lost" : "taken down", job.restart_count + 1);
    requeue(job, JobState::kNodeFail, /*hold=*/false, clean_node);
}

std::optional<bool> Controller::requeue_exit_hold(const Job& job,
                                                  const protocol::BatchDoneReport& report) const {
    if (job.interactive || report.timed_out || report.exit_signal != 0 || !report.error.empty()) {
        return std::nullopt;
    }
    auto listed = [&](const std::vector<int32_t>& codes) {
        return std::find(codes.begin(), codes.end(), report.exit_code) != codes.end();
    };
    if (listed(config_.requeue_exit_hold)) {
        return true;
    }
    if (listed(config_.requeue_exit)) {
        return false;
    }
    return std::nullopt;
}

void Controller::requeue(Job& job,
                         JobState attempt_state,
                         bool hold,
                         const std::string& clean_node) {
    job.requeue_action =
            hold ? protocol::RequeueAction::kRequeueHeld : protocol::RequeueAction::kRequeue;
    end_job(job, attempt_state, clean_node);
}

void Controller::requeue_by_request(Job& job, bool hold) {
    auto warning = parse_warning_signal("--signal", job.spec.signal);
    const bool warned_already = warned_of_requeue(job);
    if (!warning || !warning->at_preemption_only || warning->signal == 0 || warned_already) {
        warned_requeues_.erase(job.job_id);
        requeue(job, JobState::kRequeued, hold, "");  // a second request does not wait
        return;
    }
    // R: signals are for this moment: the job may checkpoint before it is ended.
    warned_requeues_[job.job_id] = {job.restart_count, hold};
    spdlog::info("job {}: requeue: signal {} now, SIGTERM in {} s", job.job_id, warning->signal,
                 config_.kill_wait_s);
    signal_job(job, warning->signal,
               warning->batch_shell_only ? protocol::SignalTarget::kBatchShell
                                         : protocol::SignalTarget::kSteps);
    auto timer = std::make_shared<asio::steady_timer>(strand_,
                                                      std::chrono::seconds(config_.kill_wait_s));
    timer->async_wait([this, timer, id = job.job_id,
                       attempt = job.restart_count](boost::system::error_code ec) {
        if (!ec) {
            finish_warned_requeue(id, attempt);
        }
    });
}

bool Controller::warned_of_requeue(const Job& job) const {
    auto it = warned_requeues_.find(job.job_id);
    return it != warned_requeues_.end() && it->second.attempt == job.restart_count
           && job.state == JobState::kRunning;
}

void Controller::finish_warned_requeue(uint64_t job_id, uint32_t attempt) {
    auto warned = warned_requeues_.find(job_id);
    auto it = jobs_.find(job_id);
    if (warned == warned_requeues_.end() || warned->second.attempt != attempt) {
        return;
    }
    const bool hold = warned->second.hold;
    warned_requeues_.erase(warned);
    if (it != jobs_.end() && it->second.state == JobState::kRunning
        && it->second.restart_count == attempt) {
        requeue(it->second, JobState::kRequeued, hold, "");
    }
}

void Controller::restart_when_clean(Job& job) {
    mail(job, kMailRequeue);
    charge_job(job, job.end_time);
    usage_.forget(job.job_id);
    nodes_.release(job);
    for (protocol::StepRecord& step : steps_.close_all_of(job.job_id)) {
        close_step(step, job.final_state, 0, 0);
    }
    protocol::JobRecord attempt = to_record(job);
    attempt.state = job.final_state;
    attempt.requeue_action = protocol::RequeueAction::kNone;
    attempt.nodes_cleaning.clear();

    const bool hold = job.requeue_action == protocol::RequeueAction::kRequeueHeld;
    job.state = JobState::kPending;
    job.final_state = JobState::kCompleted;
    job.requeue_action = protocol::RequeueAction::kNone;
    ++job.restart_count;
    job.held = job.held || hold;
    job.reason = job.held ? "JobHeldUser" : "None";
    job.eligible_time = 0;  // the next attempt's, from its first offer
    job.start_time = 0;
    job.end_time = 0;
    job.exit_code = 0;
    job.exit_signal = 0;
    job.expected_start = 0;
    job.mem_per_node_mib = 0;
    job.nodes.clear();
    job.tasks_per_node.clear();
    job.cpus_per_node.clear();
    job.gpu_alloc.clear();
    job.usage = {};
    spdlog::info("job {} requeued{} after attempt {} ended {} on {}", job.job_id,
                 hold ? " and held" : "", attempt.restart_count + 1, job_state_name(attempt.state),
                 fmt::join(attempt.nodes, ","));
    // The attempt and the pending job in one transaction: accounting never misses an attempt
    // that the job has moved past.
    changed_since_pass_ = true;
    const uint64_t id = job.job_id;
    writer_.write({JobAttempt{std::move(attempt)}, to_record(job)}, [id](const Status& status) {
        if (!status) {
            spdlog::error("job {}: requeue not stored: {}", id, status.message());
        }
    });
    request_schedule();
}

bool Controller::awaits_lost_node(const Job& job, const std::string& reporting_node) const {
    return std::any_of(job.nodes.begin(), job.nodes.end(), [&](const std::string& name) {
        const NodeEntry* node = nodes_.find(name);
        return name != reporting_node && node != nullptr && !node->responding;
    });
}

void Controller::replay_deferred_reports() {
    std::map<uint64_t, protocol::BatchDoneReport> deferred;
    deferred.swap(deferred_done_);
    for (const auto& [id, report] : deferred) {
        handle_batch_done(report);
    }
}

void Controller::drop_deferred_report(uint64_t job_id) {
    auto it = deferred_done_.find(job_id);
    if (it == deferred_done_.end()) {
        return;
    }
    const std::string node = it->second.node;
    deferred_done_.erase(it);
    after_durable([this, node, job_id] { acknowledge_batch_done(node, job_id); });
}

}  // namespace cohort::ctld
