// The step manager: PMIx server set-up, the rank variables, and the step's collectives.
#include "launcher/step_manager.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace cohort::stepd {
namespace {

namespace fs = std::filesystem;

bool has_var(const protocol::LaunchStepRequest& launch, const std::string& name) {
    return std::any_of(launch.env.begin(), launch.env.end(),
            [&](const auto& pair) { return pair.first == name; });
}

}  // namespace

StepManager::StepManager(asio::io_context& io, std::string key, StepManagerOptions options)
    : io_(io),
      key_(std::move(key)),
      options_(std::move(options)),
      self_{static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())},
      pmi_acceptor_(io) {}

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
            [this](protocol::Envelope envelope) { on_peer_message(std::move(envelope)); },
            [this](uint32_t node, const std::string& why) {
                abort_step(-1, 1, "the step manager on "
                        + setup_.launch.layout.nodes.at(node) + " cannot be reached: " + why);
            }};
    auto peers = options_.transport == "ucx"
            ? pmix::make_ucx_transport(io_, key_, std::move(handlers))
            : pmix::make_tcp_transport(io_, key_, options_.agent_host, std::move(handlers));
    if (!peers) {
        return peers.status();
    }
    peers_ = std::move(*peers);
    auto socket = transport::connect_to(io_, options_.agent_host, options_.agent_port);
    if (!socket) {
        return socket.status().with_context("cannot reach the node agent");
    }
    agent_ = transport::Connection::create(std::move(*socket), key_, self_);
    agent_->start([this](const ConnectionPtr&,
                          protocol::Envelope envelope) { on_agent_message(std::move(envelope)); },
            [this](const ConnectionPtr&, const Status&) { shut_down(); });
    agent_->send(protocol::StepdHelloMessage{options_.job_id, options_.step_id,
            peers_->local_address()});
    return Status::ok();
}

void StepManager::shut_down() {
    boost::system::error_code ignored;
    pmi_acceptor_.close(ignored);
    io_.stop();
}

void StepManager::on_agent_message(protocol::Envelope envelope) {
    switch (static_cast<protocol::MessageType>(envelope.type)) {
        case protocol::MessageType::kStepdSetup: {
            auto setup = protocol::decode_message<protocol::StepdSetupMessage>(envelope);
            if (setup) {
                set_up(*setup);
            }
            return;
        }
        case protocol::MessageType::kStepPeers: {
            auto peers = protocol::decode_message<protocol::StepPeersMessage>(envelope);
            if (!peers || have_peers_) {
                return;
            }
            peers_->set_peers(peers->peers);
            have_peers_ = true;
            auto waiting = std::move(waiting_for_peers_);
            for (auto& [node, frame] : waiting) {
                peers_->send(node, std::move(frame));
            }
            return;
        }
        default:
            spdlog::warn("step manager: unexpected {} from the agent",
                    protocol::message_type_name(envelope.type));
    }
}

void StepManager::set_up(const protocol::StepdSetupMessage& setup) {
    setup_ = setup;
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
                return Status::io_error("cannot hand " + dir + " to uid "
                        + std::to_string(setup_.uid));
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

Result<protocol::StepdReadyMessage> StepManager::prepare_pmix_ranks(
        const std::string& session_dir, bool other_user) {
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
    std::string shm_pattern = (fs::is_directory("/dev/shm") ? "/dev/shm" : tmpdir_)
            + "/cohort-" + step + "-XXXXXX";
    if (mkdtemp(shm_pattern.data()) == nullptr) {
        return Status::io_error("cannot create the shared-memory directory " + shm_pattern);
    }
    shm_dir_ = shm_pattern;
    if (other_user && chown(shm_dir_.c_str(), setup_.uid, setup_.gid) != 0) {
        return Status::io_error("cannot hand " + shm_dir_ + " to uid "
                + std::to_string(setup_.uid));
    }

    pmix::NamespaceLayout ns;
    ns.nspace = nspace_;
    ns.job_id = step;
    ns.nodes = layout.nodes;
    ns.tasks_per_node = layout.tasks_per_node;
    ns.this_node = launch.node_index;
    ns.job_tmpdir = session_dir;
    ns.step_tmpdir = session_dir;
    if (Status registered = server_->register_namespace(ns); !registered) {
        return registered;
    }

    protocol::StepdReadyMessage ready;
    uint32_t first = 0;
    for (uint32_t node = 0; node < launch.node_index; ++node) {
        first += layout.tasks_per_node[node];
    }
    for (uint32_t local = 0; local < layout.tasks_per_node[launch.node_index]; ++local) {
        auto vars = server_->prepare_rank(nspace_, first + local, setup_.uid, setup_.gid);
        if (!vars) {
            return vars.status();
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

void StepManager::on_peer_message(protocol::Envelope envelope) {
    switch (static_cast<protocol::MessageType>(envelope.type)) {
        case protocol::MessageType::kCollective: {
            auto message = protocol::decode_message<protocol::CollectiveMessage>(envelope);
            if (message && collectives_) {
                apply(collectives_->receive(*message));
            }
            return;
        }
        case protocol::MessageType::kDirectModexRequest: {
            auto request = protocol::decode_message<protocol::DirectModexRequestMessage>(envelope);
            if (!request || !server_) {
                return;
            }
            const uint64_t id = request->request_id;
            const uint32_t from = request->from_node;
            server_->request_modex(request->nspace, request->rank,
                    [this, id, from](int status, std::string data) {
                        send_to_node(from, protocol::DirectModexReplyMessage{id, status,
                                std::move(data)});
                    });
            return;
        }
        case protocol::MessageType::kDirectModexReply: {
            auto reply = protocol::decode_message<protocol::DirectModexReplyMessage>(envelope);
            if (!reply) {
                return;
            }
            auto it = modex_requests_.find(reply->request_id);
            if (it != modex_requests_.end()) {
                PendingFence request = std::move(it->second);
                modex_requests_.erase(it);
                request.timer->cancel();
                request.done(reply->status, std::move(reply->data));
            }
            return;
        }
        default:
            spdlog::warn("step manager: unexpected {} from a peer",
                    protocol::message_type_name(envelope.type));
    }
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
    const auto& counts = setup_.launch.layout.tasks_per_node;
    uint32_t first = 0;
    for (uint32_t node = 0; node < counts.size(); ++node) {
        if (rank < first + counts[node]) {
            return node;
        }
        first += counts[node];
    }
    return 0;
}

void StepManager::on_fence(const std::string& nspace, std::vector<uint32_t> ranks, bool,
        std::string data, pmix::Completion done) {
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
        const std::vector<uint32_t>& nodes, std::string data, pmix::Completion done) {
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
    std::string message = "fence " + collective + " #" + std::to_string(sequence)
            + " timed out after " + std::to_string(options_.fence_timeout.count()) + " s";
    if (!missing.empty()) {
        std::string names;
        for (const auto& name : missing) {
            names += (names.empty() ? "" : ", ") + name;
        }
        message += ": no contribution from " + names;
    } else {
        message += ": the nodes above this one did not answer";
    }
    message += " (a rank that is not a PMIx client, e.g. an MPI built without PMIx, never "
               "joins: try --mpi=pmi1 for MPICH, or --mpi=none)";
    spdlog::error("step {}.{}: {}", layout.job_id, layout.step_id, message);
    apply(collectives_->fail(collective, sequence, 2));
    abort_step(-1, 1, message);
}

void StepManager::on_direct_modex(const std::string& nspace, uint32_t rank,
        pmix::Completion done) {
    const uint32_t node = node_of(rank);
    if (node == setup_.launch.node_index) {
        server_->request_modex(nspace, rank, std::move(done));
        return;
    }
    const uint64_t id = next_modex_request_++;
    auto timer = std::make_shared<asio::steady_timer>(io_, options_.fence_timeout);
    timer->async_wait([this, id, node, rank](boost::system::error_code ec) {
        auto it = modex_requests_.find(id);
        if (ec || it == modex_requests_.end()) {
            return;
        }
        PendingFence request = std::move(it->second);
        modex_requests_.erase(it);
        request.done(2, "");
        abort_step(-1, 1, "the PMIx data of rank " + std::to_string(rank) + " did not come from "
                + setup_.launch.layout.nodes.at(node) + " within "
                + std::to_string(options_.fence_timeout.count())
                + " s (did that rank start as a PMIx client?)");
    });
    modex_requests_[id] = {std::move(done), timer};
    send_to_node(node, protocol::DirectModexRequestMessage{id, setup_.launch.node_index,
            nspace, rank});
}

void StepManager::on_connected(uint32_t rank) {
    connected_.insert(rank);
}

void StepManager::on_finalized(uint32_t) {}

void StepManager::on_abort(uint32_t rank, int status, const std::string& message) {
    abort_step(static_cast<int32_t>(rank), status,
            message.empty() ? "rank " + std::to_string(rank) + " called abort" : message);
}

void StepManager::abort_step(int32_t rank, int32_t status, const std::string& message) {
    const auto& layout = setup_.launch.layout;
    agent_->send(protocol::StepAbortMessage{layout.job_id, layout.step_id, rank, status,
            message});
}

void StepManager::on_log(uint32_t rank, const std::string& text) {
    if (text.empty()) {
        return;
    }
    agent_->send(protocol::TaskOutputMessage{rank, 2,
            text.back() == '\n' ? text : text + "\n"});
}

}  // namespace cohort::stepd
