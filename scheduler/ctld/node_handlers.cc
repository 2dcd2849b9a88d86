// Node agents: registration (and reconciliation after a restart), heartbeats, job reports.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "scheduler/ctld/clock.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {

NodeEntry* Controller::find_node(const std::string& name) {
    for (auto& node : nodes_) {
        if (node.info.name == name) {
            return &node;
        }
    }
    return nullptr;
}

void Controller::handle_register(const ConnectionPtr& conn,
        const protocol::RegisterNodeRequest& request) {
    NodeEntry* node = find_node(request.name);
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
    node->info.boot_time = request.boot_time;
    node->info.last_heartbeat = unix_now();
    node->registered = true;
    node->responding = true;
    node->last_heard_ms = steady_ms();
    node->connection = conn;
    node->info.reason.clear();
    spdlog::info("node {} registered from {}:{} ({} CPUs, {} MiB, {} running jobs{})",
            request.name, request.address, request.port, request.resources.cpus,
            request.resources.memory_mib, request.running_jobs.size(),
            rebooted ? ", agent restarted" : "");

    protocol::RegisterNodeReply reply;
    for (const auto& report : request.finished) {
        handle_batch_done(report);
    }
    // Jobs this node runs that the controller has finished or never knew: end them there.
    for (uint64_t id : request.running_jobs) {
        auto it = jobs_.find(id);
        if (it == jobs_.end() || it->second.state == JobState::kPending) {
            reply.terminate.push_back(id);
        }
    }
    // Batch jobs whose script ran here but is gone without a report were lost with the agent.
    for (auto& [id, job] : jobs_) {
        bool batch_here = !job.interactive && job.state == JobState::kRunning
                && !job.nodes.empty() && job.nodes.front() == request.name;
        bool reported = std::any_of(request.finished.begin(), request.finished.end(),
                [id = id](const auto& r) { return r.job_id == id; });
        bool running = std::find(request.running_jobs.begin(), request.running_jobs.end(), id)
                != request.running_jobs.end();
        if (batch_here && !reported && !running) {
            spdlog::warn("job {}: node {} no longer runs its batch script", id, request.name);
            end_job(job, JobState::kNodeFail, "");
        }
    }
    node->info.state = "IDLE";
    conn->send(reply);
    request_schedule();
}

void Controller::handle_heartbeat(const protocol::HeartbeatMessage& message) {
    NodeEntry* node = find_node(message.node);
    if (node == nullptr || !node->registered) {
        return;
    }
    node->last_heard_ms = steady_ms();
    node->info.last_heartbeat = unix_now();
    if (node->info.state == "DOWN" && node->connection) {
        node->info.state = "IDLE";
        node->info.reason.clear();
        node->responding = true;
        request_schedule();
    }
}

void Controller::mark_node_down(NodeEntry& node, const std::string& reason) {
    spdlog::warn("node {} is DOWN: {}", node.info.name, reason);
    node.info.state = "DOWN";
    node.info.reason = reason;
    node.responding = false;
    for (auto& [id, job] : jobs_) {
        if (job.state != JobState::kRunning && job.state != JobState::kCompleting) {
            continue;
        }
        if (std::find(job.nodes.begin(), job.nodes.end(), node.info.name) == job.nodes.end()) {
            continue;
        }
        if (job.state == JobState::kRunning) {
            end_job(job, JobState::kNodeFail, node.info.name);
        } else {
            auto& cleaning = job.nodes_cleaning;
            cleaning.erase(std::remove(cleaning.begin(), cleaning.end(), node.info.name),
                    cleaning.end());
            finish_if_clean(job);
        }
    }
    // end_job/finish_if_clean may have erased jobs_ entries; nothing below touches them.
}

void Controller::handle_batch_done(const protocol::BatchDoneReport& report) {
    // The agent keeps the report until acknowledged, which happens once it is durable.
    auto acknowledge = [this, name = report.node, id = report.job_id] {
        if (NodeEntry* node = find_node(name); node != nullptr && node->connection) {
            protocol::RegisterNodeReply ack;
            ack.acknowledged = {id};
            node->connection->send(ack);
        }
    };
    auto it = jobs_.find(report.job_id);
    if (it == jobs_.end() || is_final(it->second.state)) {
        acknowledge();  // already final: a duplicate report after a reconnect
        return;
    }
    protocol::JobRecord& job = it->second;
    if (!report.error.empty()) {
        spdlog::warn("job {}: batch script failed to start on {}: {}", job.job_id, report.node,
                report.error);
    }
    if (job.state == JobState::kRunning) {
        job.exit_code = report.exit_code;
        job.exit_signal = report.exit_signal;
        JobState final_state = report.timed_out ? JobState::kTimeout
                : (report.exit_code != 0 || report.exit_signal != 0) ? JobState::kFailed
                                                                     : JobState::kCompleted;
        end_job(job, final_state, report.node);
    } else if (job.state == JobState::kCompleting) {
        if (job.final_state == JobState::kCompleted || job.final_state == JobState::kFailed) {
            job.exit_code = report.exit_code;
            job.exit_signal = report.exit_signal;
        }
        auto& cleaning = job.nodes_cleaning;
        cleaning.erase(std::remove(cleaning.begin(), cleaning.end(), report.node),
                cleaning.end());
        finish_if_clean(job);
    }
    persist(job, acknowledge);
}

void Controller::handle_job_cleaned(const protocol::JobCleanedReport& report) {
    auto it = jobs_.find(report.job_id);
    if (it == jobs_.end() || it->second.state != JobState::kCompleting) {
        return;
    }
    auto& cleaning = it->second.nodes_cleaning;
    cleaning.erase(std::remove(cleaning.begin(), cleaning.end(), report.node), cleaning.end());
    finish_if_clean(it->second);
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
