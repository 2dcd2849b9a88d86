// Agent step handling: each node's part of a parallel step. For an MPI step the agent first
// starts the step's manager (cohort-stepd, which embeds the PMIx server), then forks the
// local ranks with the variables it returns; for --mpi=none it forks them at once.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "launcher/agent.h"
#include "launcher/task_env.h"

namespace cohort::agent {
namespace {

// A port nobody listens on right now, for MASTER_PORT (rank 0 binds it moments later).
uint16_t pick_free_port(asio::io_context& io, const std::string& address) {
    boost::system::error_code ec;
    asio::ip::tcp::acceptor probe(io);
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address(address, ec), 0);
    probe.open(endpoint.protocol(), ec);
    probe.bind(endpoint, ec);
    return ec ? 0 : probe.local_endpoint().port();
}

bool is_loopback(const std::string& address) {
    boost::system::error_code ec;
    auto parsed = asio::ip::make_address(address, ec);
    return !ec && parsed.is_loopback();
}

constexpr auto kStepManagerStartLimit = std::chrono::seconds(30);

}  // namespace

void Agent::launch_step(const ConnectionPtr& conn, const protocol::Credential& cred,
        const protocol::LaunchStepRequest& request) {
    const protocol::StepLayout& layout = request.layout;
    if (ended_jobs_.count(layout.job_id) != 0) {
        conn->send_error(Status::unavailable("job " + std::to_string(layout.job_id)
                + " has ended on " + options_.name));
        return;
    }
    if (request.node_index >= layout.tasks_per_node.size()) {
        conn->send_error(Status::invalid("node index " + std::to_string(request.node_index)
                + " is outside the step layout"));
        return;
    }
    auto user = job_user(cred.uid, cred.gid);
    if (!user) {
        conn->send_error(user.status());
        return;
    }
    const bool switch_user = self_.uid == 0 && cred.uid != 0;
    if (request.mpi == "none") {
        start_step_tasks(conn, *user, switch_user, request, {}, "", nullptr);
        return;
    }
    start_step_manager(conn, *user, switch_user, request);
}

void Agent::start_step_manager(const ConnectionPtr& client, const UserIdentity& user,
        bool switch_user, const protocol::LaunchStepRequest& request) {
    const StepKey key{request.layout.job_id, request.layout.step_id};
    if (managed_steps_.count(key) != 0) {
        client->send_error(Status::invalid("step " + std::to_string(key.first) + "."
                + std::to_string(key.second) + " is already launched on " + options_.name));
        return;
    }
    const std::vector<std::string> argv{options_.stepd_binary, "--key-file", config_.key_file,
            "--agent-host", options_.address, "--agent-port", std::to_string(options_.port),
            "--job", std::to_string(key.first), "--step", std::to_string(key.second),
            "--transport", request.pmix_transport};
    std::vector<char*> args;
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        close_range(3, ~0U, 0);
        execv(args[0], args.data());
        _exit(127);
    }
    if (pid < 0) {
        client->send_error(Status::io_error("cannot start the step manager: fork failed"));
        return;
    }
    ManagedStep& step = managed_steps_[key];
    step.client = client;
    step.request = request;
    step.user = user;
    step.switch_user = switch_user;
    step.pid = pid;
    step.start_timer = std::make_shared<asio::steady_timer>(io_, kStepManagerStartLimit);
    step.start_timer->async_wait([this, key](boost::system::error_code ec) {
        auto it = managed_steps_.find(key);
        if (!ec && it != managed_steps_.end() && !it->second.launched) {
            fail_managed_step(key, "the step manager (" + options_.stepd_binary
                    + ") did not become ready within "
                    + std::to_string(kStepManagerStartLimit.count()) + " s");
        }
    });
}

void Agent::on_step_manager_message(const ConnectionPtr& conn, protocol::Envelope envelope) {
    using protocol::MessageType;
    if (static_cast<MessageType>(envelope.type) == MessageType::kStepdHello) {
        auto hello = protocol::decode_message<protocol::StepdHelloMessage>(envelope);
        if (!hello) {
            conn->close(hello.status());
            return;
        }
        auto it = managed_steps_.find({hello->job_id, hello->step_id});
        if (it == managed_steps_.end() || it->second.connection) {
            conn->close(Status::invalid("no step " + std::to_string(hello->job_id) + "."
                    + std::to_string(hello->step_id) + " waits for a step manager"));
            return;
        }
        ManagedStep& step = it->second;
        step.connection = conn;
        step.peer_address = hello->peer_address;
        conn->send(protocol::StepdSetupMessage{step.request, step.user.uid, step.user.gid,
                options_.name});
        return;
    }
    auto step = std::find_if(managed_steps_.begin(), managed_steps_.end(),
            [&](const auto& entry) { return entry.second.connection == conn; });
    if (step == managed_steps_.end()) {
        conn->close(Status::invalid(std::string("unexpected message ")
                + protocol::message_type_name(envelope.type) + " for a node agent"));
        return;
    }
    switch (static_cast<MessageType>(envelope.type)) {
        case MessageType::kStepdReady: {
            auto ready = protocol::decode_message<protocol::StepdReadyMessage>(envelope);
            if (ready) {
                on_step_manager_ready(step->second, *ready);
            }
            return;
        }
        case MessageType::kStepAbort: {
            // A rank aborted (or the wire-up failed): the client ends the step everywhere.
            auto abort = protocol::decode_message<protocol::StepAbortMessage>(envelope);
            if (abort) {
                step->second.client->send(*abort);
            }
            return;
        }
        case MessageType::kTaskOutput: {
            // What the MPI library logged through PMIx (Open MPI's error texts).
            auto output = protocol::decode_message<protocol::TaskOutputMessage>(envelope);
            if (output) {
                step->second.client->send(*output);
            }
            return;
        }
        default:
            conn->close(Status::invalid(std::string("unexpected message ")
                    + protocol::message_type_name(envelope.type) + " from a step manager"));
    }
}

void Agent::on_step_manager_ready(ManagedStep& step, const protocol::StepdReadyMessage& ready) {
    const StepKey key{step.request.layout.job_id, step.request.layout.step_id};
    if (!ready.error.empty()) {
        fail_managed_step(key, ready.error);
        return;
    }
    step.launched = true;
    step.start_timer->cancel();
    start_step_tasks(step.client, step.user, step.switch_user, step.request, ready.rank_env,
            step.peer_address, step.connection);
}

void Agent::fail_managed_step(StepKey key, const std::string& error) {
    auto it = managed_steps_.find(key);
    if (it == managed_steps_.end()) {
        return;
    }
    ManagedStep step = std::move(it->second);
    managed_steps_.erase(it);
    spdlog::warn("step {}.{}: {}", key.first, key.second, error);
    if (!step.launched) {
        step.client->send_error(Status::unavailable("step manager on " + options_.name + ": "
                + error));
    }
    if (step.connection) {
        step.connection->close(Status::ok());
    }
    if (step.pid > 0) {
        kill(step.pid, SIGKILL);
    }
}

void Agent::on_step_manager_exit(pid_t pid) {
    for (auto& [key, step] : managed_steps_) {
        if (step.pid == pid) {
            step.pid = -1;
            if (!step.launched) {
                fail_managed_step(key, "the step manager exited before the step started "
                        "(see this node's log)");
            }
            return;
        }
    }
}

void Agent::forward_step_peers(const protocol::StepPeersMessage& peers) {
    auto it = managed_steps_.find({peers.job_id, peers.step_id});
    if (it != managed_steps_.end() && it->second.connection) {
        it->second.connection->send(peers);
    }
}

void Agent::start_step_tasks(const ConnectionPtr& conn, const UserIdentity& user,
        bool switch_user, const protocol::LaunchStepRequest& request,
        const std::vector<std::vector<std::pair<std::string, std::string>>>& rank_env,
        const std::string& peer_address, ConnectionPtr step_manager) {
    const protocol::StepLayout& layout = request.layout;
    protocol::StepLaunchedReply reply;
    reply.master_port = request.master_port;
    reply.peer_address = peer_address;
    if (request.node_index == 0 && reply.master_port == 0) {
        reply.master_port = pick_free_port(io_, options_.address);
    }
    auto session = std::make_shared<StepSession>();
    session->client = conn;
    session->job_id = layout.job_id;
    session->step_id = layout.step_id;
    session->step_manager = std::move(step_manager);
    EnvMap base = env_from_pairs(request.env);
    const bool torch_env = base.count("COHORT_TORCH_ENV") == 0
            || base.at("COHORT_TORCH_ENV") != "0";
    if (request.mpi != "none" && is_loopback(options_.address)
            && base.count("OMPI_MCA_btl_tcp_if_include") == 0) {
        // Nodes that talk over loopback: Open MPI's TCP transport must not try other NICs.
        base["OMPI_MCA_btl_tcp_if_include"] = "lo";
    }
    const uint32_t local_tasks = layout.tasks_per_node[request.node_index];
    const uint32_t first_rank = first_rank_on(layout, request.node_index);
    LocalJob& job = jobs_[layout.job_id];
    if (layout.job_end_time != 0 && !job.limit_timer) {
        arm_time_limit(layout.job_id, layout.job_end_time);
    }
    std::vector<protocol::TaskExitMessage> failures;
    for (uint32_t local = 0; local < local_tasks; ++local) {
        const uint32_t rank = first_rank + local;
        TaskContext context{request.node_index, local, rank, reply.master_port, options_.name,
                torch_env};
        int out[2];
        int err[2];
        if (pipe2(out, O_CLOEXEC) != 0) {
            failures.push_back({rank, 127, 0, "cannot create output pipes"});
            continue;
        }
        if (pipe2(err, O_CLOEXEC) != 0) {
            close(out[0]);
            close(out[1]);
            failures.push_back({rank, 127, 0, "cannot create output pipes"});
            continue;
        }
        EnvMap env = task_environment(layout, context, base);
        if (local < rank_env.size()) {
            for (const auto& [name, value] : rank_env[local]) {
                env[name] = value;
            }
        }
        SpawnSpec spec;
        spec.argv = request.argv;
        spec.env = env_to_strings(env);
        spec.cwd = request.cwd;
        spec.user = user;
        spec.switch_user = switch_user;
        spec.stdout_fd = out[1];
        spec.stderr_fd = err[1];
        spec.cpus = task_cpus(layout, request.node_index, local);
        auto spawned = spawn_process(spec);
        close(out[1]);
        close(err[1]);
        if (!spawned) {
            close(out[0]);
            close(err[0]);
            failures.push_back({rank, 127, 0,
                    "rank " + std::to_string(rank) + " on " + options_.name + ": "
                            + spawned.status().message()});
            continue;
        }
        Task task;
        task.job_id = layout.job_id;
        task.rank = rank;
        task.session = session;
        task.open_streams = 2;
        tasks_[spawned->pid] = std::move(task);
        job.pids.insert(spawned->pid);
        session->pids.push_back(spawned->pid);
        session->tasks_left++;
        reply.ranks.push_back(rank);
        watch_output(spawned->pid, out[0], rank, 1, session);
        watch_output(spawned->pid, err[0], rank, 2, session);
    }
    conn->send(reply);
    for (const auto& failure : failures) {
        conn->send(failure);
    }
    if (!failures.empty()) {
        for (pid_t pid : session->pids) {
            killpg(pid, SIGKILL);  // a step with a rank that cannot start cannot run
        }
    }
    if (session->tasks_left == 0) {
        end_step_session(*session);
    }
}

void Agent::end_step_session(StepSession& session) {
    session.client->send(protocol::StepDoneMessage{session.job_id, session.step_id});
    auto managed = managed_steps_.find({session.job_id, session.step_id});
    if (managed != managed_steps_.end()) {
        // The step manager finalizes its PMIx server and exits when its link closes.
        if (managed->second.connection) {
            managed->second.connection->close_after_writes();
        }
        managed_steps_.erase(managed);
    }
    session.step_manager.reset();
}

}  // namespace cohort::agent
