// The step manager's PMI service (--mpi=pmi1 and --mpi=pmi2): PMI-1 lines and PMI-2 frames
// from the local ranks, whose barriers and fences become tree collectives across the step's
// nodes. A rank talks over the socket it inherited as PMI_FD (what MPICH's clients use when
// it is set), which is its alone; or over loopback TCP at PMI_PORT, where it proves who it
// is with a random PMI_ID of its own.
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <unistd.h>

#include "launcher/step_manager.h"
#include "pmix/loopback_owner.h"

namespace cohort::stepd {
namespace {

// A secret per rank. MPICH's PMI-1 client sends PMI_ID as a C int ("pmiid=%d"), so the
// secret is a positive 31-bit number; the port closes once every local rank has presented
// its id, which leaves a guesser only the start-up window.
Result<std::vector<std::string>> random_ids(size_t count) {
    std::set<uint32_t> seen;
    std::vector<std::string> ids;
    while (ids.size() < count) {
        uint32_t number = 0;
        if (getrandom(&number, sizeof number, 0) != static_cast<ssize_t>(sizeof number)) {
            return Status::io_error("cannot draw the ranks' PMI_ID secrets: getrandom failed");
        }
        number &= 0x7fffffffU;
        if (number != 0 && seen.insert(number).second) {
            ids.push_back(std::to_string(number));
        }
    }
    return ids;
}

// The uid of the process at the other end of an accepted loopback connection.
std::optional<uint32_t> peer_uid(const asio::ip::tcp::socket& socket) {
    boost::system::error_code ec;
    const auto local = socket.local_endpoint(ec);
    const auto remote = socket.remote_endpoint(ec);
    if (ec) {
        return std::nullopt;
    }
    std::ifstream file("/proc/net/tcp");
    std::stringstream table;
    table << file.rdbuf();
    // The client's socket is listed with its own address as the local one.
    return pmix::tcp_socket_owner(table.str(), remote.address().to_string(), remote.port(),
                                  local.address().to_string(), local.port());
}

}  // namespace

Result<protocol::StepdReadyMessage> StepManager::prepare_pmi_ranks(bool pmi2) {
    const protocol::LaunchStepRequest& launch = setup_.launch;
    const protocol::StepLayout& layout = launch.layout;
    pmix::PmiJob job;
    job.kvsname = nspace_;
    job.size = layout.ntasks();
    job.process_mapping = pmix::pmi_process_mapping(ranks_.node_of);
    job.local_ranks = ranks_.ranks_on_node.at(launch.node_index);
    auto ids = random_ids(job.local_ranks.size());
    if (!ids) {
        return ids.status();
    }
    for (size_t local = 0; local < job.local_ranks.size(); ++local) {
        job.ids[(*ids)[local]] = job.local_ranks[local];
    }
    pmi_ = std::make_unique<pmix::PmiService>(job);
    if (!options_.pmi_fds.empty() && options_.pmi_fds.size() != job.local_ranks.size()) {
        return Status::internal(
                fmt::format("the node agent passed {} PMI_FD sockets for {} local ranks",
                            options_.pmi_fds.size(), job.local_ranks.size()));
    }
    for (size_t local = 0; local < options_.pmi_fds.size(); ++local) {
        const uint64_t client = next_pmi_client_++;
        pmi_->attach(client, job.local_ranks[local]);
        add_pmi_client(client, options_.pmi_fds[local]);
    }
    // The ranks run as the job's user when this step manager runs as root for another one.
    pmi_uid_ = getuid() == 0 && setup_.uid != 0 ? setup_.uid : getuid();
    // The ranks are local: the PMI port is on loopback whatever the node's address.
    if (Status listening = transport::listen_on(pmi_acceptor_, "127.0.0.1", 0); !listening) {
        return listening;
    }
    const std::string port = "127.0.0.1:" + std::to_string(pmi_acceptor_.local_endpoint().port());
    accept_pmi_clients();
    protocol::StepdReadyMessage ready;
    for (size_t local = 0; local < job.local_ranks.size(); ++local) {
        const std::string rank = std::to_string(job.local_ranks[local]);
        std::vector<std::pair<std::string, std::string>> env{
                {"PMI_PORT", port},
                {"PMI_ID", (*ids)[local]},
                {"PMI_RANK", rank},
                {"PMI_SIZE", std::to_string(job.size)}};
        if (pmi2) {  // what MPICH's PMI-2 client and Slurm's pmi2 plugin set
            env.insert(env.end(),
                       {{"PMI_JOBID", job.kvsname}, {"PMI_VERSION", "2"}, {"PMI_SUBVERSION", "0"}});
        }
        ready.rank_env.push_back(std::move(env));
    }
    spdlog::info("step {}.{}: PMI-1/PMI-2 server on {} for {} local ranks", layout.job_id,
                 layout.step_id, port, job.local_ranks.size());
    return ready;
}

void StepManager::accept_pmi_clients() {
    pmi_acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket s) {
        if (ec) {
            return;
        }
        // Another user's process is turned away before it can say anything; the PMI_ID
        // secret keeps out the job user's other processes that guess.
        if (auto uid = peer_uid(s); uid && *uid != pmi_uid_) {
            spdlog::warn(
                    "step {}.{}: PMI connection from uid {} refused (the ranks run as "
                    "uid {})",
                    setup_.launch.layout.job_id, setup_.launch.layout.step_id, *uid, pmi_uid_);
            const std::string refusal = fmt::format(
                    "cmd=error rc=-1 msg=refused:_uid_{}_is_not_the_step's_user\n", *uid);
            boost::system::error_code ignored;
            asio::write(s, asio::buffer(refusal), ignored);
            s.close(ignored);
            accept_pmi_clients();
            return;
        }
        add_pmi_client(next_pmi_client_++, s.release());
        accept_pmi_clients();
    });
}

void StepManager::add_pmi_client(uint64_t client, int fd) {
    pmi_clients_[client] = {std::make_shared<asio::posix::stream_descriptor>(io_, fd),
                            std::make_shared<std::array<char, 4096>>()};
    read_pmi_bytes(client);
}

void StepManager::read_pmi_bytes(uint64_t client) {
    auto it = pmi_clients_.find(client);
    if (it == pmi_clients_.end()) {
        return;
    }
    PmiClient& pmi_client = it->second;
    pmi_client.socket->async_read_some(
            asio::buffer(*pmi_client.input),
            [this, client, input = pmi_client.input](boost::system::error_code ec, size_t n) {
                if (ec) {  // the rank closed (finalize, exit)
                    pmi_->forget(client);
                    pmi_clients_.erase(client);
                    return;
                }
                apply_pmi(pmi_->on_bytes(client, std::string(input->data(), n)), client);
                read_pmi_bytes(client);
            });
}

void StepManager::apply_pmi(pmix::PmiOutput output, uint64_t from) {
    for (auto& reply : output.replies) {
        auto it = pmi_clients_.find(reply.client);
        if (it == pmi_clients_.end()) {
            continue;
        }
        boost::system::error_code ignored;
        asio::write(*it->second.socket, asio::buffer(reply.bytes), ignored);  // short, local
    }
    if (!output.error.empty()) {
        spdlog::warn("step {}.{}: PMI client {} closed: {}", setup_.launch.layout.job_id,
                     setup_.launch.layout.step_id, from, output.error);
        pmi_->forget(from);
        auto it = pmi_clients_.find(from);
        if (it != pmi_clients_.end()) {
            boost::system::error_code ignored;
            it->second.socket->close(ignored);  // its pending read ends and finds it gone
            pmi_clients_.erase(it);
        }
    }
    if (pmi_->all_claimed() && pmi_acceptor_.is_open()) {
        boost::system::error_code ignored;
        pmi_acceptor_.close(ignored);  // every rank is in: nobody else may connect
    }
    if (output.abort) {
        abort_step(output.abort->rank, output.abort->exit_code, output.abort->message);
    }
    if (output.barrier) {
        start_collective(
                "pmi:" + nspace_, all_nodes(), std::move(*output.barrier),
                [this](int status, std::string data) {
                    // A failed barrier still releases the ranks, with an error they can see.
                    apply_pmi(status == 0 ? pmi_->barrier_done(data) : pmi_->barrier_failed(), 0);
                });
    }
}

}  // namespace cohort::stepd
