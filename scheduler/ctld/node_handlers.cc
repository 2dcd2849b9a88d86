// Node agents: registration (and reconciliation after a restart), heartbeats, job reports.
#include <algorithm>
#include <csignal>
#include <limits>

#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {

void Controller::handle_register(const ConnectionPtr& conn,
                                 const protocol::RegisterNodeRequest& request) {
    NodeEntry* node = nodes_.find(request.name);
    if (node == nullptr) {
        spdlog::warn("refusing registration of unknown node '{}' from {}", request.name,
                     conn->peer());
        conn->send_error(Status::not_found("node '" + request.name
                                           + "' is not in the cluster configuration"));
        conn->close_after_writes();
        return;
    }
    const bool rebooted = node->registered && node->info.boot_time != request.boot_time;
    node->info.address = request.address;
    node->info.port = request.port;
    node->info.resources = request.resources;
    node->gpu_layout = std::make_shared<const sched::NodeGpuLayout>(
            sched::gpu_layout_of(request.resources.topology));
    if (!request.resources.topology.gpus.empty()) {
        node->info.resources.gpu_type = gpu_type_of(request.resources.topology.gpus.front().model);
    }
    node->info.boot_time = request.boot_time;
    nodes_.heard_from(*node, clock_);
    node->registered = true;
    node->responding = true;
    node->connection = conn;
    const bool in_service = returns_to_service(*node, /*registering=*/true);
    spdlog::info("node {} registered from {}:{} ({} CPUs, {} MiB, {} running jobs{}{})",
                 request.name, request.address, request.port, request.resources.cpus,
                 request.resources.memory_mib, request.running_jobs.size(),
                 rebooted ? ", agent restarted" : "",
                 in_service ? "" : "; stays DOWN until resumed: " + node->info.reason);

    protocol::RegisterNodeReply reply;
    reply.heartbeat_interval_ms = config_.agent_heartbeat_interval_ms();
    for (const auto& report : request.finished) {
        handle_batch_done(report);
    }
    reply.terminate = unknown_jobs(request.name, request.running_jobs);
    // Batch jobs whose script ran here but is gone without a report were lost with the agent.
    for (auto& [id, job] : jobs_) {
        const bool has_script =
                !job.interactive && (!job.is_het_component() || job.is_het_leader());
        bool batch_here = has_script && job.state == JobState::kRunning && !job.nodes.empty()
                          && job.nodes.front() == request.name;
        bool reported = std::any_of(request.finished.begin(), request.finished.end(),
                                    [id = id](const auto& r) { return r.job_id == id; });
        bool running = std::find(request.running_jobs.begin(), request.running_jobs.end(), id)
                       != request.running_jobs.end();
        if (batch_here && !reported && !running) {
            spdlog::warn("job {}: node {} no longer runs its batch script", id, request.name);
            fail_job_on_node(job, request.name);
        }
        // A JobCleaned lost with the old connection: nothing of the job is left here.
        if (job.state == JobState::kCompleting && !running) {
            mark_cleaned(job, request.name);
        }
        // Its time limit may have changed while the agent was away.
        if (job.state == JobState::kRunning && running) {
            conn->send(end_time_of(job));
        }
        // Being ended when its agent restarted: the new agent adopted it and must end it.
        const auto& cleaning = job.nodes_cleaning;
        if (job.state == JobState::kCompleting && running
            && std::find(cleaning.begin(), cleaning.end(), request.name) != cleaning.end()) {
            conn->send(protocol::TerminateJobRequest{id, 0, job.restart_count});
        }
    }
    if (node->info.state == NodeState::kUnknown) {
        node->info.state = NodeState::kIdle;
    }
    refresh_node_state(*node);
    conn->send(reply);
    replay_deferred_reports();
    request_schedule();
}

void Controller::handle_heartbeat(const protocol::HeartbeatMessage& message) {
    NodeEntry* node = nodes_.find(message.node);
    // Heartbeats wait for the tick: one read before its connection closed is older news than
    // the close, whose grace it must not extend.
    if (node == nullptr || !node->registered || !node->connection) {
        return;
    }
    nodes_.heard_from(*node, clock_);
    if (node->info.state == NodeState::kDown && node->connection
        && returns_to_service(*node, /*registering=*/false)) {
        node->responding = true;
        refresh_node_state(*node);
        request_schedule();
    }
    // Jobs ended (or requeued) while the node was away must not go on running there.
    for (uint64_t id : unknown_jobs(message.node, message.running_jobs)) {
        if (node->connection) {
            constexpr uint32_t kEveryAttempt = std::numeric_limits<uint32_t>::max();
            node->connection->send(protocol::TerminateJobRequest{id, SIGKILL, kEveryAttempt});
        }
    }
}

std::vector<uint64_t> Controller::unknown_jobs(const std::string& node,
                                               const std::vector<uint64_t>& running) const {
    auto has = [&node](const std::vector<std::string>& nodes) {
        return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
    };
    std::vector<uint64_t> unknown;
    for (uint64_t id : running) {
        auto it = jobs_.find(id);
        const bool here = it != jobs_.end()
                          && (it->second.state == JobState::kRunning
                                      ? has(it->second.nodes)
                                      : it->second.state == JobState::kCompleting
                                                && has(it->second.nodes_cleaning));
        if (!here) {
            unknown.push_back(id);
        }
    }
    return unknown;
}

namespace {

JobState memory_verdict(const Job& job, JobState ended) {
    // As Slurm does: a job whose processes the kernel killed for its memory limit ended
    // OUT_OF_MEMORY, unless it ended for a reason of its own (time, cancel, node, requeue).
    const bool ran_to_its_end = ended == JobState::kCompleted || ended == JobState::kFailed;
    return ran_to_its_end && job.usage.oom_kills > 0 ? JobState::kOutOfMemory : ended;
}

}  // namespace

void Controller::mark_cleaned(Job& job, const std::string& node) {
    job.nodes_cleaning.erase_if([&](const std::string& name) { return name == node; });
    finish_if_clean(job);
}

void Controller::acknowledge_batch_done(const std::string& node, uint64_t job_id) {
    if (NodeEntry* entry = nodes_.find(node); entry != nullptr && entry->connection) {
        protocol::RegisterNodeReply ack;
        ack.acknowledged = {job_id};
        entry->connection->send(ack);
    }
}

void Controller::handle_batch_done(const protocol::BatchDoneReport& report) {
    // The agent keeps the report until acknowledged, which happens once it is durable.
    auto acknowledge = [this, name = report.node, id = report.job_id] {
        acknowledge_batch_done(name, id);
    };
    auto it = jobs_.find(report.job_id);
    if (it == jobs_.end() || is_final(it->second.state)
        || report.restart_count < it->second.restart_count) {
        acknowledge();  // already final, or an earlier attempt's: a duplicate after a reconnect
        return;
    }
    Job& job = it->second;
    if (job.state == JobState::kRunning && awaits_lost_node(job, report.node)) {
        spdlog::info(
                "job {}: batch script ended ({}:{}) while a node of the job is silent; "
                "waiting for that node",
                job.job_id, report.exit_code, report.exit_signal);
        deferred_done_[job.job_id] = report;
        return;
    }
    job.usage.add(report.usage);
    if (!report.error.empty()) {
        spdlog::warn("job {}: batch script failed to start on {}: {}", job.job_id, report.node,
                     report.error);
        job.reason = report.error;  // shown by cohort show job
    }
    if (job.state == JobState::kRunning) {
        job.exit_code = report.exit_code;
        job.exit_signal = report.exit_signal;
        if (being_preempted(job)) {
            // It ended on its warning signal, as preempted jobs are asked to: requeue now.
            finish_preemption(job.job_id, job.restart_count);
            after_durable(acknowledge);
            return;
        }
        if (warned_of_requeue(job)) {
            // It checkpointed and ended on its R: signal: the requeue asked for goes on.
            finish_warned_requeue(job.job_id, job.restart_count);
            after_durable(acknowledge);
            return;
        }
        if (auto hold = requeue_exit_hold(job, report); hold && under_requeue_cap(job)) {
            spdlog::info("job {}: exit code {} asks for a requeue{}", job.job_id, report.exit_code,
                         *hold ? " and hold" : "");
            requeue(job, JobState::kRequeued, *hold, report.node);
            after_durable(acknowledge);
            return;
        }
        JobState final_state = report.timed_out ? JobState::kTimeout
                               : (report.exit_code != 0 || report.exit_signal != 0)
                                       ? JobState::kFailed
                                       : JobState::kCompleted;
        end_job(job, memory_verdict(job, final_state), report.node);
    } else if (job.state == JobState::kCompleting) {
        if (job.final_state == JobState::kCompleted || job.final_state == JobState::kFailed) {
            job.exit_code = report.exit_code;
            job.exit_signal = report.exit_signal;
        }
        job.final_state = memory_verdict(job, job.final_state);
        mark_cleaned(job, report.node);
        if (job.state == JobState::kCompleting) {
            persist(job);  // the exit code, while other nodes still clean up
        }
    }
    after_durable(acknowledge);
}

void Controller::handle_job_cleaned(const protocol::JobCleanedReport& report) {
    auto it = jobs_.find(report.job_id);
    if (it == jobs_.end() || it->second.state != JobState::kCompleting
        || report.restart_count < it->second.restart_count) {
        return;
    }
    it->second.usage.add(report.usage);
    it->second.final_state = memory_verdict(it->second, it->second.final_state);
    mark_cleaned(it->second, report.node);
}

void Controller::handle_timed_out(const protocol::JobTimedOutReport& report) {
    auto it = jobs_.find(report.job_id);
    if (it == jobs_.end()) {
        return;
    }
    spdlog::info("job {}: time limit reached (reported by {})", report.job_id, report.node);
    if (it->second.state == JobState::kRunning) {
        end_job(it->second, JobState::kTimeout, "");
    } else if (it->second.state == JobState::kCompleting
               && it->second.final_state != JobState::kCancelled) {
        it->second.final_state = JobState::kTimeout;
    }
}

}  // namespace cohort::ctld
