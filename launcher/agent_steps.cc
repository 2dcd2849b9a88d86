// Agent step handling: each node's part of a parallel step. For an MPI step the agent first
// starts the step's manager (cohort-stepd, which embeds the PMIx server), then forks the
// local ranks with the variables it returns; for --mpi=none it forks them at once.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/filename_pattern.h"
#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"
#include "common/warning_signal.h"
#include "launcher/agent.h"
#include "launcher/gpu_devices.h"
#include "launcher/task_env.h"

namespace cohort::agent {
namespace {

bool is_loopback(const std::string& address) {
    boost::system::error_code ec;
    auto parsed = asio::ip::make_address(address, ec);
    return !ec && parsed.is_loopback();
}

constexpr auto kStepManagerStartLimit = std::chrono::seconds(30);

// A directory of the step's own in /dev/shm (or the system's temporary directory), owned by
// its user.
Result<std::string> make_shared_memory_dir(const protocol::StepLayout& layout,
                                           const UserIdentity& user) {
    const std::string base = std::filesystem::is_directory("/dev/shm")
                                     ? "/dev/shm"
                                     : std::filesystem::temp_directory_path();
    std::string pattern =
            fmt::format("{}/cohort-{}.{}-XXXXXX", base, layout.job_id, layout.step_id);
    if (mkdtemp(pattern.data()) == nullptr) {
        return Status::io_error("cannot create the shared-memory directory " + pattern);
    }
    if (chown(pattern.c_str(), user.uid, user.gid) != 0) {
        std::filesystem::remove(pattern);
        return Status::io_error(fmt::format("cannot hand {} to uid {}", pattern, user.uid));
    }
    return pattern;
}

}  // namespace

// The names %j, %s, %t, %n, %N, %u, %x expand to in a step's --output/--error patterns.
FilenamePatternContext Agent::step_file_names(const protocol::LaunchStepRequest& request,
                                              uint32_t rank,
                                              const UserIdentity& user) const {
    FilenamePatternContext names;
    names.job_id = request.layout.job_id;
    names.step_id = request.layout.step_id;
    names.job_name = request.layout.job_name;
    names.node_name = options_.name;
    names.node_index = request.node_index;
    names.user = user.name;
    names.task_id = rank;
    names.restart_count = request.layout.restart_count;
    return names;
}

Result<Agent::TaskStreams> Agent::TaskStreams::open(const protocol::LaunchStepRequest& request,
                                                    uint32_t rank,
                                                    const FilenamePatternContext& names,
                                                    SpawnSpec& spec) {
    TaskStreams streams;
    auto make_pipe = [](int& parent, int& child, bool parent_reads) -> bool {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) {
            return false;
        }
        parent = parent_reads ? fds[0] : fds[1];
        child = parent_reads ? fds[1] : fds[0];
        return true;
    };
    bool ok = true;
    if (request.output.empty()) {
        ok = ok && make_pipe(streams.out_read, streams.out_child, true);
    } else {
        spec.stdout_path = path_from(expand_filename_pattern(request.output, names), request.cwd);
    }
    if (!request.error.empty()) {
        spec.stderr_path = path_from(expand_filename_pattern(request.error, names), request.cwd);
    } else if (request.output.empty()) {
        ok = ok && make_pipe(streams.err_read, streams.err_child, true);
    }  // else stderr joins the stdout file
    if (request.stdin_to_rank0 && rank == 0) {
        ok = ok && make_pipe(streams.in_write, streams.in_child, false);
    }
    if (!ok) {
        streams.close_child_ends();
        streams.close_parent_ends();
        return Status::io_error(fmt::format("rank {}: cannot create its pipes", rank));
    }
    spec.stdout_fd = streams.out_child;
    spec.stderr_fd = streams.err_child;
    spec.stdin_fd = streams.in_child;
    return streams;
}

void Agent::TaskStreams::close_child_ends() {
    for (int* fd : {&out_child, &err_child, &in_child}) {
        if (*fd >= 0) {
            close(*fd);
            *fd = -1;
        }
    }
}

void Agent::TaskStreams::close_parent_ends() {
    for (int* fd : {&out_read, &err_read, &in_write}) {
        if (*fd >= 0) {
            close(*fd);
            *fd = -1;
        }
    }
}

void Agent::write_step_input(const protocol::TaskInputMessage& input) {
    for (auto& [pid, task] : tasks_) {
        if (!task.session || task.session->job_id != input.job_id
            || task.session->step_id != input.step_id || !task.session->input) {
            continue;
        }
        StepSession& session = *task.session;
        if (!input.data.empty()) {
            session.pending_input.push_back(input.data);
        }
        session.input_eof = session.input_eof || input.eof;
        if (session.pending_input.size() == (input.data.empty() ? 0u : 1u)) {
            write_next_input(task.session);
        }
        return;
    }
}

void Agent::write_next_input(const std::shared_ptr<StepSession>& session) {
    if (!session->input) {
        return;
    }
    if (session->pending_input.empty()) {
        if (session->input_eof) {
            boost::system::error_code ignored;
            session->input->close(ignored);  // the task reads end-of-file
            session->input.reset();
        }
        return;
    }
    asio::async_write(*session->input, asio::buffer(session->pending_input.front()),
                      [this, session](boost::system::error_code ec, size_t) {
                          if (ec) {  // the task closed its stdin or exited: drop the rest
                              session->pending_input.clear();
                              session->input.reset();
                              return;
                          }
                          session->pending_input.pop_front();
                          write_next_input(session);
                      });
}

void Agent::launch_step(const protocol::Credential& sender,
                        const protocol::LaunchStepRequest& received) {
    protocol::LaunchStepRequest request = received;
    // Who asked: the client itself, or (passed down the tree by a fellow agent) its identity.
    if (!request.forwarded || sender.uid != self_.uid) {
        request.user = sender;
    }
    if (request.node_index == 0 && request.master_port == 0) {
        request.master_port = pick_free_port(io_, options_.address);  // rank 0 binds it
    }
    const protocol::StepAttachMessage attach{request.layout.job_id, request.layout.step_id,
                                             request.node_index};
    call_client_back(request.client_host, request.client_port, attach,
                     [this, request](Result<ConnectionPtr> called_back) {
                         if (!called_back) {
                             spdlog::warn("step {}.{}: {}", request.layout.job_id,
                                          request.layout.step_id, called_back.status().message());
                             return;  // the client names this node when it does not call back
                         }
                         forward_launch(request, *called_back);
                         launch_local_part(request, *called_back);
                     });
}

void Agent::launch_local_part(const protocol::LaunchStepRequest& request,
                              const ConnectionPtr& conn) {
    const protocol::Credential& cred = request.user;
    const protocol::StepLayout& layout = request.layout;
    if (request.node_index >= layout.tasks_per_node.size()) {
        conn->send_error(Status::invalid(
                fmt::format("node index {} is outside the step layout", request.node_index)));
        return;
    }
    // The job whose allocation this node is: in a step across hetjob components, the
    // component's, while the step keeps its leader's name on every node.
    const uint64_t local_job = layout.job_on(request.node_index);
    if (attempt_ended(local_job, layout.restart_count)) {
        conn->send_error(Status::unavailable(
                fmt::format("job {} has ended on {}", local_job, options_.name)));
        return;
    }
    if (auto job = jobs_.find(local_job); job != jobs_.end() && job->second.owner_uid
                                          && *job->second.owner_uid != cred.uid && cred.uid != 0) {
        spdlog::warn("step {}.{}: refused uid {}: the job belongs to uid {}", layout.job_id,
                     layout.step_id, cred.uid, *job->second.owner_uid);
        conn->send_error(Status::denied(fmt::format(
                "job {}: steps may be started only by its owner (uid {}) or root, not uid {}",
                layout.job_id, *job->second.owner_uid, cred.uid)));
        return;
    }
    auto user = job_user(cred.uid, cred.gid);
    if (!user) {
        conn->send_error(user.status());
        return;
    }
    // The job's first process here (a step of a job whose batch script runs elsewhere, or
    // of an allocation) waits for the prolog.
    const JobHookContext context{local_job,
                                 layout.restart_count,
                                 cred.uid,
                                 cred.gid,
                                 user->name,
                                 layout.partition,
                                 compress_hostlist(layout.job_nodes),
                                 layout.cluster_name,
                                 options_.name};
    hooks_.prolog(context, [this, request, conn, user = *user, local_job](const Status& ran) {
        const protocol::StepLayout& step = request.layout;
        if (!ran) {
            report_node_fault(ran, local_job, step.restart_count);
            conn->send_error(Status::unavailable(
                    fmt::format("job {}: {} on {}", local_job, ran.message(), options_.name)));
            return;
        }
        if (attempt_ended(local_job, step.restart_count)) {
            conn->send_error(Status::unavailable(
                    fmt::format("job {} has ended on {}", local_job, options_.name)));
            return;
        }
        const bool switch_user = self_.uid == 0 && request.user.uid != 0;
        if (request.mpi == "none") {
            start_step_tasks(conn, user, switch_user, request, {}, "", nullptr, {});
            return;
        }
        start_step_manager(conn, user, switch_user, request);
    });
}

void Agent::call_client_back(const std::string& host,
                             uint16_t port,
                             const protocol::StepAttachMessage& attach,
                             std::function<void(Result<ConnectionPtr>)> done) {
    const std::string where = fmt::format("cannot call the client back at {}:{}", host, port);
    transport::async_connect_to(
            io_, host, port, transport::kLaunchConnectTimeout,
            [this, attach, where, done = std::move(done)](Result<asio::ip::tcp::socket> socket) {
                if (!socket) {
                    done(socket.status().with_context(where));
                    return;
                }
                // The client holds no key where users' commands use MUNGE.
                auto conn = Connection::create(
                        std::move(*socket),
                        config_.auth == "munge" ? auth_.signing_with_munge() : auth_, self_);
                clients_.insert(conn);
                conn->start(
                        [this](const ConnectionPtr& c, protocol::Envelope envelope) {
                            client_dispatcher_.dispatch(c, std::move(envelope));
                        },
                        [this](const ConnectionPtr& c, const Status&) { on_client_closed(c); });
                conn->send(attach);
                done(conn);
            });
}

void Agent::forward_launch(const protocol::LaunchStepRequest& request,
                           const ConnectionPtr& client) {
    const std::vector<uint32_t>& below = request.forward_to;
    const size_t fanout = std::max<size_t>(config_.launch_fanout, 1);
    const size_t chunk = (below.size() + fanout - 1) / fanout;
    for (size_t first = 0; first < below.size(); first += chunk) {
        const size_t last = std::min(first + chunk, below.size());
        protocol::LaunchStepRequest child = request;
        child.node_index = below[first];
        child.forward_to.assign(below.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                                below.begin() + static_cast<std::ptrdiff_t>(last));
        child.forwarded = true;
        const protocol::StepLayout& layout = request.layout;
        if (child.node_index >= layout.nodes.size()) {
            continue;
        }
        pass_launch_on(std::move(child), client);
    }
}

void Agent::pass_launch_on(protocol::LaunchStepRequest child, const ConnectionPtr& client) {
    // Copied out first: `child` moves into the completion.
    const std::string node = child.layout.nodes[child.node_index];
    const std::string host = child.layout.addresses[child.node_index];
    const uint16_t port = child.layout.ports[child.node_index];
    // Each child is dialled on its own: a dead one delays neither its siblings nor this
    // node's own ranks.
    transport::async_connect_to(
            io_, host, port, transport::kLaunchConnectTimeout,
            [this, child = std::move(child), client, node](Result<asio::ip::tcp::socket> socket) {
                if (!socket) {
                    client->send_error(Status::unavailable("cannot pass the launch on to " + node
                                                           + ": " + socket.status().message()));
                    return;
                }
                auto conn = Connection::create(std::move(*socket), key_, self_);
                conn->start([](const ConnectionPtr&, protocol::Envelope) {},
                            [](const ConnectionPtr&, const Status&) {});
                conn->send(child);
                conn->close_after_writes();
                spdlog::info("step {}.{}: launch passed on to {} ({} nodes below it)",
                             child.layout.job_id, child.layout.step_id, node,
                             child.forward_to.size());
            });
}

void Agent::start_step_manager(const ConnectionPtr& client,
                               const UserIdentity& user,
                               bool switch_user,
                               const protocol::LaunchStepRequest& request) {
    const StepKey key{request.layout.job_id, request.layout.step_id};
    if (managed_steps_.count(key) != 0) {
        client->send_error(Status::invalid(fmt::format("step {}.{} is already launched on {}",
                                                       key.first, key.second, options_.name)));
        return;
    }
    std::vector<std::string> argv{options_.stepd_binary,
                                  "--key-file",
                                  config_.key_file,
                                  "--agent-host",
                                  options_.address,
                                  "--agent-port",
                                  std::to_string(options_.port),
                                  "--job",
                                  std::to_string(key.first),
                                  "--step",
                                  std::to_string(key.second),
                                  "--transport",
                                  request.pmix_transport,
                                  "--fanout",
                                  std::to_string(config_.collective_fanout)};
    // PMI-1/PMI-2: a socket pair per local rank, the rank's end to be its PMI_FD, the other
    // the step manager's; nobody else can reach it.
    std::vector<int> manager_ends;
    std::vector<int> rank_ends;
    if (request.mpi == "pmi1" || request.mpi == "pmi2") {
        const size_t local_ranks =
                request.layout.rank_map().ranks_on_node.at(request.node_index).size();
        for (size_t i = 0; i < local_ranks; ++i) {
            int pair[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
                close_all(manager_ends);
                close_all(rank_ends);
                client->send_error(Status::io_error(std::string("cannot make the ranks' PMI "
                                                                "sockets: ")
                                                    + std::strerror(errno)));
                return;
            }
            manager_ends.push_back(pair[0]);
            rank_ends.push_back(pair[1]);
        }
        std::string list;
        for (int fd : manager_ends) {
            list += (list.empty() ? "" : ",") + std::to_string(fd);
        }
        argv.insert(argv.end(), {"--pmi-fds", list});
    }
    std::vector<char*> args;
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    std::vector<int> keep = manager_ends;  // in the order close_all_but wants
    std::sort(keep.begin(), keep.end());
    pid_t pid = fork();
    if (pid == 0) {
        close_all_but(keep.data(), keep.size(), keep.data(), keep.size());
        execv(args[0], args.data());
        _exit(127);
    }
    close_all(manager_ends);
    if (pid < 0) {
        close_all(rank_ends);
        client->send_error(Status::io_error("cannot start the step manager: fork failed"));
        return;
    }
    ManagedStep& step = managed_steps_[key];
    step.client = client;
    step.request = request;
    step.user = user;
    step.switch_user = switch_user;
    step.pid = pid;
    step.pmi_fds = std::move(rank_ends);
    step.start_timer = std::make_shared<asio::steady_timer>(io_, kStepManagerStartLimit);
    step.start_timer->async_wait([this, key](boost::system::error_code ec) {
        auto it = managed_steps_.find(key);
        if (!ec && it != managed_steps_.end() && !it->second.launched) {
            fail_managed_step(key,
                              fmt::format("the step manager ({}) did not become ready within {} s",
                                          options_.stepd_binary, kStepManagerStartLimit.count()));
        }
    });
}

void Agent::register_step_manager_handlers() {
    using namespace protocol;
    // Step managers hold the cluster key; a user's MUNGE frame cannot pose as one.
    client_dispatcher_.on_daemon<StepdHelloMessage>([this](const ConnectionPtr& conn,
                                                           const StepdHelloMessage& hello) {
        auto it = managed_steps_.find({hello.job_id, hello.step_id});
        if (it == managed_steps_.end() || it->second.connection) {
            conn->close(Status::invalid(fmt::format("no step {}.{} waits for a step manager",
                                                    hello.job_id, hello.step_id)));
            return;
        }
        ManagedStep& step = it->second;
        step.connection = conn;
        step.peer_address = hello.peer_address;
        conn->send(StepdSetupMessage{step.request, step.user.uid, step.user.gid, options_.name});
    });
    client_dispatcher_.on_daemon<StepdReadyMessage>(
            [this](const ConnectionPtr& conn, const StepdReadyMessage& ready) {
                if (ManagedStep* step = managed_step_on(conn)) {
                    on_step_manager_ready(*step, ready);
                }
            });
    // A rank aborted (or the wire-up failed): the client ends the step everywhere.
    client_dispatcher_.on_daemon<StepAbortMessage>(
            [this](const ConnectionPtr& conn, const StepAbortMessage& abort) {
                if (ManagedStep* step = managed_step_on(conn)) {
                    step->client->send(abort);
                }
            });
    // What the MPI library logged through PMIx (Open MPI's error texts).
    client_dispatcher_.on_daemon<TaskOutputMessage>(
            [this](const ConnectionPtr& conn, const TaskOutputMessage& output) {
                if (ManagedStep* step = managed_step_on(conn)) {
                    step->client->send(output);
                }
            });
}

Agent::ManagedStep* Agent::managed_step_on(const ConnectionPtr& conn) {
    auto step = std::find_if(managed_steps_.begin(), managed_steps_.end(),
                             [&](const auto& entry) { return entry.second.connection == conn; });
    if (step == managed_steps_.end()) {
        conn->close(
                Status::invalid("a step manager's message on a connection that is not "
                                "a step manager's"));
        return nullptr;
    }
    return &step->second;
}

void Agent::on_step_manager_ready(ManagedStep& step, const protocol::StepdReadyMessage& ready) {
    const StepKey key{step.request.layout.job_id, step.request.layout.step_id};
    if (!ready.error.empty()) {
        fail_managed_step(key, ready.error);
        return;
    }
    if (attempt_ended(key.first, step.request.layout.restart_count)) {
        fail_managed_step(key, fmt::format("job {} ended meanwhile", key.first));
        return;
    }
    step.launched = true;
    step.start_timer->cancel();
    const int pending_signal = step.pending_signal;
    start_step_tasks(step.client, step.user, step.switch_user, step.request, ready.rank_env,
                     step.peer_address, step.connection, std::exchange(step.pmi_fds, {}));
    if (pending_signal != 0) {
        signal_step({key.first, key.second, pending_signal});
    }
}

void Agent::fail_managed_step(StepKey key, const std::string& error) {
    auto it = managed_steps_.find(key);
    if (it == managed_steps_.end()) {
        return;
    }
    ManagedStep step = std::move(it->second);
    managed_steps_.erase(it);
    close_all(step.pmi_fds);
    spdlog::warn("step {}.{}: {}", key.first, key.second, error);
    if (!step.launched) {
        step.client->send_error(
                Status::unavailable("step manager on " + options_.name + ": " + error));
    }
    if (step.connection) {
        step.connection->close(Status::ok());
    }
    if (step.pid > 0) {
        kill(step.pid, SIGTERM);  // it finalizes PMIx and removes its directories
    }
}

void Agent::on_step_manager_exit(pid_t pid) {
    for (auto& [key, step] : managed_steps_) {
        if (step.pid == pid) {
            step.pid = -1;
            if (!step.launched) {
                fail_managed_step(key,
                                  "the step manager exited before the step started "
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

void Agent::start_step_tasks(
        const ConnectionPtr& conn,
        const UserIdentity& user,
        bool switch_user,
        const protocol::LaunchStepRequest& request,
        const std::vector<std::vector<std::pair<std::string, std::string>>>& rank_env,
        const std::string& peer_address,
        ConnectionPtr step_manager,
        std::vector<int> pmi_fds) {
    const protocol::StepLayout& layout = request.layout;
    protocol::StepLaunchedReply reply;
    reply.master_port = request.master_port;
    reply.peer_address = peer_address;
    auto session = std::make_shared<StepSession>();
    session->client = conn;
    session->job_id = layout.job_id;
    session->step_id = layout.step_id;
    const uint64_t local_job = layout.job_on(request.node_index);
    session->local_job = local_job;
    session->step_manager = std::move(step_manager);
    EnvMap base = env_from_pairs(request.env);
    const bool torch_env =
            base.count("COHORT_TORCH_ENV") == 0 || base.at("COHORT_TORCH_ENV") != "0";
    if (request.mpi != "none" && is_loopback(options_.address)
        && base.count("OMPI_MCA_btl_tcp_if_include") == 0) {
        // Nodes that talk over loopback: Open MPI's TCP transport must not try other NICs.
        base["OMPI_MCA_btl_tcp_if_include"] = "lo";
    }
    if (request.mpi == "none" && is_loopback(options_.address)
        && base.count("OMPI_MCA_btl_vader_backing_directory") == 0) {
        // Open MPI's own daemons (mpirun's orted, started through srun --mpi=none) name their
        // ranks' shared-memory files by host, job and local rank, so two virtual nodes on one
        // host would map each other's; the MPI steps get theirs from the step manager.
        if (auto dir = make_shared_memory_dir(layout, user)) {
            session->shm_dir = *dir;
            base["OMPI_MCA_btl_vader_backing_directory"] = *dir;
        } else {
            spdlog::warn("step {}.{}: {}", layout.job_id, layout.step_id, dir.status().message());
        }
    }
    const std::vector<uint32_t> ranks_here = layout.rank_map().ranks_on_node[request.node_index];
    LocalJob& job = jobs_[local_job];
    job.attempt = std::max(job.attempt, layout.restart_count);
    if (!job.owner_uid && request.user.uid != 0) {  // root may step into any job
        job.owner_uid = request.user.uid;
    }
    if (layout.job_end_time != 0 && !time_limits_.has(local_job)) {
        arm_time_limit(local_job, layout.job_end_time);
    }
    if (layout.job_end_time != 0) {
        arm_warning(local_job, layout.job_signal, layout.job_end_time);
    }
    std::vector<protocol::TaskExitMessage> failures;
    // The step's cgroup, in the job's (made here when no batch script made it).
    std::vector<std::string> cgroup_procs;
    const std::string step_name = std::to_string(layout.step_id);
    const std::vector<int32_t> gpus_here = request.node_index < layout.gpu_nodes.size()
                                                   ? layout.gpu_nodes[request.node_index].alloc.gpus
                                                   : std::vector<int32_t>{};
    Status confined = cgroups_.create(local_job, {}, 0, denied_gpu_rules(gpu_files_, gpus_here));
    if (confined) {
        confined = cgroups_.create_step(local_job, step_name);
    }
    if (!confined) {
        // As Slurm's task/cgroup: no rank runs unconfined, beyond its limits and devices.
        spdlog::error("step {}.{}: cannot confine it in its job's cgroup: {}", layout.job_id,
                      layout.step_id, confined.message());
    } else {
        cgroup_procs = cgroups_.procs_files(local_job, step_name);
    }
    for (uint32_t local = 0; local < ranks_here.size(); ++local) {
        const uint32_t rank = ranks_here[local];
        if (!confined) {
            failures.push_back({rank, 127, 0,
                                fmt::format("rank {} on {}: cannot confine it in its job's "
                                            "cgroup: {}",
                                            rank, options_.name, confined.message())});
            continue;
        }
        TaskContext context{request.node_index,
                            local,
                            rank,
                            reply.master_port,
                            options_.name,
                            torch_env,
                            topology_address(config_.network, options_.name)};
        SpawnSpec spec;
        auto streams = TaskStreams::open(request, rank, step_file_names(request, rank, user), spec);
        if (!streams) {
            failures.push_back({rank, 127, 0, streams.status().message()});
            continue;
        }
        // The task runs under a shepherd, which outlives this agent; the agent opens the
        // status file so that it stays root's while a shepherd running as the user writes it.
        const std::string status_path =
                step_task_status_path(options_.spool_dir, layout.job_id, layout.step_id, rank);
        const int status_fd =
                open(status_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (status_fd < 0) {
            streams->close_child_ends();
            streams->close_parent_ends();
            failures.push_back({rank, 127, 0,
                                fmt::format("rank {} on {}: cannot create {}: {}", rank,
                                            options_.name, status_path, std::strerror(errno))});
            continue;
        }
        spec.argv = {options_.shepherd_binary, "--status-fd", std::to_string(status_fd),
                     "--no-sync"};
        spec.inherit_fds = {status_fd};
        std::string held;  // the read ends the shepherd keeps open while no agent reads them
        for (int fd : {streams->out_read, streams->err_read}) {
            if (fd >= 0) {
                held += (held.empty() ? "" : ",") + std::to_string(fd);
                spec.inherit_fds.push_back(fd);
            }
        }
        if (!held.empty()) {
            spec.argv.insert(spec.argv.end(), {"--hold-fds", held});
        }
        spec.argv.push_back("--");
        const std::vector<std::string> program = request.argv_on(request.node_index);
        spec.argv.insert(spec.argv.end(), program.begin(), program.end());
        EnvMap env = task_environment(layout, context, base);
        if (local < rank_env.size()) {
            for (const auto& [name, value] : rank_env[local]) {
                env[name] = value;
            }
        }
        if (local < pmi_fds.size()) {
            spec.inherit_fds.push_back(pmi_fds[local]);
            env["PMI_FD"] = std::to_string(pmi_fds[local]);
        }
        spec.env = env_to_strings(env);
        spec.cwd = request.cwd;
        spec.user = user;
        spec.switch_user = switch_user;
        spec.cpus = task_cpus(layout, request.node_index, local);
        if (spec.cpus.empty()) {
            spec.cpus = cpu_ledger_.one_thread_per_core(local_job);
        }
        spec.cgroup_procs = cgroup_procs;
        auto spawned = spawn_process(spec);
        streams->close_child_ends();
        close(status_fd);
        if (!spawned) {
            unlink(status_path.c_str());
            streams->close_parent_ends();
            failures.push_back({rank, 127, 0,
                                fmt::format("rank {} on {}: {}", rank, options_.name,
                                            spawned.status().message())});
            continue;
        }
        Task task;
        task.job_id = local_job;
        task.rank = rank;
        task.session = session;
        task.status_path = status_path;
        task.open_streams = (streams->out_read >= 0 ? 1 : 0) + (streams->err_read >= 0 ? 1 : 0);
        session->record.tasks.push_back({rank, spawned->pid, process_start_ticks(spawned->pid),
                                         streams->out_read, streams->err_read});
        tasks_[spawned->pid] = std::move(task);
        job.pids.insert(spawned->pid);
        session->pids.push_back(spawned->pid);
        session->tasks_left++;
        reply.ranks.push_back(rank);
        if (streams->out_read >= 0) {
            watch_output(spawned->pid, streams->out_read, rank, 1, session);
        }
        if (streams->err_read >= 0) {
            watch_output(spawned->pid, streams->err_read, rank, 2, session);
        }
        if (streams->in_write >= 0) {
            session->input =
                    std::make_shared<asio::posix::stream_descriptor>(io_, streams->in_write);
        }
    }
    close_all(pmi_fds);  // the ranks hold their ends now
    if (!request.signal.empty() && layout.job_end_time != 0) {
        // The end this agent was told last: a time limit changed while the step's layout was
        // on its way is newer than the layout's.
        arm_step_warning(session, request.signal,
                         time_limits_.end_of(local_job).value_or(layout.job_end_time));
    }
    conn->send(reply);
    if (session->tasks_left > 0) {
        record_step(*session, request);
    }
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

void Agent::record_step(StepSession& session, const protocol::LaunchStepRequest& request) {
    const protocol::StepLayout& layout = request.layout;
    StepRecord& record = session.record;  // its tasks are in already
    record.job_id = layout.job_id;
    record.step_id = layout.step_id;
    record.local_job = session.local_job;
    record.attempt = layout.restart_count;
    record.node_index = request.node_index;
    record.client_host = request.client_host;
    record.client_port = request.client_port;
    record.owner_uid = request.user.uid;
    record.job_end_time = layout.job_end_time;
    record.job_signal = layout.job_signal;
    record.signal = request.signal;
    record.shm_dir = session.shm_dir;
    if (auto managed = managed_steps_.find({layout.job_id, layout.step_id});
        managed != managed_steps_.end() && managed->second.pid > 0) {
        record.step_manager = managed->second.pid;
        record.step_manager_start = process_start_ticks(managed->second.pid);
    }
    save_step_record(session);
}

void Agent::arm_step_warning(const std::shared_ptr<StepSession>& session,
                             const std::string& spec,
                             int64_t job_end_time) {
    auto warning = parse_warning_signal("--signal", spec);
    if (!warning || warning->signal == 0) {
        return;  // checked by the client
    }
    const int64_t at = job_end_time - warning->seconds_before;
    if (session->warning) {
        session->warning->cancel();  // the job's end moved (move_end_time)
    }
    session->warning_spec = spec;
    session->warning = std::make_shared<asio::steady_timer>(io_);
    session->warning->expires_after(
            std::chrono::seconds(std::max<int64_t>(at - clock_.unix_seconds(), 0)));
    const int signal = warning->signal;
    session->warning->async_wait([this, weak = std::weak_ptr<StepSession>(session),
                                  signal](boost::system::error_code ec) {
        auto step = weak.lock();
        if (ec || !step) {
            return;
        }
        step->warned = true;
        step->record.warned = true;
        save_step_record(*step);
        spdlog::info("step {}.{}: sending its --signal {}", step->job_id, step->step_id,
                     sigabbrev_np(signal));
        for (pid_t pid : step->pids) {
            auto task = tasks_.find(pid);
            if (task != tasks_.end() && !task->second.exited) {
                killpg(pid, signal);
            }
        }
    });
}

void Agent::end_step_session(StepSession& session) {
    if (session.warning) {
        session.warning->cancel();
    }
    // Its tasks are reaped, so their CPU time and peak memory are in the step's cgroup.
    const std::string step_name = std::to_string(session.step_id);
    protocol::JobUsage used = cgroups_.step_usage(session.local_job, step_name);
    used.max_rss_node = options_.name;
    cgroups_.remove_step(session.local_job, step_name);
    send_to_client(session, protocol::StepDoneMessage{session.job_id, session.step_id, used});
    auto managed = managed_steps_.find({session.job_id, session.step_id});
    if (managed != managed_steps_.end()) {
        // The step manager finalizes its PMIx server and exits when its link closes.
        if (managed->second.connection) {
            managed->second.connection->close_after_writes();
        }
        managed_steps_.erase(managed);
    } else if (same_process_running(session.record.step_manager,
                                    session.record.step_manager_start)) {
        kill(session.record.step_manager, SIGTERM);  // an earlier agent's: no link to close
    }
    unlink(step_record_path(options_.spool_dir, session.job_id, session.step_id).c_str());
    for (const StepTaskRecord& task : session.record.tasks) {
        unlink(step_task_status_path(options_.spool_dir, session.job_id, session.step_id, task.rank)
                       .c_str());
    }
    session.step_manager.reset();
    if (!session.shm_dir.empty()) {
        std::error_code ignored;  // what is left there belongs to ranks that are gone
        std::filesystem::remove_all(session.shm_dir, ignored);
    }
}

}  // namespace cohort::agent
