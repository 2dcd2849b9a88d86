// How a step's step managers reach each other for collectives: TCP (Boost.Asio) or UCX
// (ucp tag messages). Either carries the same authenticated frames; the step manager never
// sees which one it uses.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/asio.h"
#include "common/protocol/codec.h"
#include "common/status.h"

namespace cohort::pmix {

class PeerTransport {
public:
    using FrameHandler = std::function<void(protocol::Envelope)>;
    // A peer that cannot be reached; the step cannot go on without it.
    using FailureHandler = std::function<void(uint32_t node, const std::string& why)>;

    virtual ~PeerTransport() = default;
    // What the other nodes need to reach this one: "tcp://host:port" or "ucx:<hex>".
    virtual std::string local_address() const = 0;
    // Every node's address, by node index (this node's own included).
    virtual void set_peers(std::vector<std::string> addresses) = 0;
    // Sends one complete frame (protocol::encode_message) to `node`.
    virtual void send(uint32_t node, std::string frame) = 0;
};

struct TransportHandlers {
    PeerTransport::FrameHandler on_frame;
    PeerTransport::FailureHandler on_failure;
};

// Listens on `host`; frames are verified with the cluster `key`.
Result<std::unique_ptr<PeerTransport>> make_tcp_transport(boost::asio::io_context& io,
                                                          const std::string& key,
                                                          const std::string& host,
                                                          TransportHandlers handlers);

// A UCX worker driven from `io` (through its event fd); frames are verified with `key`.
Result<std::unique_ptr<PeerTransport>> make_ucx_transport(boost::asio::io_context& io,
                                                          const std::string& key,
                                                          TransportHandlers handlers);

}  // namespace cohort::pmix
