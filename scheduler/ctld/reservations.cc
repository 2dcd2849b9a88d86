// Advance reservations: create, list and delete them, and which jobs may use them.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

bool may_use_reservation(const protocol::ReservationRecord& reservation,
                         const std::string& user,
                         const std::string& account) {
    return contains(reservation.users, user) || contains(reservation.accounts, account);
}

// Why `node` cannot be reserved for `wanted`: another reservation overlaps on it, or (unless
// ignore_jobs) a job runs there past the reservation's start. Empty when it can.
std::string Controller::reservation_conflict(const protocol::ReservationRecord& wanted,
                                             const std::string& node) const {
    if (std::string overlap = reservations_.overlap_on(wanted, node); !overlap.empty()) {
        return overlap;
    }
    if (wanted.ignore_jobs) {
        return "";
    }
    for (const auto& [id, job] : jobs_) {
        if ((job.state != JobState::kRunning && job.state != JobState::kCompleting)
            || !contains(job.nodes, node)) {
            continue;
        }
        const int64_t end =
                job.time_limit_s < 0 ? sched::kForever : job.start_time + job.time_limit_s;
        if (end > wanted.start_time) {
            return fmt::format(
                    "node {} runs job {} past the reservation's start "
                    "(flags=ignore_jobs reserves it anyway)",
                    node, id);
        }
    }
    return "";
}

void Controller::handle_reservation_create(const ConnectionPtr& conn,
                                           const protocol::Credential& cred,
                                           protocol::ReservationCreateRequest request) {
    protocol::ReservationRecord& r = request.reservation;
    if (!roles_.is_admin(cred.uid)) {
        conn->send_error(
                Status::denied("reservation: only root, the cluster's owner and the config's "
                               "admins may create reservations"));
        return;
    }
    if (r.name.empty() || r.name.find_first_of(" \t,") != std::string::npos) {
        conn->send_error(
                Status::invalid("reservation name: invalid value '" + r.name
                                + "' (accepted: a non-empty name without spaces or commas)"));
        return;
    }
    if (reservations_.find(r.name) != nullptr) {
        conn->send_error(Status::invalid("reservation name: '" + r.name + "' already exists"));
        return;
    }
    const int64_t now = clock_.unix_seconds();
    if (r.end_time <= r.start_time || r.end_time <= now) {
        conn->send_error(Status::invalid("reservation " + r.name
                                         + ": end must be after the start and in the future"));
        return;
    }
    if (r.users.empty() && r.accounts.empty()) {
        conn->send_error(Status::invalid(
                "reservation " + r.name
                + ": users/accounts: none given (accepted: at least one user or account)"));
        return;
    }
    for (const auto& account : r.accounts) {
        if (!config_.policy.accounts.empty() && config_.policy.find_account(account) == nullptr) {
            conn->send_error(Status::invalid("reservation " + r.name
                                             + ": accounts: unknown "
                                               "account '"
                                             + account + "'"));
            return;
        }
    }
    if (r.nodes.empty()) {
        if (request.node_count == 0) {
            conn->send_error(Status::invalid("reservation " + r.name
                                             + ": nodes: give a node list or a node count"));
            return;
        }
        for (const auto& node : nodes_) {
            if (r.nodes.size() < request.node_count
                && reservation_conflict(r, node.info.name).empty()) {
                r.nodes.push_back(node.info.name);
            }
        }
        if (r.nodes.size() < request.node_count) {
            conn->send_error(
                    Status::invalid(fmt::format("reservation {}: node count {}: only {} "
                                                "nodes are free for that window",
                                                r.name, request.node_count, r.nodes.size())));
            return;
        }
    } else {
        for (const auto& name : r.nodes) {
            if (nodes_.find(name) == nullptr) {
                conn->send_error(Status::invalid("reservation " + r.name
                                                 + ": nodes: unknown "
                                                   "node '"
                                                 + name + "'"));
                return;
            }
            if (std::string conflict = reservation_conflict(r, name); !conflict.empty()) {
                conn->send_error(Status::invalid("reservation " + r.name + ": " + conflict));
                return;
            }
        }
    }
    reservations_.put(r);
    writer_.write({StateChange{r}}, [this, conn, r](const Status& status) {
        on_strand([this, conn, r, status] {
            if (!status) {
                reservations_.erase(r.name);
                conn->send_error(status.with_context("storing the reservation"));
                return;
            }
            spdlog::info("reservation {} created on {} nodes", r.name, r.nodes.size());
            conn->send(protocol::ReservationListReply{{r}});
            request_schedule();
        });
    });
}

void Controller::handle_reservation_delete(const ConnectionPtr& conn,
                                           const protocol::Credential& cred,
                                           const std::string& name) {
    if (!roles_.is_admin(cred.uid)) {
        conn->send_error(
                Status::denied("reservation: only root, the cluster's owner and the config's "
                               "admins may delete reservations"));
        return;
    }
    if (reservations_.find(name) == nullptr) {
        conn->send_error(Status::not_found("reservation '" + name + "': no such reservation"));
        return;
    }
    delete_reservation(name, [conn, name](const Status& status) {
        if (!status) {
            conn->send_error(status.with_context("deleting the reservation"));
        } else {
            conn->send(protocol::AckReply{"reservation " + name + " deleted"});
        }
    });
}

void Controller::delete_reservation(const std::string& name,
                                    std::function<void(const Status&)> done) {
    protocol::ReservationRecord removed = *reservations_.find(name);
    reservations_.erase(name);
    writer_.write({StateChange{ReservationDeleted{name}}},
                  [this, removed, done = std::move(done)](const Status& status) {
                      on_strand([this, removed, done, status] {
                          if (!status) {
                              reservations_.put(removed);
                          } else {
                              spdlog::info("reservation {} removed", removed.name);
                              request_schedule();
                          }
                          if (done) {
                              done(status);
                          }
                      });
                  });
}

void Controller::handle_reservation_query(const ConnectionPtr& conn) {
    protocol::ReservationListReply reply;
    for (const auto& [name, r] : reservations_.all()) {
        reply.reservations.push_back(r);
    }
    conn->send(reply);
}

void Controller::expire_reservations(int64_t now) {
    for (const auto& name : reservations_.ended_by(now)) {
        delete_reservation(name, nullptr);
    }
}

}  // namespace cohort::ctld
