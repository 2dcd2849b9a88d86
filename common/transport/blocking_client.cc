// Synchronous framed client.
#include "common/transport/blocking_client.h"

#include <array>

#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"

namespace cohort::transport {

namespace asio = boost::asio;

Result<BlockingClient> BlockingClient::connect(const std::string& host,
                                               uint16_t port,
                                               protocol::FrameAuth auth,
                                               protocol::Credential self) {
    auto io = std::make_unique<asio::io_context>();
    auto socket = connect_to(*io, host, port, kCliConnectTimeout);
    if (!socket) {
        return socket.status();
    }
    return BlockingClient(std::move(io), std::move(*socket), std::move(auth), self);
}

BlockingClient::BlockingClient(std::unique_ptr<asio::io_context> io,
                               asio::ip::tcp::socket socket,
                               protocol::FrameAuth auth,
                               protocol::Credential self)
    : io_(std::move(io)), socket_(std::move(socket)), auth_(std::move(auth)), self_(self) {}

Status BlockingClient::send_frame(const std::string& frame) {
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(frame), ec);
    if (ec) {
        return Status::unavailable("send failed: " + ec.message());
    }
    return Status::ok();
}

Result<protocol::Envelope> BlockingClient::receive() {
    protocol::Envelope envelope;
    if (Status received = receive_into(envelope); !received) {
        return received;
    }
    return envelope;
}

Status BlockingClient::receive_into(protocol::Envelope& envelope) {
    std::string header_bytes(protocol::kHeaderSize, '\0');
    boost::system::error_code ec;
    asio::read(socket_, asio::buffer(header_bytes), ec);
    if (ec) {
        return Status::unavailable(
                ec == asio::error::eof
                        ? "the peer closed the connection (see its log for the reason)"
                        : "receive failed: " + ec.message());
    }
    auto header = protocol::decode_header(header_bytes);
    if (!header) {
        return header.status();
    }
    std::string credential(header->credential_len, '\0');
    std::string& body = envelope.body;
    body.resize(header->body_len);
    asio::read(socket_, std::array{asio::buffer(credential), asio::buffer(body)}, ec);
    if (ec) {
        return Status::unavailable("truncated reply: " + ec.message());
    }
    auto sender = auth_.verify(*header, header_bytes, credential, body);
    if (!sender) {
        return sender.status();
    }
    envelope.type = header->type;
    envelope.cred = *sender;
    envelope.by_munge = !credential.empty();
    if (envelope.type == static_cast<uint16_t>(protocol::MessageType::kError)) {
        return protocol::status_from_error(envelope);
    }
    return Status::ok();
}

}  // namespace cohort::transport
