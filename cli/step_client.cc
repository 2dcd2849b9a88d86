// Step client: sends the launch to node 0, which passes it down a tree of agents; every
// agent calls back with its part of the step (output, exits, aborts).
#include "cli/step_client.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"

namespace cohort::cli {

namespace asio = boost::asio;

StepClient::StepClient(asio::io_context& io, protocol::FrameAuth auth, protocol::Credential cred)
    : io_(io),
      auth_(std::move(auth)),
      cred_(cred),
      callbacks_(io),
      dispatcher_([this](size_t node, const Status& why) {
          fail(fmt::format("from {}: {}", layout_.nodes[node], why.message()));
      }) {
    register_handlers();
}

StepResult StepClient::run(const protocol::StepLayout& layout, const StepRequest& request) {
    layout_ = layout;
    request_ = request;
    label_width_ = std::to_string(std::max<uint32_t>(layout.ntasks(), 1) - 1).size();
    node_done_.assign(layout.nodes.size(), false);
    peer_addresses_.assign(layout.nodes.size(), "");
    agents_.assign(layout.nodes.size(), nullptr);
    detached_.assign(layout.nodes.size(), false);
    reattach_deadlines_.resize(layout.nodes.size());
    signal_while_detached_.assign(layout.nodes.size(), 0);
    if (layout.nodes.empty()) {
        return {1, 0, "the step has no nodes", {}};
    }
    // The launch goes to node 0 only; every agent calls back on the address that reaches it.
    auto socket = transport::connect_to(io_, layout.addresses[0], layout.ports[0],
                                        transport::kCliConnectTimeout);
    if (!socket) {
        return {1, 0, "node " + layout.nodes[0] + ": " + socket.status().message(), {}};
    }
    boost::system::error_code ec;
    const std::string host = socket->local_endpoint(ec).address().to_string();
    if (Status listening = transport::listen_on(callbacks_, host, 0); !listening) {
        return {1, 0, listening.message(), {}};
    }
    accept_agents();
    auto launcher = transport::Connection::create(std::move(*socket), auth_, cred_);
    launcher->start([](const std::shared_ptr<transport::Connection>&, protocol::Envelope) {},
                    [](const std::shared_ptr<transport::Connection>&, const Status&) {});
    launcher->send(launch_request(host, callbacks_.local_endpoint().port()));
    launcher->close_after_writes();

    if (const char* limit = std::getenv("COHORT_LAUNCH_TIMEOUT"); limit != nullptr) {
        attach_limit_ = std::chrono::seconds(std::max(1L, std::strtol(limit, nullptr, 10)));
    }
    asio::steady_timer attach_deadline(io_, attach_limit_);
    attach_deadline.async_wait([this](const boost::system::error_code& timer_ec) {
        if (!timer_ec) {
            report_missing_nodes();
        }
    });
    asio::signal_set interrupts(io_, SIGINT, SIGTERM);
    std::function<void(const boost::system::error_code&, int)> on_signal =
            [&](const boost::system::error_code& signal_ec, int signal) {
                if (signal_ec) {
                    return;
                }
                auto now = std::chrono::steady_clock::now();
                if (signal == SIGINT && interrupts_ > 0
                    && now - last_interrupt_ < std::chrono::seconds(1)) {
                    std::cerr << "cohort run: forcing termination of step " << layout_.job_id << "."
                              << layout_.step_id << "\n";
                    signal_all(SIGKILL);
                } else {
                    std::cerr << "cohort run: interrupt (one more within 1 sec to abort)\n";
                    signal_all(signal);
                }
                interrupts_++;
                last_interrupt_ = now;
                interrupts.async_wait(on_signal);
            };
    interrupts.async_wait(on_signal);

    while (!finished_ && io_.run_one() > 0) {
    }
    interrupts.cancel();
    attach_deadline.cancel();
    if (stdin_) {
        stdin_->close(ec);
    }
    callbacks_.close(ec);
    for (auto& agent : agents_) {
        if (agent) {
            agent->close(Status::ok());
        }
    }
    io_.poll();
    flush_partial_lines();
    return result_;
}

void StepClient::accept_agents() {
    callbacks_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
        if (ec) {
            return;
        }
        auto conn = transport::Connection::create(std::move(socket), auth_, cred_);
        auto node = std::make_shared<int64_t>(-1);  // known once the agent says which it is
        conn->start(
                [this, node](const std::shared_ptr<transport::Connection>& c,
                             protocol::Envelope envelope) {
                    if (*node >= 0) {
                        dispatcher_.dispatch(static_cast<size_t>(*node), std::move(envelope));
                        return;
                    }
                    auto attach = protocol::decode_message<protocol::StepAttachMessage>(envelope);
                    if (!attach || attach->job_id != layout_.job_id
                        || attach->step_id != layout_.step_id
                        || attach->node_index >= agents_.size() || agents_[attach->node_index]) {
                        c->close(Status::invalid(fmt::format("not an agent of step {}.{}",
                                                             layout_.job_id, layout_.step_id)));
                        return;
                    }
                    *node = attach->node_index;
                    agents_[attach->node_index] = c;
                    if (detached_[attach->node_index]) {
                        on_reattached(attach->node_index);
                    }
                },
                [this, node](const std::shared_ptr<transport::Connection>& c, const Status& why) {
                    const auto index = static_cast<size_t>(*node);
                    if (*node >= 0 && agents_[index] == c) {
                        on_agent_closed(index, why);
                    }
                });
        accept_agents();
    });
}

// srun's default: the client's stdin goes to rank 0. Pipes, sockets and terminals are read as
// data comes; a regular file is sent whole; anything else (/dev/null) is an empty input.
void StepClient::forward_stdin() {
    struct stat info {};

    if (fstat(STDIN_FILENO, &info) != 0) {
        return;
    }
    const protocol::TaskInputMessage eof{layout_.job_id, layout_.step_id, "", true};
    if (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode) || isatty(STDIN_FILENO)) {
        stdin_ = std::make_unique<asio::posix::stream_descriptor>(io_, dup(STDIN_FILENO));
        read_stdin();
    } else if (S_ISREG(info.st_mode)) {
        for (ssize_t n = read(STDIN_FILENO, stdin_buffer_.data(), stdin_buffer_.size()); n > 0;
             n = read(STDIN_FILENO, stdin_buffer_.data(), stdin_buffer_.size())) {
            agents_[0]->send(protocol::TaskInputMessage{
                    layout_.job_id, layout_.step_id,
                    std::string(stdin_buffer_.data(), static_cast<size_t>(n)), false});
        }
        agents_[0]->send(eof);
    } else {
        agents_[0]->send(eof);
    }
}

void StepClient::read_stdin() {
    stdin_->async_read_some(
            asio::buffer(stdin_buffer_), [this](boost::system::error_code ec, size_t n) {
                if (finished_ || !agents_[0]) {
                    return;
                }
                protocol::TaskInputMessage input{layout_.job_id, layout_.step_id,
                                                 std::string(stdin_buffer_.data(), n),
                                                 static_cast<bool>(ec)};
                agents_[0]->send(input);
                if (!ec) {
                    read_stdin();
                }
            });
}

void StepClient::report_missing_nodes() {
    std::vector<std::string> missing;
    for (size_t i = 0; i < agents_.size(); ++i) {
        if (!agents_[i]) {
            missing.push_back(layout_.nodes[i]);
        }
    }
    if (missing.empty()) {
        return;
    }
    std::string names;
    for (const auto& name : missing) {
        names += (names.empty() ? "" : ", ") + name;
    }
    fail(fmt::format("no answer to the launch within {} s from {} (see those nodes' cohortd logs)",
                     attach_limit_.count(), names));
}

protocol::LaunchStepRequest StepClient::launch_request(const std::string& host,
                                                       uint16_t port) const {
    protocol::LaunchStepRequest launch;
    launch.layout = layout_;
    launch.node_index = 0;
    for (uint32_t node = 1; node < layout_.nodes.size(); ++node) {
        launch.forward_to.push_back(node);
    }
    launch.client_host = host;
    launch.client_port = port;
    launch.argv = request_.argv;
    for (size_t node = 0; !request_.argv_by_job.empty() && node < layout_.nodes.size(); ++node) {
        auto argv = request_.argv_by_job.find(layout_.job_on(node));
        launch.node_argv.push_back(argv != request_.argv_by_job.end() ? argv->second
                                                                      : request_.argv);
    }
    launch.cwd = request_.cwd;
    launch.env = request_.env;
    launch.label = request_.label;
    launch.mpi = request_.mpi;
    launch.pmix_transport = request_.pmix_transport;
    launch.output = request_.output;
    launch.error = request_.error;
    launch.stdin_to_rank0 = request_.stdin_to_rank0;
    launch.signal = request_.signal;
    return launch;
}

void StepClient::register_handlers() {
    using namespace protocol;
    dispatcher_.on<StepLaunchedReply>([this](size_t node, const StepLaunchedReply& launched) {
        on_launched(node, launched);
    });
    dispatcher_.on<StepAbortMessage>(
            [this](size_t, const StepAbortMessage& abort) { on_abort(abort); });
    dispatcher_.on<TaskOutputMessage>(
            [this](size_t, const TaskOutputMessage& output) { write_output(output); });
    dispatcher_.on<TaskExitMessage>(
            [this](size_t, const TaskExitMessage& exit) { on_task_exit(exit); });
    dispatcher_.on<StepDetachMessage>(
            [this](size_t node, const StepDetachMessage&) { on_detached(node); });
    dispatcher_.on<StepDoneMessage>([this](size_t node, const StepDoneMessage& done) {
        result_.usage.add(done.usage);
        node_done_[node] = true;
        finish_if_done();
    });
    dispatcher_.on<ErrorReply>([this](size_t node, const ErrorReply& error) {
        fail(fmt::format("node {}: {}", layout_.nodes[node], error.message));
    });
}

void StepClient::on_detached(size_t node) {
    detached_[node] = true;
    auto& deadline = reattach_deadlines_[node];
    deadline = std::make_unique<asio::steady_timer>(io_, attach_limit_);
    deadline->async_wait([this, node](const boost::system::error_code& ec) {
        if (!ec && detached_[node]) {
            fail(fmt::format("the agent of {} stopped and no agent took its tasks back within {} s",
                             layout_.nodes[node], attach_limit_.count()));
        }
    });
}

void StepClient::on_agent_closed(size_t node, const Status& why) {
    agents_[node] = nullptr;
    if (finished_ || node_done_[node] || detached_[node]) {
        return;
    }
    fail("lost the connection to " + layout_.nodes[node]
         + (why.is_ok() ? "" : ": " + why.message()));
}

void StepClient::on_reattached(size_t node) {
    detached_[node] = false;
    reattach_deadlines_[node]->cancel();
    if (const int signal = std::exchange(signal_while_detached_[node], 0); signal != 0) {
        agents_[node]->send(protocol::SignalStepRequest{layout_.job_id, layout_.step_id, signal});
    }
}

void StepClient::on_task_exit(const protocol::TaskExitMessage& exit) {
    if (!exited_ranks_.insert(exit.rank).second) {
        return;  // reported again by the agent that took the node's tasks over
    }
    int code = exit.exit_signal != 0 ? 128 + exit.exit_signal : exit.exit_code;
    // Once the step is being ended, the others' SIGKILL is not what the step exits with.
    const bool ending = aborted_ || killing_;
    if (code > result_.exit_code && !ending) {
        result_.exit_code = code;
    }
    if (exit.exit_signal != 0 && result_.exit_signal == 0 && !ending) {
        result_.exit_signal = exit.exit_signal;
    }
    if (request_.kill_on_bad_exit && code != 0 && !aborted_ && !killing_) {
        std::cerr << fmt::format(
                "cohort run: error: task {} exited with {}: ending step {}.{} "
                "(--kill-on-bad-exit)\n",
                exit.rank, code, layout_.job_id, layout_.step_id);
        killing_ = true;
        signal_all(SIGKILL);
    }
    if (!exit.error.empty()) {
        std::cerr << "cohort run: error: " << exit.error << "\n";
        if (result_.error.empty()) {
            result_.error = exit.error;
        }
        signal_all(SIGKILL);  // the step cannot run without that rank
    }
}

void StepClient::on_launched(size_t node, const protocol::StepLaunchedReply& launched) {
    peer_addresses_[node] = launched.peer_address;
    if (node == 0 && request_.stdin_to_rank0) {
        forward_stdin();  // rank 0 runs now
    }
    if (++nodes_launched_ < agents_.size() || request_.mpi == "none") {
        return;
    }
    // Every step manager listens now: tell each where its peers are.
    protocol::StepPeersMessage peers{layout_.job_id, layout_.step_id, peer_addresses_};
    for (auto& agent : agents_) {
        if (agent) {
            agent->send(peers);
        }
    }
}

void StepClient::on_abort(const protocol::StepAbortMessage& abort) {
    if (aborted_) {
        return;
    }
    aborted_ = true;
    std::cerr << "cohort run: error: step " << layout_.job_id << "." << layout_.step_id
              << (abort.rank >= 0 ? fmt::format(" aborted by rank {}", abort.rank)
                                  : std::string(" failed"))
              << " with status " << abort.status << ": " << abort.message << "\n";
    result_.exit_code = abort.status != 0 ? abort.status : 1;
    if (result_.error.empty()) {
        result_.error = abort.message;
    }
    signal_all(SIGKILL);
}

// Whole lines per task, as srun does by default: ranks writing at once never mix within a
// line, labelled or not.
void StepClient::write_output(const protocol::TaskOutputMessage& output) {
    std::ostream& out = output.stream == 2 ? std::cerr : std::cout;
    std::string& partial = partial_lines_[{output.rank, output.stream}];
    partial += output.data;
    size_t start = 0;
    const std::string label = label_of(output.rank);
    for (size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
        out << label << std::string_view(partial).substr(start, nl - start + 1);
        start = nl + 1;
    }
    partial.erase(0, start);
    out.flush();
}

std::string StepClient::label_of(uint32_t rank) const {
    if (!request_.label) {
        return "";
    }
    std::string label = std::to_string(rank);
    return std::string(label_width_ > label.size() ? label_width_ - label.size() : 0, ' ') + label
           + ": ";
}

void StepClient::flush_partial_lines() {
    for (auto& [key, partial] : partial_lines_) {
        if (!partial.empty()) {
            // A last line without its newline: as written, but a labelled one is closed.
            (key.second == 2 ? std::cerr : std::cout)
                    << label_of(key.first) << partial << (request_.label ? "\n" : "");
            partial.clear();
        }
    }
}

void StepClient::signal_all(int signal) {
    for (size_t node = 0; node < agents_.size(); ++node) {
        if (agents_[node]) {
            agents_[node]->send(
                    protocol::SignalStepRequest{layout_.job_id, layout_.step_id, signal});
        } else if (detached_[node]) {
            signal_while_detached_[node] = signal;
        }
    }
}

void StepClient::fail(const std::string& error) {
    if (finished_) {
        return;
    }
    std::cerr << "cohort run: error: " << error << "\n";
    result_.error = error;
    if (result_.exit_code == 0) {
        result_.exit_code = 1;
    }
    signal_all(SIGKILL);
    finished_ = true;
}

void StepClient::finish_if_done() {
    for (bool done : node_done_) {
        if (!done) {
            return;
        }
    }
    finished_ = true;
}

}  // namespace cohort::cli
