// Connecting with a deadline, on loopback only: success, refusal, and a peer that never
// answers the SYN, which must fail within the bound instead of the kernel's minutes.
#include "common/transport/connect.h"

#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace cohort::transport {
namespace {

using std::chrono::milliseconds;

const std::string kLoopback = "127.0.0.1";

// A loopback listener that never accepts.
tcp::acceptor listener(asio::io_context& io, int backlog) {
    tcp::acceptor acceptor(io);
    acceptor.open(tcp::v4());
    acceptor.bind(tcp::endpoint(asio::ip::make_address(kLoopback), 0));
    acceptor.listen(backlog);
    return acceptor;
}

// A port that answers like a host that is down, without a packet leaving loopback: Linux
// drops (does not reset) a SYN while the listener's accept queue is full, and with backlog 0
// the queue holds the one connection `filler` makes. A new connect there hangs until the
// kernel gives up, minutes later.
struct Blackhole {
    explicit Blackhole(asio::io_context& io)
        : acceptor(listener(io, 0)),
          port(acceptor.local_endpoint().port()),
          filler(connect_to(io, kLoopback, port, milliseconds(5000))) {}

    tcp::acceptor acceptor;
    uint16_t port;
    Result<tcp::socket> filler;
};

class ConnectTest : public ::testing::Test {
protected:
    ConnectHandler record() {
        return [this](Result<tcp::socket> result) {
            ++calls_;
            outcome_.emplace(std::move(result));
        };
    }

    // Runs io until the outcome arrives or 5 s pass: far beyond any deadline used here, far
    // below the kernel's own connect timeout.
    void run_until_done() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (calls_ == 0 && std::chrono::steady_clock::now() < deadline) {
            io_.restart();
            io_.run_for(milliseconds(10));
        }
    }

    asio::io_context io_;
    int calls_ = 0;
    std::optional<Result<tcp::socket>> outcome_;
};

TEST_F(ConnectTest, ConnectsToAListenerButNeverCompletesInsideTheCall) {
    tcp::acceptor acceptor = listener(io_, 8);
    const uint16_t port = acceptor.local_endpoint().port();
    async_connect_to(io_, kLoopback, port, milliseconds(5000), record());
    EXPECT_EQ(calls_, 0);
    run_until_done();
    ASSERT_EQ(calls_, 1);
    ASSERT_TRUE(*outcome_) << outcome_->status().message();
    EXPECT_EQ(outcome_->value().remote_endpoint().port(), port);
}

TEST_F(ConnectTest, ResolvesAHostNameFirst) {
    tcp::acceptor acceptor = listener(io_, 8);
    async_connect_to(io_, "localhost", acceptor.local_endpoint().port(), milliseconds(5000),
                     record());
    run_until_done();
    ASSERT_EQ(calls_, 1);
    EXPECT_TRUE(*outcome_) << outcome_->status().message();
}

TEST_F(ConnectTest, ARefusalNamesHostPortAndTheCause) {
    // Bound but not listening: the kernel answers the SYN with a reset.
    tcp::acceptor closed(io_);
    closed.open(tcp::v4());
    closed.bind(tcp::endpoint(asio::ip::make_address(kLoopback), 0));
    const uint16_t port = closed.local_endpoint().port();
    async_connect_to(io_, kLoopback, port, milliseconds(5000), record());
    run_until_done();
    ASSERT_EQ(calls_, 1);
    ASSERT_FALSE(*outcome_);
    EXPECT_EQ(outcome_->status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(outcome_->status().message(),
              "cannot connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused");
}

TEST_F(ConnectTest, AnUnansweredConnectFailsAtTheDeadlineExactlyOnce) {
    Blackhole blackhole(io_);
    ASSERT_TRUE(blackhole.filler) << blackhole.filler.status().message();
    async_connect_to(io_, kLoopback, blackhole.port, milliseconds(200), record());
    run_until_done();
    ASSERT_EQ(calls_, 1) << "no outcome within 5 s of a 200 ms deadline";
    ASSERT_FALSE(*outcome_) << "the blackhole accepted: this kernel does not drop a SYN "
                               "while the accept queue is full";
    EXPECT_EQ(outcome_->status().message(),
              "cannot connect to 127.0.0.1:" + std::to_string(blackhole.port)
                      + ": timed out after 200 ms");
    // The aborted connect completes too, after the timer: it must not call back again.
    io_.restart();
    io_.run_for(milliseconds(200));
    EXPECT_EQ(calls_, 1);
}

TEST(BlockingConnect, ReturnsASocketOnTheCallersIoContext) {
    asio::io_context io;
    tcp::acceptor acceptor = listener(io, 8);
    auto socket = connect_to(io, kLoopback, acceptor.local_endpoint().port(), milliseconds(5000));
    ASSERT_TRUE(socket) << socket.status().message();
    // The descriptor moved off the private io_context: an async write through `io` works.
    bool written = false;
    asio::async_write(*socket, asio::buffer(std::string("x")),
                      [&](boost::system::error_code ec, size_t) { written = !ec; });
    io.run_for(milliseconds(2000));
    EXPECT_TRUE(written);
}

TEST(BlockingConnect, AnUnansweredConnectFailsAtTheDeadline) {
    asio::io_context io;
    Blackhole blackhole(io);
    ASSERT_TRUE(blackhole.filler) << blackhole.filler.status().message();
    auto socket = connect_to(io, kLoopback, blackhole.port, milliseconds(200));
    ASSERT_FALSE(socket) << "the blackhole accepted";
    EXPECT_EQ(socket.status().message(),
              "cannot connect to 127.0.0.1:" + std::to_string(blackhole.port)
                      + ": timed out after 200 ms");
}

}  // namespace
}  // namespace cohort::transport
