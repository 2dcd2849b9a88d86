// A synchronous request/reply client for short-lived CLI commands.
#pragma once

#include <chrono>
#include <string>

#include "common/asio.h"
#include "common/protocol/codec.h"
#include "common/protocol/frame_auth.h"
#include "common/status.h"

namespace cohort::transport {

class BlockingClient {
public:
    // Connects to host:port; frames are vouched for by `auth` and carry `self`.
    static Result<BlockingClient> connect(const std::string& host,
                                          uint16_t port,
                                          protocol::FrameAuth auth,
                                          protocol::Credential self);

    BlockingClient(BlockingClient&&) noexcept = default;
    BlockingClient& operator=(BlockingClient&&) noexcept = default;

    template <typename Message>
    Status send(const Message& message) {
        auto frame = auth_.encode(static_cast<uint16_t>(Message::kType), self_,
                                  protocol::encode_body(message), auth_.signs_with_munge());
        return frame ? send_frame(*frame) : frame.status();
    }

    // Reads one verified frame; an ErrorReply is returned as its Status.
    Result<protocol::Envelope> receive();
    // The same into `envelope`, reusing its body's memory: the frames of a long listing are
    // received one after another into one envelope instead of a fresh megabyte each.
    Status receive_into(protocol::Envelope& envelope);

    // send() then receive(), decoding the expected reply type.
    template <typename Reply, typename Request>
    Result<Reply> call(const Request& request) {
        if (Status sent = send(request); !sent) {
            return sent;
        }
        auto envelope = receive();
        if (!envelope) {
            return envelope.status();
        }
        return protocol::decode_message<Reply>(*envelope);
    }

private:
    BlockingClient(std::unique_ptr<boost::asio::io_context> io,
                   boost::asio::ip::tcp::socket socket,
                   protocol::FrameAuth auth,
                   protocol::Credential self);
    Status send_frame(const std::string& frame);

    std::unique_ptr<boost::asio::io_context> io_;
    boost::asio::ip::tcp::socket socket_;
    protocol::FrameAuth auth_;
    protocol::Credential self_;
};

}  // namespace cohort::transport
