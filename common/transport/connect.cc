// Resolve and connect raced against a steady_timer; whichever finishes first decides.
#include "common/transport/connect.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

namespace cohort::transport {
namespace {

// One connection attempt. Its socket, resolver and timer share one strand, so the timer and
// the connect never run at the same time, and `finished_` turns the later one into a no-op.
class ConnectAttempt : public std::enable_shared_from_this<ConnectAttempt> {
public:
    ConnectAttempt(asio::io_context& io,
                   std::string host,
                   uint16_t port,
                   std::chrono::milliseconds timeout,
                   ConnectHandler done)
        : socket_(asio::make_strand(io)),
          resolver_(socket_.get_executor()),
          timer_(socket_.get_executor()),
          host_(std::move(host)),
          port_(port),
          timeout_(timeout),
          done_(std::move(done)) {}

    // Posted, not dispatched: `done` must never run inside async_connect_to, where the caller
    // may not yet have recorded what it is waiting for.
    void start() {
        asio::post(socket_.get_executor(), [self = shared_from_this()] { self->begin(); });
    }

private:
    void begin() {
        timer_.expires_after(timeout_);
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) {
                const auto ms = self->timeout_.count();
                self->fail(self->resolving_
                                   ? fmt::format("the name did not resolve within {} ms", ms)
                                   : fmt::format("timed out after {} ms", ms));
            }
        });
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(host_, ec);
        if (!ec) {
            connect(std::vector<tcp::endpoint>{tcp::endpoint(address, port_)});
            return;
        }
        resolving_ = true;
        resolver_.async_resolve(
                host_, std::to_string(port_), tcp::resolver::numeric_service,
                [self = shared_from_this()](boost::system::error_code resolve_ec,
                                            const tcp::resolver::results_type& results) {
                    self->resolving_ = false;
                    if (self->finished_) {
                        return;
                    }
                    if (resolve_ec) {
                        self->fail("cannot resolve '" + self->host_ + "': " + resolve_ec.message());
                        return;
                    }
                    self->connect(results);
                });
    }

    // Tries each address in turn (asio::async_connect opens the socket for each).
    template <typename Endpoints>
    void connect(const Endpoints& endpoints) {
        asio::async_connect(
                socket_, endpoints,
                [self = shared_from_this()](boost::system::error_code ec, const tcp::endpoint&) {
                    if (self->finished_) {
                        return;  // the timer fired first and closed the socket
                    }
                    if (ec) {
                        self->fail(ec.message());
                        return;
                    }
                    self->finish(std::move(self->socket_));
                });
    }

    void fail(const std::string& cause) {
        if (finished_) {
            return;
        }
        boost::system::error_code ignored;
        socket_.close(ignored);  // aborts a connect in flight
        resolver_.cancel();
        finish(Status::unavailable(
                fmt::format("cannot connect to {}:{}: {}", host_, port_, cause)));
    }

    void finish(Result<tcp::socket> outcome) {
        finished_ = true;
        timer_.cancel();
        auto done = std::move(done_);
        done(std::move(outcome));
    }

    tcp::socket socket_;
    tcp::resolver resolver_;
    asio::steady_timer timer_;
    std::string host_;
    uint16_t port_;
    std::chrono::milliseconds timeout_;
    ConnectHandler done_;
    bool resolving_ = false;
    bool finished_ = false;
};

}  // namespace

void async_connect_to(asio::io_context& io,
                      const std::string& host,
                      uint16_t port,
                      std::chrono::milliseconds timeout,
                      ConnectHandler done) {
    std::make_shared<ConnectAttempt>(io, host, port, timeout, std::move(done))->start();
}

Result<tcp::socket> connect_to(asio::io_context& io,
                               const std::string& host,
                               uint16_t port,
                               std::chrono::milliseconds timeout) {
    asio::io_context private_io;
    std::optional<Result<tcp::socket>> outcome;
    async_connect_to(private_io, host, port, timeout, [&outcome](Result<tcp::socket> result) {
        outcome.emplace(std::move(result));
    });
    // The attempt's timer bounds this loop.
    while (!outcome && private_io.run_one() > 0) {
    }
    if (!outcome) {
        return Status::internal(
                fmt::format("connecting to {}:{} ended without an outcome", host, port));
    }
    if (!*outcome) {
        return outcome->status();
    }
    // Hand the descriptor over to `io`: a socket cannot change its io_context.
    tcp::socket& connected = outcome->value();
    boost::system::error_code ec;
    const tcp::endpoint local = connected.local_endpoint(ec);
    const int fd = ec ? -1 : connected.release(ec);
    tcp::socket socket(asio::make_strand(io));
    if (!ec) {
        socket.assign(local.protocol(), fd, ec);
        if (ec) {
            ::close(fd);
        }
    }
    if (ec) {
        return Status::unavailable(
                fmt::format("cannot connect to {}:{}: {}", host, port, ec.message()));
    }
    return socket;
}

}  // namespace cohort::transport
