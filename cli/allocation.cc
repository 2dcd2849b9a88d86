#include "cli/allocation.h"

#include <algorithm>
#include <csignal>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"

namespace cohort::cli {

namespace asio = boost::asio;

void default_interactive_shape(protocol::JobSpec& spec, const std::string& command) {
    if (spec.name.empty()) {
        spec.name = command.substr(command.find_last_of('/') + 1);
    }
    if (spec.ntasks == 0 && spec.ntasks_per_node == 0) {
        spec.ntasks = std::max<uint32_t>(spec.nodes_min, 1);
    }
}

void complete_job(const ClientContext& context, uint64_t job_id, const StepResult& result) {
    protocol::JobCompleteRequest request{job_id, result.exit_signal != 0 ? 0 : result.exit_code,
                                         result.exit_signal};
    for (int attempt = 0; attempt < 60; ++attempt) {
        auto client = connect_controller(context);
        if (client && client->call<protocol::AckReply>(request)) {
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::cerr << "cohort: warning: could not tell the controller that job " << job_id << " ended\n";
}

void record_step(const ClientContext& context,
                 const protocol::StepLayout& layout,
                 const StepResult& result) {
    auto client = connect_controller(context);
    if (client) {
        client->call<protocol::AckReply>(protocol::StepCompleteRequest{
                layout.job_id, layout.step_id, result.exit_signal != 0 ? 0 : result.exit_code,
                result.exit_signal, result.usage});
    }
}

namespace {

// What the allocation connection's handlers share. Held by shared_ptr because the connection
// (and its handlers) outlive allocate(): closing it would cancel the job.
struct AllocationWait {
    Result<protocol::AllocationReply> outcome = Status::unavailable("no reply from cohortctld");
    bool done = false;
    bool lost = false;  // the connection closed after the job started
    uint64_t job_id = 0;
};

}  // namespace

Result<Allocation> allocate(const ClientContext& context,
                            asio::io_context& io,
                            const protocol::AllocateRequest& request,
                            const std::string& command) {
    Result<asio::ip::tcp::socket> socket = Status::unavailable("no controller configured");
    for (const ControllerAddress& address : controller_addresses(context.config)) {
        socket = transport::connect_to(io, address.host, address.port,
                                       transport::kCliConnectTimeout);
        if (socket) {
            break;
        }
    }
    if (!socket) {
        return socket.status().with_context("cannot reach cohortctld (is the instance up?)");
    }
    auto conn = transport::Connection::create(std::move(*socket), context.auth, context.cred);
    auto wait = std::make_shared<AllocationWait>();
    auto notice = std::make_shared<asio::steady_timer>(io);
    conn->start(
            [wait, notice, command](const std::shared_ptr<transport::Connection>&,
                                    protocol::Envelope envelope) {
                if (envelope.type == static_cast<uint16_t>(protocol::MessageType::kError)) {
                    wait->outcome = protocol::status_from_error(envelope);
                    wait->done = true;
                    return;
                }
                auto reply = protocol::decode_message<protocol::AllocationReply>(envelope);
                if (!reply) {
                    wait->outcome = reply.status();
                    wait->done = true;
                } else if (reply->started) {
                    wait->outcome = std::move(*reply);
                    wait->done = true;
                } else {
                    wait->job_id = reply->job_id;
                    notice->expires_after(std::chrono::seconds(1));
                    notice->async_wait([wait, command](boost::system::error_code ec) {
                        if (!ec && !wait->done) {
                            std::cerr << command << ": job " << wait->job_id
                                      << " queued and waiting for resources\n";
                        }
                    });
                }
            },
            [wait](const std::shared_ptr<transport::Connection>&, const Status& why) {
                wait->lost = wait->done;
                if (!wait->done) {
                    wait->outcome = Status::unavailable(
                            "cohortctld closed the connection"
                            + (why.is_ok() ? std::string() : ": " + why.message()));
                    wait->done = true;
                }
            });
    conn->send(request);
    asio::signal_set interrupts(io, SIGINT, SIGTERM);
    interrupts.async_wait([wait](const boost::system::error_code& ec, int) {
        if (!ec && !wait->done) {
            // A repeated interrupt must not kill the client before it says the job was
            // cancelled (timeout(1) signals its child and then its whole group; users press ^C
            // twice). Blocked, it stays pending until the client exits.
            sigset_t interrupt_signals;
            sigemptyset(&interrupt_signals);
            sigaddset(&interrupt_signals, SIGINT);
            sigaddset(&interrupt_signals, SIGTERM);
            pthread_sigmask(SIG_BLOCK, &interrupt_signals, nullptr);
            wait->outcome = Status::invalid(fmt::format(
                    "interrupted while waiting for resources; job {} cancelled", wait->job_id));
            wait->done = true;
        }
    });
    while (!wait->done && io.run_one() > 0) {
    }
    notice->cancel();
    interrupts.cancel();
    if (!wait->outcome) {
        conn->close(Status::ok());
        io.poll();
        return wait->outcome.status();
    }
    io.poll();
    return Allocation{std::move(wait->outcome->layout), conn,
                      std::shared_ptr<const bool>(wait, &wait->lost),
                      std::move(wait->outcome->het_components)};
}

}  // namespace cohort::cli
