// Nodes in operators' hands: drain, down and resume (cohort node, scontrol update
// nodename=...), the reasons sinfo -R lists, and whether a DOWN node that comes back serves
// again (return_to_service).
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/hostlist.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {
namespace {

// Who set the reason of a DOWN the controller decided (Slurm shows its SlurmUser).
constexpr const char* kControllerUser = "cohort";

const char* action_verb(protocol::NodeAction action) {
    switch (action) {
        case protocol::NodeAction::kDrain:
            return "drain";
        case protocol::NodeAction::kDown:
            return "down";
        case protocol::NodeAction::kResume:
            return "resume";
    }
    return "change";
}

protocol::NodeAdminRecord admin_record(const NodeEntry& node) {
    return {node.info.name,   node.info.drain,       node.held_down,
            node.info.reason, node.info.reason_user, node.info.reason_time};
}

}  // namespace

void Controller::handle_node_control(const ConnectionPtr& conn,
                                     const protocol::Credential& cred,
                                     const protocol::NodeControlRequest& request) {
    const char* verb = action_verb(request.action);
    if (!roles_.is_admin(cred.uid)) {
        conn->send_error(Status::denied(
                fmt::format("node: uid {} may not {} nodes (accepted: root, the cluster's owner "
                            "and the config's admins)",
                            cred.uid, verb)));
        return;
    }
    if (request.nodes.empty()) {
        conn->send_error(Status::invalid(
                "node: missing node names (accepted: names or a hostlist such as node[1-4])"));
        return;
    }
    if (request.action != protocol::NodeAction::kResume && request.reason.empty()) {
        conn->send_error(Status::invalid(fmt::format(
                "reason: missing (a reason is required to {} a node: --reason TEXT)", verb)));
        return;
    }
    // Every node is checked before any changes.
    std::vector<NodeEntry*> targets;
    for (const auto& name : request.nodes) {
        NodeEntry* node = nodes_.find(name);
        if (node == nullptr) {
            conn->send_error(
                    Status::not_found(fmt::format("node {}: not in the cluster (accepted: {})",
                                                  name, compress_hostlist(config_.nodes))));
            return;
        }
        const bool out_of_service = node->info.drain || node->info.state == NodeState::kDown;
        if (request.action == protocol::NodeAction::kResume && !out_of_service) {
            conn->send_error(Status::invalid(
                    fmt::format("node {}: an {} node cannot be resumed (accepted: DOWN, DRAINED "
                                "or DRAINING nodes)",
                                name, node_state_name(node->info.state))));
            return;
        }
        targets.push_back(node);
    }
    std::vector<StateChange> changes;
    for (NodeEntry* node : targets) {
        switch (request.action) {
            case protocol::NodeAction::kDrain:
                node->info.drain = true;
                set_node_reason(*node, request.reason, user_name(cred.uid));
                break;
            case protocol::NodeAction::kDown:
                set_node_reason(*node, request.reason, user_name(cred.uid));
                take_node_down(*node, /*held=*/true, /*lost=*/false);
                break;
            case protocol::NodeAction::kResume:
                resume_node(*node);
                break;
        }
        spdlog::info("node {}: {} by {}{}", node->info.name, verb, user_name(cred.uid),
                     request.reason.empty() ? "" : ": " + request.reason);
        changes.emplace_back(admin_record(*node));
    }
    request_schedule();
    writer_.write(std::move(changes), [this, conn, count = targets.size()](const Status& status) {
        on_strand([conn, count, status] {
            if (!status) {
                conn->send_error(status.with_context("storing the node states"));
                return;
            }
            conn->send(protocol::AckReply{fmt::format("{} node(s) updated", count)});
        });
    });
}

void Controller::handle_node_fault(const protocol::NodeFaultReport& report) {
    NodeEntry* node = nodes_.find(report.node);
    if (node == nullptr) {
        return;
    }
    spdlog::warn("node {}: drained by its agent: {}", report.node, report.reason);
    node->info.drain = true;
    set_node_reason(*node, report.reason, kControllerUser);
    store_node_admin(*node);
    auto job = jobs_.find(report.job_id);
    if (job != jobs_.end() && job->second.restart_count == report.restart_count) {
        // Its processes never started there: requeued (avoiding the node) as after a loss.
        fail_job_on_node(job->second, report.node, /*lost=*/false);
    }
    request_schedule();
}

void Controller::set_node_reason(NodeEntry& node,
                                 const std::string& reason,
                                 const std::string& user) {
    node.info.reason = reason;
    node.info.reason_user = user;
    node.info.reason_time = clock_.unix_seconds();
}

void Controller::take_node_down(NodeEntry& node, bool held, bool lost) {
    node.info.state = NodeState::kDown;
    node.held_down = held;
    if (lost) {
        node.responding = false;
    }
    for (auto& [id, job] : jobs_) {
        if ((job.state != JobState::kRunning && job.state != JobState::kCompleting)
            || std::find(job.nodes.begin(), job.nodes.end(), node.info.name) == job.nodes.end()) {
            continue;
        }
        if (job.state == JobState::kRunning) {
            fail_job_on_node(job, node.info.name, lost);
        } else if (lost) {
            mark_cleaned(job, node.info.name);
        }
    }
    // end_job/finish_if_clean may have erased jobs_ entries; nothing below touches them.
}

void Controller::resume_node(NodeEntry& node) {
    node.info.drain = false;
    node.held_down = false;
    node.info.reason.clear();
    node.info.reason_user.clear();
    node.info.reason_time = 0;
    if (node.info.state != NodeState::kDown) {
        return;
    }
    if (node.registered && node.connection) {
        node.info.state = NodeState::kIdle;
        node.responding = true;
        refresh_node_state(node);
    } else {
        // It serves again once its agent registers.
        set_node_reason(node, "Not responding: resumed, waiting for its agent to register",
                        kControllerUser);
    }
}

void Controller::mark_node_down(NodeEntry& node, const std::string& reason) {
    spdlog::warn("node {} is DOWN: {}", node.info.name, reason);
    const bool held = config_.return_to_service == 0;
    if (!node.info.drain) {
        set_node_reason(node, reason, kControllerUser);  // an operator's drain reason stays
    }
    take_node_down(node, held, /*lost=*/true);
    if (held) {
        store_node_admin(node);
    }
}

void Controller::store_node_admin(const NodeEntry& node) {
    writer_.write({StateChange{admin_record(node)}}, [name = node.info.name](const Status& s) {
        if (!s) {
            spdlog::error("node {}: state not stored: {}", name, s.message());
        }
    });
}

bool Controller::returns_to_service(NodeEntry& node, bool registering) {
    if (node.info.state != NodeState::kDown) {
        return true;
    }
    if (node.held_down && !(registering && config_.return_to_service == 2)) {
        return false;
    }
    spdlog::info("node {} returns to service{}", node.info.name,
                 node.held_down ? " (return_to_service=2)" : "");
    const bool was_held = node.held_down;
    node.held_down = false;
    node.info.state = NodeState::kIdle;
    if (!node.info.drain) {
        node.info.reason.clear();
        node.info.reason_user.clear();
        node.info.reason_time = 0;
    }
    if (was_held) {
        store_node_admin(node);
    }
    return true;
}

void Controller::restore_node_admin(const std::vector<protocol::NodeAdminRecord>& records) {
    for (const auto& record : records) {
        NodeEntry* node = nodes_.find(record.name);
        if (node == nullptr) {
            continue;  // no longer configured
        }
        node->info.drain = record.drain;
        node->held_down = record.held_down;
        node->info.reason = record.reason;
        node->info.reason_user = record.reason_user;
        node->info.reason_time = record.reason_time;
        if (record.held_down) {
            node->info.state = NodeState::kDown;
        }
    }
}

}  // namespace cohort::ctld
