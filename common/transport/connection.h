// An authenticated, framed Boost.Asio TCP connection: reads frames, verifies their credential
// before anything decodes the body, and queues writes. A bad frame closes the connection.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/asio.h"
#include "common/protocol/codec.h"
#include "common/protocol/frame_auth.h"
#include "common/status.h"

namespace cohort::transport {

namespace asio = boost::asio;
using asio::ip::tcp;

class Connection : public std::enable_shared_from_this<Connection> {
public:
    using MessageHandler =
            std::function<void(const std::shared_ptr<Connection>&, protocol::Envelope)>;
    // Called once when the connection ends for any cause, with the reason (ok for an orderly
    // close); the owner logs it, so the transport itself never writes to a log.
    using CloseHandler = std::function<void(const std::shared_ptr<Connection>&, const Status&)>;

    static std::shared_ptr<Connection> create(tcp::socket socket,
                                              protocol::FrameAuth auth,
                                              protocol::Credential self);

    // Starts the read loop; handlers run on this connection's strand.
    void start(MessageHandler on_message, CloseHandler on_close);

    // Thread-safe: the frame is queued and written in order.
    template <typename Message>
    void send(const Message& message) {
        send_body(static_cast<uint16_t>(Message::kType), protocol::encode_body(message));
    }

    void send_error(const Status& status) { send(protocol::error_from_status(status)); }

    // Sends a frame already encoded with this connection's key (a relayed message).
    void send_encoded(std::string frame) { send_frame(std::move(frame)); }

    // Closes after the queued frames are written.
    void close_after_writes();
    // Closes now, reporting `reason` to the close handler.
    void close(const Status& reason);

    std::string peer() const { return peer_; }

private:
    Connection(tcp::socket socket, protocol::FrameAuth auth, protocol::Credential self);
    // Signs as the peer does (MUNGE once it sent a MUNGE frame); closes when that fails.
    void send_body(uint16_t type, const std::string& body);
    void send_frame(std::string frame);
    // Reads what has arrived, then delivers every whole frame read: a frame's header and
    // body, and small frames sent together, take one system call.
    void read_more();
    size_t next_read_size() const;
    void deliver_frames();
    // Verifies one complete frame (`rest` is its credential, if any, then its body), then
    // hands it to the message handler.
    void deliver(const protocol::FrameHeader& header,
                 std::string_view header_bytes,
                 std::string_view rest);
    void write_next();

    static constexpr size_t kSmallRead = 512;  // a header and a small body, not much more
    static constexpr size_t kReadChunk = 64 * 1024;

    tcp::socket socket_;
    protocol::FrameAuth auth_;
    protocol::Credential self_;
    std::atomic<bool> sign_with_munge_;
    std::string peer_;
    MessageHandler on_message_;
    CloseHandler on_close_;
    std::string in_;  // bytes read and not yet delivered: at most a part of one frame when idle
    std::deque<std::string> write_queue_;
    bool closed_ = false;
    bool close_when_drained_ = false;
};

// Opens, binds (SO_REUSEADDR) and listens; the error names the address and port.
Status listen_on(tcp::acceptor& acceptor, const std::string& host, uint16_t port);

}  // namespace cohort::transport
