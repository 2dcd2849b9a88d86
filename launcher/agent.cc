// Agent links: the controller connection (register, heartbeat, reconnect) and step clients.
#include "launcher/agent.h"

#include <chrono>
#include <csignal>
#include <fstream>

#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"
#include "launcher/gpu_devices.h"

namespace cohort::agent {

uint16_t pick_free_port(asio::io_context& io, const std::string& address) {
    boost::system::error_code ec;
    asio::ip::tcp::acceptor probe(io);
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address(address, ec), 0);
    probe.open(endpoint.protocol(), ec);
    probe.bind(endpoint, ec);
    return ec ? 0 : probe.local_endpoint().port();
}

namespace {

// Unique among the agents of a host, however many local instances run (each node's spool
// directory is its own), and the same across restarts of one agent, which adopts its jobs.
std::string cgroup_dir_name(const AgentOptions& options) {
    uint32_t hash = 2166136261u;  // FNV-1a
    for (unsigned char c : options.spool_dir) {
        hash = (hash ^ c) * 16777619u;
    }
    return fmt::format("cohort_{}_{:08x}", options.name, hash);
}

std::vector<std::string> gpu_bus_ids(const protocol::NodeResources& resources) {
    std::vector<std::string> ids;
    for (const auto& gpu : resources.topology.gpus) {
        ids.push_back(gpu.pci_bus_id);
    }
    return ids;
}

}  // namespace

Agent::Agent(asio::io_context& io,
             const Clock& clock,
             ClusterConfig config,
             std::string key,
             AgentOptions options,
             protocol::NodeResources resources)
    : io_(io),
      clock_(clock),
      config_(std::move(config)),
      key_(std::move(key)),
      auth_(protocol::daemon_frame_auth(config_, key_)),
      options_(std::move(options)),
      cgroups_(config_.cgroup, "/sys/fs/cgroup", cgroup_dir_name(options_), config_.job_pids_max),
      hooks_(io, config_.prolog, config_.epilog, config_.prolog_epilog_timeout_s),
      cpu_ledger_(CpuLedger::own_cores()),
      resources_(resources),
      gpu_files_(gpu_device_files(config_.gpu_device_files, gpu_bus_ids(resources_))),
      self_{static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())},
      boot_time_(std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()),
      acceptor_(io),
      reconnect_timer_(io),
      heartbeat_timer_(io),
      heartbeat_interval_ms_(config_.heartbeat_interval_ms),
      limit_timer_(io),
      child_signals_(io, SIGCHLD),
      controller_dispatcher_(
              [](const Status& why) { spdlog::warn("from the controller: {}", why.message()); },
              [this](std::function<void()> call) { asio::post(io_, std::move(call)); }),
      client_dispatcher_([](const ConnectionPtr& conn, const Status& why) {
          conn->close(why.with_context("node agent"));
      }) {
    register_handlers();
}

Status Agent::start() {
    if (Status listening = transport::listen_on(acceptor_, options_.address, options_.port);
        !listening) {
        return listening.with_context("--address/--port");
    }
    options_.port = acceptor_.local_endpoint().port();
    if (cgroups_.enabled()) {
        spdlog::info("jobs run in cgroups ({})",
                     cgroups_.version() == CgroupVersion::kV1 ? "v1" : "v2");
        // For whoever ends this node's jobs after the agent: `cohort stop` of a local
        // instance kills what is left in them and removes them.
        std::ofstream dirs(options_.spool_dir + "/" + kCgroupDirsFile);
        for (const std::string& dir : cgroups_.bases()) {
            dirs << dir << "\n";
        }
    } else {
        spdlog::warn("jobs run without cgroups: {}", cgroups_.why_disabled());
    }
    adopt_batch_jobs();  // before registering, which lists them as running here
    adopt_steps();
    child_signals_.async_wait([this](const boost::system::error_code& e, int) {
        if (!e) {
            reap_children();
        }
    });
    accept_clients();
    connect_controller();
    spdlog::info("cohortd {} listening on {}:{}", options_.name, options_.address, options_.port);
    return Status::ok();
}

void Agent::stop() {
    stopping_ = true;
    size_t batch_scripts = 0;
    std::set<std::shared_ptr<StepSession>> steps;
    for (const auto& [pid, task] : tasks_) {
        if (task.batch) {
            ++batch_scripts;
        } else if (!task.exited) {
            steps.insert(task.session);
        }
    }
    for (const auto& step : steps) {
        // The client waits for the next agent instead of counting this node lost; the step
        // manager serves the ranks on without its link.
        send_to_client(*step, protocol::StepDetachMessage{step->job_id, step->step_id,
                                                          step->record.node_index});
        if (step->step_manager) {
            step->step_manager->send(protocol::StepdDetachMessage{});
        }
        for (const auto& output : step->outputs) {
            boost::system::error_code ignored;
            output->close(ignored);  // the shepherds hold the pipes for the next agent
        }
        if (step->warning) {
            step->warning->cancel();
        }
    }
    spdlog::info("leaving {} batch jobs and {} steps running for the next cohortd on {}",
                 batch_scripts, steps.size(), options_.name);
    for (auto& [pid, watcher] : adopted_) {
        watcher->cancel();
    }
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    reconnect_timer_.cancel();
    heartbeat_timer_.cancel();
    limit_timer_.cancel();
    child_signals_.cancel();
    if (controller_) {
        controller_->close(Status::ok());
    }
    const auto clients = clients_;  // closing one removes it from clients_
    for (const auto& client : clients) {
        client->close_after_writes();
    }
}

void Agent::connect_controller() {
    // The primary, then each backup in turn: the active one is whichever accepts.
    const std::vector<ControllerAddress> addresses = controller_addresses(config_);
    const ControllerAddress& address = addresses[controller_index_ % addresses.size()];
    transport::async_connect_to(
            io_, address.host, address.port, transport::kControllerConnectTimeout,
            [this, tried = address.host + ":" + std::to_string(address.port),
             count = addresses.size()](Result<asio::ip::tcp::socket> socket) {
                if (!socket) {
                    spdlog::debug("controller {} not reachable: {}", tried,
                                  socket.status().message());
                    // Straight on to the next address; a pause once all were tried.
                    controller_index_ = (controller_index_ + 1) % count;
                    reconnect_timer_.expires_after(
                            std::chrono::milliseconds(controller_index_ == 0 ? 500 : 0));
                    reconnect_timer_.async_wait([this](boost::system::error_code ec) {
                        if (!ec) {
                            connect_controller();
                        }
                    });
                    return;
                }
                on_controller_connected(std::move(*socket));
            });
}

void Agent::on_controller_connected(asio::ip::tcp::socket socket) {
    controller_ = Connection::create(std::move(socket), key_, self_);
    controller_->start(
            [this](const ConnectionPtr&, protocol::Envelope envelope) {
                controller_dispatcher_.dispatch(std::move(envelope));
            },
            [this](const ConnectionPtr&, const Status& why) {
                if (!why.is_ok()) {
                    spdlog::warn("controller connection closed: {}", why.message());
                }
                asio::post(io_, [this] { on_controller_closed(); });
            });
    register_self();
    heartbeat();
}

void Agent::register_self() {
    protocol::RegisterNodeRequest request;
    request.name = options_.name;
    request.address = options_.address;
    request.port = options_.port;
    request.resources = resources_;
    request.boot_time = boot_time_;
    for (const auto& [id, job] : jobs_) {
        if (!job.pids.empty()) {
            request.running_jobs.push_back(id);
        }
    }
    for (const auto& [id, report] : unacked_) {
        request.finished.push_back(report);
    }
    send_controller(request);
}

void Agent::heartbeat() {
    heartbeat_timer_.expires_after(std::chrono::milliseconds(heartbeat_interval_ms_));
    heartbeat_timer_.async_wait([this](boost::system::error_code ec) {
        if (ec || !controller_) {
            return;
        }
        protocol::HeartbeatMessage message;
        message.node = options_.name;
        for (const auto& [id, job] : jobs_) {
            message.running_jobs.push_back(id);
        }
        send_controller(message);
        heartbeat();
    });
}

void Agent::on_controller_closed() {
    if (!controller_ || stopping_) {
        return;
    }
    spdlog::warn("lost the controller connection; reconnecting");
    controller_.reset();
    heartbeat_timer_.cancel();
    reconnect_timer_.expires_after(std::chrono::milliseconds(200));
    reconnect_timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            connect_controller();
        }
    });
}

void Agent::register_handlers() {
    using namespace protocol;
    controller_dispatcher_.on<RegisterNodeReply>([this](const RegisterNodeReply& reply) {
        if (reply.heartbeat_interval_ms > 0
            && reply.heartbeat_interval_ms != heartbeat_interval_ms_) {
            spdlog::info("heartbeat every {} ms, as the controller asks",
                         reply.heartbeat_interval_ms);
            heartbeat_interval_ms_ = reply.heartbeat_interval_ms;
        }
        for (uint64_t id : reply.acknowledged) {
            unacked_.erase(id);
            forget_batch_files(id);
        }
        for (uint64_t id : reply.terminate) {
            auto job = jobs_.find(id);
            terminate_job(id, SIGKILL, job != jobs_.end() ? job->second.attempt : 0);
        }
    });
    controller_dispatcher_.on<LaunchBatchRequest>(
            [this](const LaunchBatchRequest& request) { launch_batch(request); });
    controller_dispatcher_.on<TerminateJobRequest>([this](const TerminateJobRequest& request) {
        terminate_job(request.job_id, request.signal, request.restart_count, request.target);
    });
    controller_dispatcher_.on<JobEndTimeMessage>(
            [this](const JobEndTimeMessage& message) { move_end_time(message); });
    controller_dispatcher_.on<ErrorReply>(
            [](const ErrorReply& error) { spdlog::error("controller: {}", error.message); });

    client_dispatcher_.on<LaunchStepRequest>(
            [this](const ConnectionPtr&, const Credential& sender,
                   const LaunchStepRequest& request) { launch_step(sender, request); });
    client_dispatcher_.on<SignalStepRequest>([this](const ConnectionPtr& conn,
                                                    const Credential& sender,
                                                    const SignalStepRequest& request) {
        if (may_touch_job(conn, sender, request.job_id)) {
            signal_step(request);
        }
    });
    client_dispatcher_.on<TaskInputMessage>([this](const ConnectionPtr& conn,
                                                   const Credential& sender,
                                                   const TaskInputMessage& input) {
        if (may_touch_job(conn, sender, input.job_id)) {
            write_step_input(input);
        }
    });
    client_dispatcher_.on<StepPeersMessage>([this](const ConnectionPtr& conn,
                                                   const Credential& sender,
                                                   const StepPeersMessage& peers) {
        if (may_touch_job(conn, sender, peers.job_id)) {
            forward_step_peers(peers);
        }
    });
    register_step_manager_handlers();
}

bool Agent::may_touch_job(const ConnectionPtr& conn,
                          const protocol::Credential& sender,
                          uint64_t job_id) {
    auto job = jobs_.find(job_id);
    if (sender.uid == 0 || sender.uid == self_.uid || job == jobs_.end() || !job->second.owner_uid
        || *job->second.owner_uid == sender.uid) {
        return true;
    }
    spdlog::warn("job {}: refused uid {} from {}: the job belongs to uid {}", job_id, sender.uid,
                 conn->peer(), *job->second.owner_uid);
    conn->send_error(Status::denied(fmt::format("job {}: belongs to uid {}, not to uid {}", job_id,
                                                *job->second.owner_uid, sender.uid)));
    return false;
}

void Agent::accept_clients() {
    acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
        if (ec) {
            if (ec != asio::error::operation_aborted) {
                accept_clients();
            }
            return;
        }
        auto conn = Connection::create(std::move(socket), auth_, self_);
        clients_.insert(conn);
        conn->start(
                [this](const ConnectionPtr& c, protocol::Envelope envelope) {
                    client_dispatcher_.dispatch(c, std::move(envelope));
                },
                [this](const ConnectionPtr& c, const Status& why) {
                    if (!why.is_ok()) {
                        spdlog::warn("closing connection from {}: {}", c->peer(), why.message());
                    }
                    on_client_closed(c);
                });
        accept_clients();
    });
}

void Agent::on_client_closed(const ConnectionPtr& conn) {
    clients_.erase(conn);
    if (stopping_) {
        return;  // closed by stop(): the steps run on for the next agent
    }
    // A step manager that went away before its ranks started, or a client that went away
    // while its step manager was starting: that step starts no ranks.
    std::vector<StepKey> abandoned;
    for (auto& [key, step] : managed_steps_) {
        if (!step.launched && (step.connection == conn || step.client == conn)) {
            abandoned.push_back(key);
        }
    }
    for (const StepKey& key : abandoned) {
        fail_managed_step(key, "the step's client or step manager closed its connection");
    }
    // A client that goes away mid-step takes its tasks with it (as srun's do).
    for (auto& [pid, task] : tasks_) {
        if (task.session && task.session->client == conn && !task.exited) {
            killpg(pid, SIGKILL);
        }
    }
}

}  // namespace cohort::agent
