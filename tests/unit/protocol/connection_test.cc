// A real Asio connection pair on loopback: good frames arrive, bad ones close the connection.
#include "common/transport/connection.h"

#include <gtest/gtest.h>

#include "common/transport/blocking_client.h"

namespace cohort::transport {
namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

class ConnectionTest : public ::testing::Test {
protected:
    void SetUp() override {
        acceptor_.open(tcp::v4());
        acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
        acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
            ASSERT_FALSE(ec);
            server_ = Connection::create(std::move(socket), kKey, {0, 0});
            server_->start(
                    [this](const std::shared_ptr<Connection>& conn, protocol::Envelope e) {
                        received_.push_back(e.type);
                        conn->send(protocol::AckReply{"got it"});
                    },
                    [this](const std::shared_ptr<Connection>&, const Status& why) {
                        closed_ = true;
                        close_reason_ = why;
                    });
        });
    }

    // Runs the server side until `done` or 5 s (bounded).
    template <typename Pred>
    void run_until(Pred done) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            io_.run_for(std::chrono::milliseconds(10));
        }
    }

    asio::io_context io_;
    tcp::acceptor acceptor_{io_};
    uint16_t port_ = 0;
    std::shared_ptr<Connection> server_;
    std::vector<uint16_t> received_;
    bool closed_ = false;
    Status close_reason_;
};

TEST_F(ConnectionTest, GoodFrameIsDeliveredAndAnswered) {
    std::thread client_thread([this] {
        auto client = BlockingClient::connect("127.0.0.1", port_, kKey, {7, 7});
        ASSERT_TRUE(client);
        auto reply = client->call<protocol::AckReply>(protocol::QueryNodesRequest{});
        ASSERT_TRUE(reply) << reply.status().message();
        EXPECT_EQ(reply->message, "got it");
    });
    run_until([&] { return !received_.empty(); });
    io_.run_for(std::chrono::milliseconds(50));
    client_thread.join();
    ASSERT_EQ(received_.size(), 1u);
}

TEST_F(ConnectionTest, WrongKeyClosesTheConnectionWithAReason) {
    std::thread client_thread([this] {
        auto client = BlockingClient::connect(
                "127.0.0.1", port_, std::string("wrong-key-wrong-key-wrong-key!!"), {7, 7});
        ASSERT_TRUE(client);
        auto reply = client->call<protocol::AckReply>(protocol::QueryNodesRequest{});
        EXPECT_FALSE(reply);
    });
    run_until([&] { return closed_; });
    client_thread.join();
    EXPECT_TRUE(closed_);
    EXPECT_TRUE(received_.empty());
    EXPECT_EQ(close_reason_.code(), StatusCode::kPermissionDenied);
}

TEST_F(ConnectionTest, GarbageBytesCloseTheConnection) {
    std::thread client_thread([this] {
        asio::io_context io;
        tcp::socket socket(io);
        socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
        std::string garbage(protocol::kHeaderSize, 'G');
        asio::write(socket, asio::buffer(garbage));
        char byte;
        boost::system::error_code ec;
        socket.read_some(asio::buffer(&byte, 1), ec);  // returns when the server closes
    });
    run_until([&] { return closed_; });
    client_thread.join();
    EXPECT_TRUE(closed_);
    EXPECT_EQ(close_reason_.code(), StatusCode::kCorrupt);
    EXPECT_TRUE(received_.empty());
}

// Sends `bytes` on a raw socket and waits for the server to close it.
void send_raw(uint16_t port, const std::string& bytes) {
    asio::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    asio::write(socket, asio::buffer(bytes));
    socket.shutdown(tcp::socket::shutdown_send);
    char byte;
    boost::system::error_code ec;
    socket.read_some(asio::buffer(&byte, 1), ec);
}

std::string with_body_len(std::string frame, uint32_t len) {
    for (int i = 0; i < 4; ++i) {
        frame[8 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
    }
    return frame;
}

TEST_F(ConnectionTest, OverLimitLengthClosesWithoutReadingTheBody) {
    std::string frame = encode_message(protocol::AckReply{"x"}, {0, 0}, kKey);
    std::thread client([&] {
        send_raw(port_,
                 with_body_len(frame, protocol::kMaxBodySize + 1).substr(0, protocol::kHeaderSize));
    });
    run_until([&] { return closed_; });
    client.join();
    EXPECT_EQ(close_reason_.code(), StatusCode::kCorrupt);
    EXPECT_NE(close_reason_.message().find("exceeds the limit"), std::string::npos);
    EXPECT_TRUE(received_.empty());
}

TEST_F(ConnectionTest, TruncatedBodyClosesTheConnection) {
    // Claims 16 MiB, sends 10 bytes and hangs up: refused as truncated, nothing delivered.
    std::string frame = encode_message(protocol::AckReply{"x"}, {0, 0}, kKey);
    std::thread client(
            [&] { send_raw(port_, with_body_len(frame, protocol::kMaxBodySize).substr(0, 62)); });
    run_until([&] { return closed_; });
    client.join();
    EXPECT_EQ(close_reason_.code(), StatusCode::kIoError);
    EXPECT_NE(close_reason_.message().find("truncated"), std::string::npos);
    EXPECT_TRUE(received_.empty());
}

// As a stream cuts frames: several in one segment, one split across two, one larger than a
// read. Each is delivered once, and the peer's hang-up between frames is an orderly close.
TEST_F(ConnectionTest, FramesAreDeliveredHoweverTheStreamCutsThem) {
    const std::string small = encode_message(protocol::AckReply{"a"}, {0, 0}, kKey);
    const std::string large =
            encode_message(protocol::AckReply{std::string(200 * 1024, 'x')}, {0, 0}, kKey);
    std::thread client([&] {
        asio::io_context io;
        tcp::socket socket(io);
        socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
        asio::write(socket, asio::buffer(small + small + small.substr(0, 30)));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        asio::write(socket, asio::buffer(small.substr(30) + large));
        socket.shutdown(tcp::socket::shutdown_send);
        char reply[4096];
        boost::system::error_code ec;
        while (!ec) {
            socket.read_some(asio::buffer(reply), ec);  // the acks, then the server's close
        }
    });
    run_until([&] { return closed_; });
    client.join();
    EXPECT_EQ(received_.size(), 4u);
    EXPECT_TRUE(close_reason_.is_ok()) << close_reason_.message();
}

}  // namespace
}  // namespace cohort::transport
