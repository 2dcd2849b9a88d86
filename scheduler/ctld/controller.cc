// Controller plumbing: accept, authenticate, dispatch to the strand, periodic checks.
#include "scheduler/ctld/controller.h"

#include <algorithm>
#include <future>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/clock.h"

namespace cohort::ctld {
namespace {

sched::BackfillOptions backfill_options(const ClusterConfig& config) {
    sched::BackfillOptions options;
    options.policy = config.backfill;
    if (config.backfill_reservations >= 0) {
        options.reservations = static_cast<size_t>(config.backfill_reservations);
    }
    return options;
}

}  // namespace

Controller::Controller(asio::io_context& io,
                       asio::io_context& control,
                       const Clock& clock,
                       ClusterConfig config,
                       std::string key,
                       std::unique_ptr<StateStore> store,
                       std::unique_ptr<accounting::AccountingStore> accounting)
    : io_(io),
      clock_(clock),
      strand_(asio::make_strand(control)),
      dispatcher_([](const ConnectionPtr& conn,
                     const Status& why) { conn->close(why.with_context("controller")); },
                  // Posted, not dispatched on the reading thread: while the strand encodes a
                  // long listing, the connection's thread writes the frames already made
                  // (dispatching saved a futex wake per heartbeat, but made `queue` at
                  // 10,000 jobs 30% slower).
                  [this](std::function<void()> call) { on_strand(std::move(call)); }),
      acceptor_(io),
      tick_(strand_),
      lost_link_timer_(strand_),
      config_(std::move(config)),
      gres_names_(config_.gres_names()),
      auth_(protocol::daemon_frame_auth(config_, std::move(key))),
      self_{static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())},
      roles_(config_, self_.uid),
      accounting_(std::move(accounting)),
      writer_(std::move(store),
              [this](const std::vector<StateChange>& changes) {
                  accounting_.record(accounting_records(changes));
              }),
      nodes_(config_),
      partition_nodes_(index_partitions(config_)),
      network_(sched::build_network(config_.network, config_.nodes)),
      backfill_(backfill_options(config_)),
      usage_(config_.policy.priority.decay_half_life_s),
      priority_(config_) {
    register_handlers();
}

Status Controller::start() {
    Result<StoredState> loaded = Status::internal("not loaded");
    std::promise<void> ready;
    std::vector<protocol::StepRecord> steps;
    std::vector<protocol::JobRecord> depended_on;  // finished jobs pending ones wait for
    writer_.read([&](StateStore& store) {
        loaded = store.load_active();
        if (loaded) {
            std::vector<uint64_t> ids;
            std::vector<uint64_t> dependencies;
            for (const auto& job : loaded->jobs) {
                ids.push_back(job.job_id);
                if (auto dependency = sched::parse_dependency(job.spec.dependency)) {
                    for (const auto& term : dependency->terms) {
                        dependencies.insert(dependencies.end(), term.job_ids.begin(),
                                            term.job_ids.end());
                    }
                }
            }
            if (auto stored = store.query_steps(ids)) {
                steps = std::move(*stored);
            }
            if (!dependencies.empty()) {
                auto stored = store.query_jobs({dependencies, "", 0, {}});
                if (!stored) {
                    loaded = stored.status().with_context(
                            "loading jobs that pending jobs depend on");
                } else {
                    depended_on = std::move(*stored);
                }
            }
        }
        ready.set_value();
    });
    ready.get_future().wait();
    if (!loaded) {
        return loaded.status();
    }
    next_job_id_ = loaded->next_job_id;
    for (auto& reservation : loaded->reservations) {
        reservations_.put(std::move(reservation));
    }
    restore_node_admin(loaded->node_admin);
    for (const auto& job : loaded->jobs) {
        if (!job.is_array_remainder()) {
            jobs_.load(job_from_record(job));
        } else if (auto remainder = remainder_from_record(job)) {
            jobs_.load(std::move(*remainder));
        } else {
            return remainder.status();
        }
    }
    for (const auto& job : depended_on) {
        if (!is_final(job.state)) {
            continue;
        }
        if (!job.is_array_remainder()) {
            jobs_.remember_final(job_from_record(job));
        } else if (auto remainder = remainder_from_record(job)) {
            jobs_.remember_ended(*remainder);
        }
    }
    for (auto& step : steps) {
        if (step.end_time == 0) {
            steps_.open(std::move(step));
        }
    }
    for (const auto& [id, job] : jobs_) {
        if (job.state != JobState::kPending) {
            nodes_.claim(job);
        }
        if (job.state == JobState::kRunning) {
            watch_time_limit(job);
        }
    }
    // Nodes holding jobs get the usual time to re-register before they are declared DOWN.
    for (auto& node : nodes_) {
        node.last_heard_ms = clock_.steady_ms();
    }
    spdlog::info("loaded {} unfinished jobs, {} array remainders, {} reservations, next job id {}",
                 jobs_.size(), jobs_.remainders().size(), reservations_.size(), next_job_id_);
    usage_wait_until_ = clock_.unix_seconds() + kUsageWait_s;
    replay_accounting(clock_.unix_seconds());

    Status listening =
            transport::listen_on(acceptor_, config_.controller_host, config_.controller_port);
    if (!listening) {
        return listening.with_context("controller");
    }
    accept();
    on_strand([this] { on_tick(); });
    spdlog::info("cohortctld listening on {}:{}", config_.controller_host, config_.controller_port);
    if (config_.agent_heartbeat_interval_ms() != config_.heartbeat_interval_ms) {
        spdlog::info(
                "{} nodes heartbeat every {} ms, not {} (max_heartbeats_per_s {}); a node "
                "silent for {} ms is DOWN",
                config_.nodes.size(), config_.agent_heartbeat_interval_ms(),
                config_.heartbeat_interval_ms, config_.max_heartbeats_per_s,
                config_.effective_node_timeout_ms());
    }
    return Status::ok();
}

void Controller::stop() {
    std::promise<void> stopped;
    on_strand([this, &stopped] {
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        tick_.cancel();
        pass_delay_.cancel();
        stopped.set_value();
    });
    stopped.get_future().wait();
    writer_.stop();
    accounting_.stop();
}

void Controller::accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec,
                                                          asio::ip::tcp::socket socket) {
        if (ec) {
            if (ec != asio::error::operation_aborted) {
                spdlog::warn("accept failed: {}", ec.message());
                accept();
            }
            return;
        }
        auto conn = Connection::create(std::move(socket), auth_, self_);
        conn->start([this](const ConnectionPtr& c,
                           protocol::Envelope e) { dispatcher_.dispatch(c, std::move(e)); },
                    [this](const ConnectionPtr& c, const Status& why) {
                        if (!why.is_ok()) {
                            spdlog::warn("closing connection from {}: {}", c->peer(),
                                         why.message());
                        }
                        on_close(c);
                    });
        accept();
    });
}

Status Controller::check_owner(const protocol::Credential& cred, const Job& job) const {
    if (cred.uid == job.uid || roles_.is_operator(cred.uid)) {
        return Status::ok();
    }
    return Status::denied(
            fmt::format("job {}: owned by {}, not by uid {}", job.job_id, job.user_name, cred.uid));
}

// Under private_data: the caller's own name, or, when it asked for other users only, a name
// no job has, so it sees nothing of theirs.
std::vector<std::string> Controller::own_only(const protocol::Credential& cred,
                                              const std::vector<std::string>& asked) {
    const std::string me = user_name_of(cred.uid);
    if (asked.empty() || std::find(asked.begin(), asked.end(), me) != asked.end()) {
        return {me};
    }
    return {"(private)"};
}

void Controller::register_handlers() {
    using namespace protocol;
    // Clients
    dispatcher_.on<SubmitJobRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, SubmitJobRequest m) {
                if (!m.het_components.empty()) {
                    m.het_components.insert(m.het_components.begin(), std::move(m.spec));
                    handle_het_submit(conn, cred, std::move(m.het_components), m.test_only, false);
                } else if (m.test_only) {
                    handle_will_run(conn, cred, std::move(m.spec));
                } else {
                    handle_submit(conn, cred, std::move(m.spec), false);
                }
            });
    dispatcher_.on<AllocateRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, AllocateRequest m) {
                if (!m.het_components.empty()) {
                    m.het_components.insert(m.het_components.begin(), std::move(m.spec));
                    handle_het_submit(conn, cred, std::move(m.het_components), false, true);
                } else {
                    handle_submit(conn, cred, std::move(m.spec), true);
                }
            });
    dispatcher_.on<QueryJobsRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, QueryJobsRequest m) {
                if (roles_.sees_only_own_jobs(cred.uid)) {
                    m.users = own_only(cred, m.users);
                }
                handle_query(conn, m);
            });
    dispatcher_.on<QueryNodesRequest>(
            [this](const ConnectionPtr& conn, const QueryNodesRequest& m) {
                handle_nodes(conn, m);
            });
    dispatcher_.on<JobUpdateRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const JobUpdateRequest& m) {
                handle_update(conn, cred, m);
            });
    dispatcher_.on<JobControlRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const JobControlRequest& m) {
                handle_control(conn, cred, m);
            });
    dispatcher_.on<NodeControlRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const NodeControlRequest& m) {
                handle_node_control(conn, cred, m);
            });
    dispatcher_.on<StepCreateRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const StepCreateRequest& m) {
                handle_step_create(conn, cred, m);
            });
    dispatcher_.on<StepCompleteRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred,
                   const StepCompleteRequest& m) { handle_step_complete(conn, cred, m); });
    dispatcher_.on<JobCompleteRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const JobCompleteRequest& m) {
                handle_job_complete(conn, cred, m);
            });
    // History is read on the state writer's and the accounting thread, not the strand.
    dispatcher_.on_caller<AcctQueryRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, AcctQueryRequest m) {
                if (roles_.sees_only_own_jobs(cred.uid)) {
                    m.users = own_only(cred, m.users);
                }
                handle_acct(conn, m);
            });
    dispatcher_.on<UsageReportRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const UsageReportRequest& m) {
                handle_usage_report(conn, cred, m);
            });
    dispatcher_.on<ShareQueryRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, const ShareQueryRequest&) {
                handle_share(conn, cred);
            });
    dispatcher_.on<PriorityQueryRequest>(
            [this](const ConnectionPtr& conn, const PriorityQueryRequest& m) {
                handle_priority(conn, m);
            });
    dispatcher_.on<ReservationCreateRequest>(
            [this](const ConnectionPtr& conn, const Credential& cred, ReservationCreateRequest m) {
                handle_reservation_create(conn, cred, std::move(m));
            });
    dispatcher_.on<ReservationDeleteRequest>([this](const ConnectionPtr& conn,
                                                    const Credential& cred,
                                                    const ReservationDeleteRequest& m) {
        handle_reservation_delete(conn, cred, m.name);
    });
    dispatcher_.on<ReservationQueryRequest>(
            [this](const ConnectionPtr& conn, const ReservationQueryRequest&) {
                handle_reservation_query(conn);
            });
    // Node agents
    dispatcher_.on_daemon<RegisterNodeRequest>(
            [this](const ConnectionPtr& conn, const RegisterNodeRequest& m) {
                handle_register(conn, m);
            });
    dispatcher_.on_daemon_caller<HeartbeatMessage>(
            [this](const ConnectionPtr&, HeartbeatMessage m) { heartbeats_.add(std::move(m)); });
    dispatcher_.on_daemon<BatchDoneReport>(
            [this](const ConnectionPtr&, const BatchDoneReport& m) { handle_batch_done(m); });
    dispatcher_.on_daemon<JobCleanedReport>(
            [this](const ConnectionPtr&, const JobCleanedReport& m) { handle_job_cleaned(m); });
    dispatcher_.on_daemon<NodeFaultReport>(
            [this](const ConnectionPtr&, const NodeFaultReport& m) { handle_node_fault(m); });
    dispatcher_.on_daemon<JobTimedOutReport>(
            [this](const ConnectionPtr&, const JobTimedOutReport& m) { handle_timed_out(m); });
}

void Controller::on_close(const ConnectionPtr& conn) {
    on_strand([this, conn] {
        for (auto& node : nodes_) {
            if (node.connection == conn) {
                node.connection.reset();
                node.responding = false;
                // The close is the last word heard from it: its grace counts from here.
                node.last_heard_ms = clock_.steady_ms();
                spdlog::info("node {} disconnected", node.info.name);
                lost_link_timer_.expires_after(std::chrono::milliseconds(lost_link_grace_ms() + 1));
                lost_link_timer_.async_wait([this](boost::system::error_code ec) {
                    if (!ec) {
                        mark_lost_links_down(clock_.steady_ms());
                    }
                });
            }
        }
        // A cohort run client that goes away takes its allocation with it.
        for (auto it = job_clients_.begin(); it != job_clients_.end();) {
            if (it->second != conn) {
                ++it;
                continue;
            }
            uint64_t job_id = it->first;
            it = job_clients_.erase(it);
            auto job = jobs_.find(job_id);
            if (job == jobs_.end()) {
                continue;
            }
            spdlog::info("job {}: its client disconnected, cancelling", job_id);
            if (job->second.state == JobState::kPending) {
                // salloc A : B: the components wait with their leader and go with it.
                for (uint32_t offset = 1;
                     job->second.is_het_leader() && offset < job->second.het_size; ++offset) {
                    auto component = jobs_.find(job_id + offset);
                    if (component != jobs_.end() && component->second.state == JobState::kPending) {
                        cancel_pending(component->second, "None");
                    }
                }
                cancel_pending(job->second, "None");  // leaves memory once durable
            } else if (job->second.state == JobState::kRunning) {
                end_job(job->second, JobState::kCancelled, "");
            }
        }
    });
}

void Controller::watch_time_limit(const Job& job) {
    const bool enforced_by_agents =
            !job.interactive && (!job.is_het_component() || job.is_het_leader());
    if (!enforced_by_agents && job.time_limit_s >= 0) {
        watched_ends_.emplace(job.start_time + job.time_limit_s, job.job_id);
    }
}

void Controller::end_jobs_past_their_limit(int64_t now) {
    while (!watched_ends_.empty() && watched_ends_.begin()->first <= now) {
        const uint64_t id = watched_ends_.begin()->second;
        watched_ends_.erase(watched_ends_.begin());
        auto it = jobs_.find(id);
        if (it == jobs_.end() || it->second.state != JobState::kRunning) {
            continue;
        }
        Job& job = it->second;
        // A limit raised or lifted since, or a later attempt: its own entry stands for it.
        if (job.time_limit_s < 0 || job.start_time + job.time_limit_s > now) {
            continue;
        }
        spdlog::info("job {}: time limit reached", job.display_id());
        end_job(job, JobState::kTimeout, "");
    }
}

int64_t Controller::lost_link_grace_ms() const {
    return std::min(config_.effective_node_timeout_ms(),
                    kReconnectGraceIntervals * config_.heartbeat_interval_ms);
}

// A node whose agent's connection closed (the machine or the agent died, or the link was cut)
// goes DOWN after a short grace, the agent's reconnect taking well under one configured
// interval; one that only falls silent, after the node timeout.
void Controller::mark_lost_links_down(int64_t now_ms) {
    const int64_t grace_ms = lost_link_grace_ms();
    for (NodeEntry* node : nodes_.disconnected_nodes(now_ms, grace_ms)) {
        mark_node_down(*node, fmt::format("Not responding: connection lost, not restored "
                                          "within {} ms",
                                          grace_ms));
    }
}

void Controller::on_tick() {
    const int64_t now_ms = clock_.steady_ms();
    // A shared state store ends this controller when it has lost its lock there
    // (PostgresStateStore::fence_if_lost), even while nothing is written.
    if (now_ms >= next_keep_alive_ms_) {
        next_keep_alive_ms_ = now_ms + kKeepAliveInterval_ms;
        writer_.read_committed([](StateStore& store) { (void)store.keep_alive(); });
    }
    for (const protocol::HeartbeatMessage& heartbeat : heartbeats_.take()) {
        handle_heartbeat(heartbeat);
    }
    mark_lost_links_down(now_ms);
    const int64_t node_timeout_ms = config_.effective_node_timeout_ms();
    for (NodeEntry* node : nodes_.silent_nodes(now_ms, node_timeout_ms)) {
        mark_node_down(*node,
                       fmt::format("Not responding: no heartbeat for {} ms", node_timeout_ms));
    }
    const int64_t now = clock_.unix_seconds();
    if (usage_loading_ && now >= usage_wait_until_) {
        usage_loading_ = false;
        spdlog::warn(
                "fair-share usage not read from accounting within {} s; scheduling "
                "with what running jobs charge until it is",
                kUsageWait_s);
    }
    if (usage_retry_at_ != 0 && now >= usage_retry_at_) {
        usage_retry_at_ = 0;
        load_usage_from_accounting(now);
    }
    end_jobs_past_their_limit(now);
    schedule_if_due(now_ms);
    purge_history(now);
    record_node_service(now);
    tick_.expires_after(std::chrono::milliseconds(config_.heartbeat_interval_ms));
    tick_.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            on_tick();
        }
    });
}

void Controller::purge_history(int64_t now) {
    constexpr int64_t kPurgeInterval_s = 3600;
    constexpr size_t kPurgeBatch = 10000;  // one transaction stays short for the writer
    if (config_.purge_jobs_after_days == 0) {
        return;
    }
    if (now >= next_accounting_purge_at_) {
        next_accounting_purge_at_ = now + kPurgeInterval_s;
        purge_accounting(now - config_.purge_jobs_after_days * 86400);
    }
    if (purging_ || now < next_purge_at_) {
        return;
    }
    purging_ = true;
    const int64_t ended_before = now - config_.purge_jobs_after_days * 86400;
    writer_.run_alone([this, now, ended_before](StateStore& store) {
        Status begun = store.begin();
        Result<size_t> purged =
                begun ? store.purge_finished(ended_before, kPurgeBatch) : Result<size_t>(begun);
        Status done = purged ? store.commit() : purged.status();
        if (!done) {
            store.rollback();
        }
        on_strand([this, now, purged, done] {
            purging_ = false;
            if (!done) {
                spdlog::error("purging finished jobs: {}", done.message());
            } else if (*purged > 0) {
                spdlog::info("purged {} finished jobs older than {} days", *purged,
                             config_.purge_jobs_after_days);
            }
            const bool more = done && *purged == kPurgeBatch;
            next_purge_at_ = more ? now : now + kPurgeInterval_s;
        });
    });
}

}  // namespace cohort::ctld
