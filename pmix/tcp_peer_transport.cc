// Step manager to step manager over TCP: one outgoing connection per peer, opened on first
// use without blocking (frames wait in order until it is up); frames from any peer arrive on
// the connections it opened to us.
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"
#include "common/transport/connection.h"
#include "pmix/peer_transport.h"

namespace cohort::pmix {

namespace {

using transport::Connection;
using ConnectionPtr = std::shared_ptr<Connection>;

class TcpPeerTransport : public PeerTransport {
public:
    TcpPeerTransport(boost::asio::io_context& io, std::string key, TransportHandlers handlers)
        : io_(io),
          key_(std::move(key)),
          handlers_(std::move(handlers)),
          self_{static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())},
          acceptor_(io) {}

    ~TcpPeerTransport() override {
        *alive_ = false;
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        for (auto& [node, peer] : outgoing_) {
            if (peer.conn) {
                peer.conn->close(Status::ok());
            }
        }
        for (const auto& conn : incoming_) {
            conn->close(Status::ok());
        }
    }

    Status listen(const std::string& host) {
        if (Status listening = transport::listen_on(acceptor_, host, 0); !listening) {
            return listening;
        }
        address_ = "tcp://" + host + ":" + std::to_string(acceptor_.local_endpoint().port());
        accept();
        return Status::ok();
    }

    std::string local_address() const override { return address_; }

    void set_peers(std::vector<std::string> addresses) override { peers_ = std::move(addresses); }

    void send(uint32_t node, std::string frame) override {
        Peer& peer = outgoing_[node];
        if (peer.conn) {
            peer.conn->send_encoded(std::move(frame));
            return;
        }
        peer.waiting.push_back(std::move(frame));
        if (peer.waiting.size() == 1) {
            open(node);
        }
    }

private:
    // An outgoing link: connected, or being dialled with the frames it will carry first.
    struct Peer {
        ConnectionPtr conn;
        std::vector<std::string> waiting;
    };

    // Dials `node`; its waiting frames are sent once connected, or dropped with the failure
    // reported (a later send dials again).
    void open(uint32_t node) {
        if (node >= peers_.size() || peers_[node].rfind("tcp://", 0) != 0) {
            // Reported from the io loop, as a failed connect is: never inside send().
            boost::asio::post(io_, [this, alive = alive_, node] {
                if (*alive) {
                    fail(node, fmt::format("no TCP address for node {}", node));
                }
            });
            return;
        }
        const std::string hostport = peers_[node].substr(6);
        const size_t colon = hostport.rfind(':');
        const auto port = static_cast<uint16_t>(std::atoi(hostport.c_str() + colon + 1));
        transport::async_connect_to(
                io_, hostport.substr(0, colon), port, transport::kPeerConnectTimeout,
                [this, alive = alive_, node](Result<boost::asio::ip::tcp::socket> socket) {
                    if (!*alive) {
                        return;
                    }
                    if (!socket) {
                        fail(node, socket.status().message());
                        return;
                    }
                    connected(node, std::move(*socket));
                });
    }

    void connected(uint32_t node, boost::asio::ip::tcp::socket socket) {
        auto conn = Connection::create(std::move(socket), key_, self_);
        conn->start([](const ConnectionPtr&, protocol::Envelope) {},
                    [this, alive = alive_, node](const ConnectionPtr& closed, const Status&) {
                        if (!*alive) {
                            return;
                        }
                        auto it = outgoing_.find(node);
                        if (it != outgoing_.end() && it->second.conn == closed) {
                            outgoing_.erase(it);
                        }
                    });
        Peer& peer = outgoing_[node];
        peer.conn = conn;
        for (auto& frame : peer.waiting) {
            conn->send_encoded(std::move(frame));
        }
        peer.waiting.clear();
    }

    void fail(uint32_t node, const std::string& why) {
        outgoing_.erase(node);
        handlers_.on_failure(node, why);
    }

    void accept() {
        acceptor_.async_accept(
                [this](boost::system::error_code ec, boost::asio::ip::tcp::socket socket) {
                    if (ec) {
                        return;
                    }
                    auto conn = Connection::create(std::move(socket), key_, self_);
                    incoming_.insert(conn);
                    conn->start(
                            [this](const ConnectionPtr&, protocol::Envelope envelope) {
                                handlers_.on_frame(std::move(envelope));
                            },
                            [this](const ConnectionPtr& closed, const Status& why) {
                                if (!why.is_ok()) {
                                    spdlog::warn("step manager: peer {}: {}", closed->peer(),
                                                 why.message());
                                }
                                incoming_.erase(closed);
                            });
                    accept();
                });
    }

    boost::asio::io_context& io_;
    std::string key_;
    TransportHandlers handlers_;
    protocol::Credential self_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::string address_;
    std::vector<std::string> peers_;
    std::map<uint32_t, Peer> outgoing_;
    // Cleared when this transport goes: completions still queued on `io` then do nothing.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    std::set<ConnectionPtr> incoming_;
};

}  // namespace

Result<std::unique_ptr<PeerTransport>> make_tcp_transport(boost::asio::io_context& io,
                                                          const std::string& key,
                                                          const std::string& host,
                                                          TransportHandlers handlers) {
    auto tcp = std::make_unique<TcpPeerTransport>(io, key, std::move(handlers));
    if (Status listening = tcp->listen(host); !listening) {
        return listening;
    }
    return std::unique_ptr<PeerTransport>(std::move(tcp));
}

}  // namespace cohort::pmix
