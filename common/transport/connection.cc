// Authenticated framed connections over Boost.Asio.
#include "common/transport/connection.h"

#include <algorithm>

#include <fmt/format.h>

namespace cohort::transport {

std::shared_ptr<Connection> Connection::create(tcp::socket socket,
                                               protocol::FrameAuth auth,
                                               protocol::Credential self) {
    return std::shared_ptr<Connection>(new Connection(std::move(socket), std::move(auth), self));
}

Connection::Connection(tcp::socket socket, protocol::FrameAuth auth, protocol::Credential self)
    : socket_(std::move(socket)),
      auth_(std::move(auth)),
      self_(self),
      sign_with_munge_(auth_.signs_with_munge()) {
    boost::system::error_code ec;
    auto endpoint = socket_.remote_endpoint(ec);
    peer_ = ec ? "?" : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
    socket_.set_option(tcp::no_delay(true), ec);
}

void Connection::start(MessageHandler on_message, CloseHandler on_close) {
    on_message_ = std::move(on_message);
    on_close_ = std::move(on_close);
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read_more(); });
}

size_t Connection::next_read_size() const {
    if (in_.size() < protocol::kHeaderSize) {
        return kSmallRead;
    }
    auto header = protocol::decode_header(std::string_view(in_).substr(0, protocol::kHeaderSize));
    if (!header) {
        return kSmallRead;  // deliver_frames closes the connection first
    }
    // The length is not yet authenticated: ask for the bytes that really arrive, a chunk at
    // a time, so a peer without the key cannot make us allocate 16 MiB with one header.
    const size_t frame = protocol::kHeaderSize + header->credential_len + header->body_len;
    return std::clamp(frame - in_.size(), kSmallRead, kReadChunk);
}

void Connection::read_more() {
    const size_t kept = in_.size();
    in_.resize(kept + next_read_size());
    socket_.async_read_some(
            asio::buffer(in_.data() + kept, in_.size() - kept),
            [self = shared_from_this(), kept](boost::system::error_code ec, size_t read) {
                self->in_.resize(kept + read);
                if (ec == asio::error::eof && kept == 0) {
                    self->close(Status::ok());
                } else if (ec == asio::error::eof) {
                    self->close(Status::io_error("truncated frame: " + ec.message()));
                } else if (ec) {
                    self->close(Status::io_error(ec.message()));
                } else {
                    self->deliver_frames();
                }
            });
}

void Connection::deliver_frames() {
    size_t offset = 0;
    while (!closed_ && in_.size() - offset >= protocol::kHeaderSize) {
        const std::string_view header_bytes(in_.data() + offset, protocol::kHeaderSize);
        auto header = protocol::decode_header(header_bytes);
        if (!header) {
            close(header.status());
            return;
        }
        const size_t frame = protocol::kHeaderSize + header->credential_len + header->body_len;
        if (in_.size() - offset < frame) {
            break;
        }
        deliver(*header, header_bytes,
                std::string_view(in_.data() + offset + protocol::kHeaderSize,
                                 frame - protocol::kHeaderSize));
        offset += frame;
    }
    if (closed_) {
        return;
    }
    in_.erase(0, offset);
    if (in_.empty() && in_.capacity() > kSmallRead) {
        in_ = std::string();  // an idle connection does not keep a large frame's buffer
    }
    read_more();
}

void Connection::deliver(const protocol::FrameHeader& header,
                         std::string_view header_bytes,
                         std::string_view rest) {
    const std::string credential(rest.substr(0, header.credential_len));
    const std::string_view body = rest.substr(header.credential_len);
    auto sender = auth_.verify(header, header_bytes, credential, body);
    if (!sender) {
        close(sender.status());
        return;
    }
    if (!credential.empty()) {
        sign_with_munge_ = true;  // answer a MUNGE client in kind: it holds no key
    }
    protocol::Envelope envelope{header.type, *sender, std::string(body), !credential.empty()};
    auto self = shared_from_this();  // the handler may drop the last other reference
    if (on_message_) {
        on_message_(self, std::move(envelope));
    }
}

void Connection::send_body(uint16_t type, const std::string& body) {
    auto frame = auth_.encode(type, self_, body, sign_with_munge_);
    if (!frame) {
        close(frame.status());
        return;
    }
    send_frame(std::move(*frame));
}

void Connection::send_frame(std::string frame) {
    asio::dispatch(socket_.get_executor(),
                   [self = shared_from_this(), frame = std::move(frame)]() mutable {
                       if (self->closed_) {
                           return;
                       }
                       self->write_queue_.push_back(std::move(frame));
                       if (self->write_queue_.size() == 1) {
                           self->write_next();
                       }
                   });
}

void Connection::write_next() {
    asio::async_write(socket_, asio::buffer(write_queue_.front()),
                      [self = shared_from_this()](boost::system::error_code ec, size_t) {
                          if (ec) {
                              self->close(Status::io_error("write failed: " + ec.message()));
                              return;
                          }
                          self->write_queue_.pop_front();
                          if (!self->write_queue_.empty()) {
                              self->write_next();
                          } else if (self->close_when_drained_) {
                              self->close(Status::ok());
                          }
                      });
}

void Connection::close_after_writes() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
        if (self->write_queue_.empty()) {
            self->close(Status::ok());
        } else {
            self->close_when_drained_ = true;
        }
    });
}

void Connection::close(const Status& reason) {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this(), reason] {
        if (self->closed_) {
            return;
        }
        self->closed_ = true;
        boost::system::error_code ignored;
        self->socket_.shutdown(tcp::socket::shutdown_both, ignored);
        self->socket_.close(ignored);
        if (self->on_close_) {
            auto handler = std::move(self->on_close_);
            self->on_message_ = nullptr;
            handler(self, reason);
        }
    });
}

Status listen_on(tcp::acceptor& acceptor, const std::string& host, uint16_t port) {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec) {
        return Status::invalid("invalid address '" + host
                               + "' (accepted: an IPv4 or IPv6 address)");
    }
    tcp::endpoint endpoint(address, port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) {
        acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        acceptor.bind(endpoint, ec);
    }
    if (!ec) {
        acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return Status::unavailable(
                fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
    }
    return Status::ok();
}

}  // namespace cohort::transport
