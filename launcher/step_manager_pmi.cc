// The step manager's PMI-1 service (--mpi=pmi1): a line protocol over loopback TCP for the
// local ranks, whose barriers become tree collectives across the step's nodes.
#include <spdlog/spdlog.h>

#include "launcher/step_manager.h"

namespace cohort::stepd {

Result<protocol::StepdReadyMessage> StepManager::prepare_pmi_ranks() {
    const protocol::LaunchStepRequest& launch = setup_.launch;
    const protocol::StepLayout& layout = launch.layout;
    pmix::PmiJob job;
    job.kvsname = nspace_;
    job.size = layout.ntasks();
    job.process_mapping = pmix::pmi_process_mapping(layout.tasks_per_node);
    uint32_t first = 0;
    for (uint32_t node = 0; node < launch.node_index; ++node) {
        first += layout.tasks_per_node[node];
    }
    for (uint32_t local = 0; local < layout.tasks_per_node[launch.node_index]; ++local) {
        job.local_ranks.push_back(first + local);
    }
    pmi_ = std::make_unique<pmix::PmiSimpleServer>(job);
    // The ranks are local: the PMI port is on loopback whatever the node's address.
    if (Status listening = transport::listen_on(pmi_acceptor_, "127.0.0.1", 0); !listening) {
        return listening;
    }
    const std::string port = "127.0.0.1:" + std::to_string(pmi_acceptor_.local_endpoint().port());
    accept_pmi_clients();
    protocol::StepdReadyMessage ready;
    for (uint32_t rank : job.local_ranks) {
        ready.rank_env.push_back({{"PMI_PORT", port}, {"PMI_ID", std::to_string(rank)},
                {"PMI_RANK", std::to_string(rank)}, {"PMI_SIZE", std::to_string(job.size)}});
    }
    spdlog::info("step {}.{}: PMI-1 server on {} for {} local ranks", layout.job_id,
            layout.step_id, port, job.local_ranks.size());
    return ready;
}

void StepManager::accept_pmi_clients() {
    pmi_acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket s) {
        if (ec) {
            return;
        }
        const uint64_t client = next_pmi_client_++;
        pmi_clients_[client] = {std::make_shared<asio::ip::tcp::socket>(std::move(s)),
                std::make_shared<asio::streambuf>(64 * 1024)};
        read_pmi_line(client);
        accept_pmi_clients();
    });
}

void StepManager::read_pmi_line(uint64_t client) {
    auto it = pmi_clients_.find(client);
    if (it == pmi_clients_.end()) {
        return;
    }
    PmiClient& pmi_client = it->second;
    asio::async_read_until(*pmi_client.socket, *pmi_client.input, '\n',
            [this, client, input = pmi_client.input](boost::system::error_code ec, size_t n) {
                if (ec) {  // the rank closed (finalize, exit) or sent an over-long line
                    pmi_->forget(client);
                    pmi_clients_.erase(client);
                    return;
                }
                std::string line(asio::buffers_begin(input->data()),
                        asio::buffers_begin(input->data()) + static_cast<std::ptrdiff_t>(n));
                input->consume(n);
                while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
                    line.pop_back();
                }
                apply_pmi(pmi_->on_line(client, line), client);
                read_pmi_line(client);
            });
}

void StepManager::apply_pmi(pmix::PmiSimpleServer::Output output, uint64_t from) {
    for (auto& reply : output.replies) {
        auto it = pmi_clients_.find(reply.client);
        if (it == pmi_clients_.end()) {
            continue;
        }
        auto text = std::make_shared<std::string>(std::move(reply.line));
        boost::system::error_code ignored;
        asio::write(*it->second.socket, asio::buffer(*text), ignored);  // short local lines
    }
    if (!output.error.empty()) {
        spdlog::warn("step manager: PMI client {}: {}", from, output.error);
        pmi_->forget(from);
        pmi_clients_.erase(from);
    }
    if (output.abort) {
        abort_step(output.abort->rank, output.abort->exit_code, output.abort->message);
    }
    if (output.barrier) {
        start_collective("pmi:" + nspace_, all_nodes(), std::move(*output.barrier),
                [this](int status, std::string data) {
                    // A failed barrier still releases the ranks, with an error they can see.
                    apply_pmi(status == 0 ? pmi_->barrier_done(data) : pmi_->barrier_failed(),
                            0);
                });
    }
}

}  // namespace cohort::stepd
