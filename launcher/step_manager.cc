// The step manager: PMIx server set-up, the rank variables, and the step's collectives.
#include "launcher/step_manager.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"

namespace cohort::stepd {
namespace {

namespace fs = std::filesystem;

bool has_var(const protocol::LaunchStepRequest& launch, const std::string& name) {
    return std::any_of(launch.env.begin(), launch.env.end(),
                       [&](const auto& pair) { return pair.first == name; });
}

// Open MPI's MCA booleans: 1/true/yes/enabled (or their opposites), any case.
std::optional<bool> mca_flag(const protocol::LaunchStepRequest& launch, const std::string& name) {
    for (const auto& [var, value] : launch.env) {
        if (var != name) {
            continue;
        }
        std::string v = value;
        std::transform(v.begin(), v.end(), v.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        if (v == "1" || v == "t" || v == "true" || v == "y" || v == "yes" || v == "enabled") {
            return true;
        }
        if (v == "0" || v == "f" || v == "false" || v == "n" || v == "no" || v == "disabled") {
            return false;
        }
    }
    return std::nullopt;
}

// Ranks that skip the wire-up fence (Open MPI's async modex without data collection) fetch
// each peer's data on first touch, racing their local peers' commits. OpenPMIx 4.2's
// shared-memory store (gds ds21/ds12) loses that race now and then: the server answers a
// get for a local peer's key that is being committed with NOT_FOUND, and MPI_Init fails
// with "PML add procs failed: Not found" (about one run in fifteen on a loaded 2-core
// host; none in 80 with the hash store). The hash store answers every such get from the
// server, after the commit.
bool skips_the_modex_fence(const protocol::LaunchStepRequest& launch) {
    return mca_flag(launch, "OMPI_MCA_pmix_base_async_modex").value_or(false)
           && !mca_flag(launch, "OMPI_MCA_pmix_base_collect_data").value_or(true);
}

}  // namespace

StepManager::StepManager(asio::io_context& io, std::string key, StepManagerOptions options)
    : io_(io),
      key_(std::move(key)),
      options_(std::move(options)),
      self_{static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())},
      agent_dispatcher_([](const Status& why) {
          spdlog::warn("step manager: from the agent: {}", why.message());
      }),
      peer_dispatcher_([](const Status& why) {
          spdlog::warn("step manager: from a peer: {}", why.message());
      }),
      pmi_acceptor_(io) {
    register_agent_handlers();
    register_peer_handlers();
}

StepManager::~StepManager() {
    server_.reset();  // deregisters and finalizes before the directories go
    std::error_code ignored;
    for (const auto& dir : {tmpdir_, shm_dir_}) {
        if (!dir.empty()) {
            fs::remove_all(dir, ignored);
        }
    }
}

Status StepManager::start() {
    pmix::TransportHandlers handlers{
            [this](protocol::Envelope envelope) { peer_dispatcher_.dispatch(std::move(envelope)); },
            [this](uint32_t node, const std::string& why) {
                abort_step(-1, 1,
                           "the step manager on " + setup_.launch.layout.nodes.at(node)
                                   + " cannot be reached: " + why);
            }};
    auto peers =
            options_.transport == "ucx"
                    ? pmix::make_ucx_transport(io_, key_, std::move(handlers))
                    : pmix::make_tcp_transport(io_, key_, options_.agent_host, std::move(handlers));
    if (!peers) {
        return peers.status();
    }
    peers_ = std::move(*peers);
    transport::async_connect_to(
            io_, options_.agent_host, options_.agent_port, transport::kLocalAgentConnectTimeout,
            [this](Result<asio::ip::tcp::socket> socket) {
                if (!socket) {
                    spdlog::error(
                            "step {}.{}: {}", options_.job_id, options_.step_id,
                            socket.status().with_context("cannot reach the node agent").message());
                    exit_code_ = 1;
                    shut_down();
                    return;
                }
                on_agent_connected(std::move(*socket));
            });
    return Status::ok();
}

void StepManager::on_agent_connected(asio::ip::tcp::socket socket) {
    agent_ = transport::Connection::create(std::move(socket), key_, self_);
    agent_->start(
            [this](const ConnectionPtr&, protocol::Envelope envelope) {
                agent_dispatcher_.dispatch(std::move(envelope));
            },
            [this](const ConnectionPtr&, const Status&) {
                if (agent_detached_) {
                    // Its agent restarts; the next one ends the step with SIGTERM.
                    spdlog::info("step {}.{}: the node agent stopped; serving the ranks on",
                                 options_.job_id, options_.step_id);
                    return;
                }
                shut_down();
            });
    agent_->send(protocol::StepdHelloMessage{options_.job_id, options_.step_id,
                                             peers_->local_address()});
}

void StepManager::shut_down() {
    boost::system::error_code ignored;
    pmi_acceptor_.close(ignored);
    io_.stop();
}

void StepManager::register_agent_handlers() {
    agent_dispatcher_.on<protocol::StepdSetupMessage>(
            [this](const protocol::StepdSetupMessage& setup) { set_up(setup); });
    agent_dispatcher_.on<protocol::StepdDetachMessage>(
            [this](const protocol::StepdDetachMessage&) { agent_detached_ = true; });
    agent_dispatcher_.on<protocol::StepPeersMessage>(
            [this](const protocol::StepPeersMessage& peers) {
                if (have_peers_) {
                    return;
                }
                peers_->set_peers(peers.peers);
                have_peers_ = true;
                auto waiting = std::move(waiting_for_peers_);
                for (auto& [node, frame] : waiting) {
                    peers_->send(node, std::move(frame));
                }
            });
}

void StepManager::set_up(const protocol::StepdSetupMessage& setup) {
    setup_ = setup;
    ranks_ = setup_.launch.layout.rank_map();
    // The step may shorten the fence timeout (as SLURM_PMIX_TIMEOUT does for srun).
    for (const auto& [name, value] : setup_.launch.env) {
        if (name == "COHORT_PMIX_TIMEOUT" || name == "SLURM_PMIX_TIMEOUT") {
            const long seconds = std::strtol(value.c_str(), nullptr, 10);
            if (seconds > 0) {
                options_.fence_timeout = std::chrono::seconds(seconds);
            }
        }
    }
    auto ready = prepare_ranks();
    if (!ready) {
        protocol::StepdReadyMessage failed;
        failed.error = ready.status().message();
        agent_->send(failed);
        return;
    }
    agent_->send(*ready);
}

Result<protocol::StepdReadyMessage> StepManager::prepare_ranks() {
    const protocol::LaunchStepRequest& launch = setup_.launch;
    const protocol::StepLayout& layout = launch.layout;
    const std::string step = std::to_string(layout.job_id) + "." + std::to_string(layout.step_id);
    // Short and per step: the PMIx rendezvous files live here (AF_UNIX path limit).
    std::string pattern = "/tmp/cohort-pmix-" + step + "-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
        return Status::io_error("cannot create the PMIx directory " + pattern);
    }
    tmpdir_ = pattern;
    const std::string session_dir = tmpdir_ + "/session";
    fs::create_directories(session_dir);
    const bool other_user = getuid() == 0 && setup_.uid != 0;
    if (other_user) {
        for (const auto& dir : {tmpdir_, session_dir}) {
            if (chown(dir.c_str(), setup_.uid, setup_.gid) != 0) {
                return Status::io_error(fmt::format("cannot hand {} to uid {}", dir, setup_.uid));
            }
        }
    }
    collectives_ = std::make_unique<pmix::TreeCollectives>(launch.node_index, options_.fanout);
    nspace_ = "cohort." + step;
    if (launch.mpi == "pmi1" || launch.mpi == "pmi2") {
        return prepare_pmi_ranks(launch.mpi == "pmi2");
    }
    return prepare_pmix_ranks(session_dir, other_user);
}

Result<protocol::StepdReadyMessage> StepManager::prepare_pmix_ranks(const std::string& session_dir,
                                                                    bool other_user) {
    const protocol::LaunchStepRequest& launch = setup_.launch;
    const protocol::StepLayout& layout = launch.layout;
    const std::string step = std::to_string(layout.job_id) + "." + std::to_string(layout.step_id);
    pmix::ServerOptions server_options;
    server_options.tmpdir = tmpdir_;
    server_options.node_name = setup_.node_name;
    server_options.node_index = launch.node_index;
    server_options.set_user = other_user;
    server_options.uid = setup_.uid;
    server_options.gid = setup_.gid;
    auto server = pmix::Server::start(server_options, io_.get_executor(), *this);
    if (!server) {
        return server.status();
    }
    server_ = std::move(*server);
    // Shared-memory segments belong in memory: /dev/shm where there is one.
    std::string shm_pattern =
            (fs::is_directory("/dev/shm") ? "/dev/shm" : tmpdir_) + "/cohort-" + step + "-XXXXXX";
    if (mkdtemp(shm_pattern.data()) == nullptr) {
        return Status::io_error("cannot create the shared-memory directory " + shm_pattern);
    }
    shm_dir_ = shm_pattern;
    if (other_user && chown(shm_dir_.c_str(), setup_.uid, setup_.gid) != 0) {
        return Status::io_error(fmt::format("cannot hand {} to uid {}", shm_dir_, setup_.uid));
    }

    pmix::NamespaceLayout ns;
    ns.nspace = nspace_;
    ns.job_id = step;
    ns.nodes = layout.nodes;
    ns.ranks_on_node = ranks_.ranks_on_node;
    ns.this_node = launch.node_index;
    ns.job_tmpdir = session_dir;
    ns.step_tmpdir = session_dir;
    if (Status registered = server_->register_namespace(ns); !registered) {
        return registered;
    }

    protocol::StepdReadyMessage ready;
    const std::vector<uint32_t>& local_ranks = ranks_.ranks_on_node.at(launch.node_index);
    // A client asks for the store its PMIX_GDS_MODULE names; the server then keeps the
    // namespace's data there. The user's own PMIX_MCA_gds wins.
    const bool hash_store = skips_the_modex_fence(launch) && !has_var(launch, "PMIX_MCA_gds");
    if (hash_store) {
        spdlog::info("step {}: ranks skip the modex fence: PMIx data kept in the hash store", step);
    }
    for (uint32_t local = 0; local < local_ranks.size(); ++local) {
        auto vars = server_->prepare_rank(nspace_, local_ranks[local], setup_.uid, setup_.gid);
        if (!vars) {
            return vars.status();
        }
        if (hash_store) {
            for (auto& [name, value] : *vars) {
                if (name == "PMIX_GDS_MODULE") {
                    value = "hash";
                }
            }
        }
        // Open MPI keeps shared-memory segments per (host, job, local rank): two virtual
        // nodes on one host would collide without a directory of their own.
        if (!has_var(launch, "OMPI_MCA_btl_vader_backing_directory")) {
            vars->emplace_back("OMPI_MCA_btl_vader_backing_directory", shm_dir_);
        }
        ready.rank_env.push_back(std::move(*vars));
    }
    spdlog::info("step {}: PMIx namespace {} ready for {} local ranks", step, nspace_,
                 ready.rank_env.size());
    return ready;
}

void StepManager::register_peer_handlers() {
    peer_dispatcher_.on<protocol::CollectiveMessage>(
            [this](const protocol::CollectiveMessage& message) {
                if (collectives_) {
                    apply(collectives_->receive(message));
                }
            });
    peer_dispatcher_.on<protocol::DirectModexRequestMessage>(
            [this](const protocol::DirectModexRequestMessage& request) {
                answer_modex_request(request);
            });
    peer_dispatcher_.on<protocol::DirectModexReplyMessage>(
            [this](protocol::DirectModexReplyMessage reply) {
                auto it = modex_requests_.find(reply.request_id);
                if (it != modex_requests_.end()) {
                    PendingFence request = std::move(it->second);
                    modex_requests_.erase(it);
                    request.timer->cancel();
                    request.done(reply.status, std::move(reply.data));
                }
            });
}

void StepManager::answer_modex_request(const protocol::DirectModexRequestMessage& request) {
    const uint64_t id = request.request_id;
    const uint32_t from = request.from_node;
    if (from >= setup_.launch.layout.nodes.size()) {
        spdlog::warn(
                "step manager: direct modex request from node {}, which is not "
                "in the step",
                from);
        return;
    }
    pmix::ModexQuery query{request.nspace, request.rank, request.required_key, request.timeout_s};
    std::string refused = check_modex_query(query);
    if (refused.empty() && node_of(query.rank) != setup_.launch.node_index) {
        refused = fmt::format("rank {} does not run on this node", query.rank);
    }
    if (!server_) {
        refused = "this node's step manager has no PMIx server";
    }
    if (!refused.empty()) {
        spdlog::warn("step manager: direct modex request from {}: {}",
                     setup_.launch.layout.nodes.at(from), refused);
        send_to_node(from, protocol::DirectModexReplyMessage{id, pmix::kCompletionNotFound, ""});
        return;
    }
    // Held until the rank has committed the key the asker needs: the library alone
    // would answer after the rank's first commit, which may not carry it yet.
    server_->request_modex(
            query, modex_deadline(query.timeout_s),
            [this, id, from, query](int status, std::string data) {
                send_to_node(from, protocol::DirectModexReplyMessage{id, status, std::move(data)});
                if (status == pmix::kCompletionTimeout && query.timeout_s == 0) {
                    // Nobody bounded the wait but the step: the asker cannot go on.
                    abort_step(-1, 1,
                               fmt::format("rank {} did not make key {} available within {} s "
                                           "(rank on {}, asked for by {})",
                                           query.rank, query.required_key,
                                           options_.fence_timeout.count(), setup_.node_name,
                                           setup_.launch.layout.nodes.at(from)));
                }
            });
}

template <typename Message>
void StepManager::send_to_node(uint32_t node, const Message& message) {
    std::string frame = protocol::encode_message(message, self_, key_);
    if (!have_peers_) {  // a fast node fenced before the client sent the peer table
        waiting_for_peers_.emplace_back(node, std::move(frame));
        return;
    }
    peers_->send(node, std::move(frame));
}

void StepManager::apply(pmix::TreeCollectives::Actions actions) {
    for (auto& send : actions.sends) {
        send_to_node(send.to, send.message);
    }
    for (auto& completion : actions.completions) {
        auto it = fences_.find({completion.collective, completion.sequence});
        if (it == fences_.end()) {
            continue;
        }
        PendingFence fence = std::move(it->second);
        fences_.erase(it);
        fence.timer->cancel();
        fence.done(completion.status, std::move(completion.data));
    }
}

uint32_t StepManager::node_of(uint32_t rank) const {
    return rank < ranks_.node_of.size() ? ranks_.node_of[rank] : 0;
}

void StepManager::on_fence(const std::string& nspace,
                           std::vector<uint32_t> ranks,
                           bool,
                           std::string data,
                           pmix::Completion done) {
    std::vector<uint32_t> nodes;
    std::string collective = nspace + ":";
    if (ranks.empty()) {
        nodes = all_nodes();
        collective += "*";
    } else {
        std::sort(ranks.begin(), ranks.end());
        for (uint32_t rank : ranks) {
            nodes.push_back(node_of(rank));
            collective += std::to_string(rank) + ",";
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    }
    start_collective(collective, nodes, std::move(data), std::move(done));
}

std::vector<uint32_t> StepManager::all_nodes() const {
    std::vector<uint32_t> nodes;
    const auto& counts = setup_.launch.layout.tasks_per_node;
    for (uint32_t node = 0; node < counts.size(); ++node) {
        if (counts[node] > 0) {
            nodes.push_back(node);
        }
    }
    return nodes;
}

void StepManager::start_collective(const std::string& collective,
                                   const std::vector<uint32_t>& nodes,
                                   std::string data,
                                   pmix::Completion done) {
    const uint64_t sequence = collectives_->next_sequence(collective);
    auto timer = std::make_shared<asio::steady_timer>(io_, options_.fence_timeout);
    timer->async_wait([this, collective, sequence](boost::system::error_code ec) {
        if (!ec) {
            fence_timed_out(collective, sequence);
        }
    });
    fences_[{collective, sequence}] = {std::move(done), timer};
    apply(collectives_->contribute(collective, nodes, std::move(data)));
}

void StepManager::fence_timed_out(const std::string& collective, uint64_t sequence) {
    const auto& layout = setup_.launch.layout;
    std::vector<std::string> missing;
    for (uint32_t node : collectives_->waiting_for(collective, sequence)) {
        missing.push_back(layout.nodes.at(node));
    }
    std::string message = fmt::format("fence {} #{} timed out after {} s", collective, sequence,
                                      options_.fence_timeout.count());
    if (!missing.empty()) {
        std::string names;
        for (const auto& name : missing) {
            names += (names.empty() ? "" : ", ") + name;
        }
        message += ": no contribution from " + names;
    } else {
        message += ": the nodes above this one did not answer";
    }
    message +=
            " (a rank that is not a PMIx client, e.g. an MPI built without PMIx, never "
            "joins: try --mpi=pmi1 for MPICH, or --mpi=none)";
    spdlog::error("step {}.{}: {}", layout.job_id, layout.step_id, message);
    apply(collectives_->fail(collective, sequence, 2));
    abort_step(-1, 1, message);
}

std::string StepManager::check_modex_query(const pmix::ModexQuery& query) const {
    if (query.nspace != nspace_) {
        return "namespace '" + query.nspace + "' is not this step's (" + nspace_ + ")";
    }
    const uint32_t ntasks = setup_.launch.layout.ntasks();
    if (query.rank >= ntasks) {
        return fmt::format("namespace {} has {} ranks, asked for rank {}", nspace_, ntasks,
                           static_cast<int32_t>(query.rank));
    }
    return "";
}

std::chrono::steady_clock::time_point StepManager::modex_deadline(uint32_t timeout_s) const {
    std::chrono::seconds bound = options_.fence_timeout;
    if (timeout_s > 0) {
        bound = std::min(bound, std::chrono::seconds(timeout_s));
    }
    return std::chrono::steady_clock::now() + bound;
}

void StepManager::on_direct_modex(const pmix::ModexQuery& query, pmix::Completion done) {
    if (std::string refused = check_modex_query(query); !refused.empty()) {
        spdlog::warn("step manager: direct modex: {}", refused);
        done(pmix::kCompletionNotFound, "");
        return;
    }
    const uint32_t rank = query.rank;
    const uint32_t node = node_of(rank);
    if (node == setup_.launch.node_index) {
        server_->request_modex(query, modex_deadline(query.timeout_s), std::move(done));
        return;
    }
    const uint64_t id = next_modex_request_++;
    // The hosting node answers within its own bound (the same timeout), so this one only
    // fires when that node or the link to it is gone.
    auto timer = std::make_shared<asio::steady_timer>(
            io_, options_.fence_timeout + std::chrono::seconds(5));
    const std::string what = query.required_key.empty()
                                     ? fmt::format("the PMIx data of rank {}", rank)
                                     : fmt::format("key {} of rank {}", query.required_key, rank);
    timer->async_wait([this, id, node, what](boost::system::error_code ec) {
        auto it = modex_requests_.find(id);
        if (ec || it == modex_requests_.end()) {
            return;
        }
        PendingFence request = std::move(it->second);
        modex_requests_.erase(it);
        request.done(pmix::kCompletionTimeout, "");
        abort_step(-1, 1,
                   fmt::format("{} did not come from {} within {} s (did that rank start "
                               "as a PMIx client?)",
                               what, setup_.launch.layout.nodes.at(node),
                               options_.fence_timeout.count()));
    });
    modex_requests_[id] = {std::move(done), timer};
    send_to_node(node,
                 protocol::DirectModexRequestMessage{id, setup_.launch.node_index, query.nspace,
                                                     rank, query.required_key, query.timeout_s});
}

void StepManager::on_connected(uint32_t rank) {
    connected_.insert(rank);
}

void StepManager::on_finalized(uint32_t) {}

void StepManager::on_abort(uint32_t rank, int status, const std::string& message) {
    abort_step(static_cast<int32_t>(rank), status,
               message.empty() ? fmt::format("rank {} called abort", rank) : message);
}

void StepManager::abort_step(int32_t rank, int32_t status, const std::string& message) {
    const auto& layout = setup_.launch.layout;
    agent_->send(protocol::StepAbortMessage{layout.job_id, layout.step_id, rank, status, message});
}

void StepManager::on_log(uint32_t rank, const std::string& text) {
    if (text.empty()) {
        return;
    }
    agent_->send(protocol::TaskOutputMessage{rank, 2, text.back() == '\n' ? text : text + "\n"});
}

}  // namespace cohort::stepd
