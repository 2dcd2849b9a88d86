// Step manager to step manager over UCX: one ucp worker, tag messages carrying whole frames.
// The worker's event fd sits in the step manager's io_context, so UCX progress runs on the
// same thread as everything else and no lock is needed. Peers learn the worker address
// through the client's peer table ("ucx:<hex>").
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <ucp/api/ucp.h>

#include "pmix/peer_transport.h"

namespace cohort::pmix {
namespace {

constexpr ucp_tag_t kFrameTag = 0x436f686f7274;  // "Cohort": every frame, from any peer
constexpr ucp_tag_t kMatchAll = ~ucp_tag_t{0};

std::string to_hex(const void* data, size_t size) {
    static const char* digits = "0123456789abcdef";
    std::string hex;
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
        hex += digits[bytes[i] >> 4];
        hex += digits[bytes[i] & 15];
    }
    return hex;
}

std::string from_hex(const std::string& hex) {
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    return bytes;
}

Result<protocol::Envelope> open_frame(const std::string& frame, const std::string& key) {
    if (frame.size() < protocol::kHeaderSize) {
        return Status::corrupt("short frame over UCX");
    }
    const std::string_view header_bytes(frame.data(), protocol::kHeaderSize);
    auto header = protocol::decode_header(header_bytes);
    if (!header) {
        return header.status();
    }
    const std::string_view body(frame.data() + protocol::kHeaderSize,
                                frame.size() - protocol::kHeaderSize);
    if (header->body_len != body.size()) {
        return Status::corrupt("frame length does not match the UCX message");
    }
    if (Status verified = protocol::verify_frame(*header, header_bytes, body, key); !verified) {
        return verified;
    }
    return protocol::Envelope{header->type, {header->uid, header->gid}, std::string(body)};
}

class UcxPeerTransport : public PeerTransport {
public:
    UcxPeerTransport(boost::asio::io_context& io, std::string key, TransportHandlers handlers)
        : io_(io), key_(std::move(key)), handlers_(std::move(handlers)), events_(io) {}

    ~UcxPeerTransport() override {
        if (events_.is_open()) {
            events_.release();  // the fd belongs to the worker
        }
        for (auto& [node, endpoint] : endpoints_) {
            // Forced: a peer that is already gone must not keep this process from exiting.
            ucp_request_param_t param{};
            param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            param.flags = UCP_EP_CLOSE_FLAG_FORCE;
            void* closing = ucp_ep_close_nbx(endpoint, &param);
            for (int spins = 0; spins < 100000 && UCS_PTR_IS_PTR(closing)
                                && ucp_request_check_status(closing) == UCS_INPROGRESS;
                 ++spins) {
                ucp_worker_progress(worker_);
            }
            if (UCS_PTR_IS_PTR(closing)) {
                ucp_request_free(closing);
            }
        }
        if (worker_ != nullptr) {
            ucp_worker_destroy(worker_);
        }
        if (context_ != nullptr) {
            ucp_cleanup(context_);
        }
    }

    Status start() {
        ucp_config_t* config = nullptr;
        if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) {
            return Status::internal("UCX: cannot read its configuration");
        }
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
        ucs_status_t status = ucp_init(&params, config, &context_);
        ucp_config_release(config);
        if (status != UCS_OK) {
            return Status::internal(std::string("UCX: ucp_init: ") + ucs_status_string(status));
        }
        ucp_worker_params_t worker_params{};
        worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
        status = ucp_worker_create(context_, &worker_params, &worker_);
        if (status != UCS_OK) {
            return Status::internal(std::string("UCX: ucp_worker_create: ")
                                    + ucs_status_string(status));
        }
        ucp_address_t* address = nullptr;
        size_t length = 0;
        status = ucp_worker_get_address(worker_, &address, &length);
        if (status != UCS_OK) {
            return Status::internal(std::string("UCX: ucp_worker_get_address: ")
                                    + ucs_status_string(status));
        }
        address_ = "ucx:" + to_hex(address, length);
        ucp_worker_release_address(worker_, address);
        int fd = -1;
        status = ucp_worker_get_efd(worker_, &fd);
        if (status != UCS_OK) {
            return Status::internal(std::string("UCX: ucp_worker_get_efd: ")
                                    + ucs_status_string(status));
        }
        events_.assign(fd);
        wait_for_events();
        return Status::ok();
    }

    std::string local_address() const override { return address_; }

    void set_peers(std::vector<std::string> addresses) override { peers_ = std::move(addresses); }

    void send(uint32_t node, std::string frame) override {
        auto endpoint = endpoint_for(node);
        if (!endpoint) {
            handlers_.on_failure(node, endpoint.status().message());
            return;
        }
        auto* buffer = new std::string(std::move(frame));
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        param.cb.send = [](void* request, ucs_status_t, void* user_data) {
            delete static_cast<std::string*>(user_data);
            ucp_request_free(request);
        };
        param.user_data = buffer;
        void* request =
                ucp_tag_send_nbx(*endpoint, buffer->data(), buffer->size(), kFrameTag, &param);
        if (UCS_PTR_IS_ERR(request)) {
            delete buffer;
            handlers_.on_failure(node, std::string("UCX send failed: ")
                                               + ucs_status_string(UCS_PTR_STATUS(request)));
        } else if (request == nullptr) {
            delete buffer;  // completed in place; the callback is not called
        }
        // Progress may take in messages without waking the event fd: look for them later,
        // not from inside this call, so frames are never handled re-entrantly.
        drive_worker();
        boost::asio::post(io_, [this] { receive_waiting(); });
    }

private:
    Result<ucp_ep_h> endpoint_for(uint32_t node) {
        auto it = endpoints_.find(node);
        if (it != endpoints_.end()) {
            return it->second;
        }
        if (node >= peers_.size() || peers_[node].rfind("ucx:", 0) != 0) {
            return Status::invalid(fmt::format("no UCX address for node {}", node));
        }
        const std::string remote = from_hex(peers_[node].substr(4));
        ucp_ep_params_t params{};
        params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        params.address = reinterpret_cast<const ucp_address_t*>(remote.data());
        ucp_ep_h endpoint = nullptr;
        ucs_status_t status = ucp_ep_create(worker_, &params, &endpoint);
        if (status != UCS_OK) {
            return Status::unavailable(std::string("UCX: ucp_ep_create: ")
                                       + ucs_status_string(status));
        }
        endpoints_[node] = endpoint;
        return endpoint;
    }

    // Drives the worker until nothing is pending, then re-arms the event fd.
    void wait_for_events() {
        progress();
        while (ucp_worker_arm(worker_) == UCS_ERR_BUSY) {
            progress();
        }
        events_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                           [this](boost::system::error_code ec) {
                               if (!ec) {
                                   wait_for_events();
                               }
                           });
    }

    void drive_worker() {
        while (ucp_worker_progress(worker_) != 0) {
        }
    }

    void progress() {
        drive_worker();
        receive_waiting();
    }

    void receive_waiting() {
        ucp_tag_recv_info_t info{};
        for (ucp_tag_message_h message = ucp_tag_probe_nb(worker_, kFrameTag, kMatchAll, 1, &info);
             message != nullptr;
             message = ucp_tag_probe_nb(worker_, kFrameTag, kMatchAll, 1, &info)) {
            std::string frame(info.length, '\0');
            ucp_request_param_t param{};
            void* request =
                    ucp_tag_msg_recv_nbx(worker_, frame.data(), frame.size(), message, &param);
            while (UCS_PTR_IS_PTR(request) && ucp_request_check_status(request) == UCS_INPROGRESS) {
                ucp_worker_progress(worker_);
            }
            if (UCS_PTR_IS_PTR(request)) {
                ucp_request_free(request);
            } else if (UCS_PTR_IS_ERR(request)) {
                spdlog::warn("step manager: UCX receive failed: {}",
                             ucs_status_string(UCS_PTR_STATUS(request)));
                continue;
            }
            auto envelope = open_frame(frame, key_);
            if (!envelope) {
                spdlog::warn("step manager: dropped a UCX message: {}",
                             envelope.status().message());
                continue;
            }
            handlers_.on_frame(std::move(*envelope));
        }
    }

    boost::asio::io_context& io_;
    std::string key_;
    TransportHandlers handlers_;
    boost::asio::posix::stream_descriptor events_;
    ucp_context_h context_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    std::string address_;
    std::vector<std::string> peers_;
    std::map<uint32_t, ucp_ep_h> endpoints_;
};

}  // namespace

Result<std::unique_ptr<PeerTransport>> make_ucx_transport(boost::asio::io_context& io,
                                                          const std::string& key,
                                                          TransportHandlers handlers) {
    auto ucx = std::make_unique<UcxPeerTransport>(io, key, std::move(handlers));
    if (Status started = ucx->start(); !started) {
        return started;
    }
    return std::unique_ptr<PeerTransport>(std::move(ucx));
}

}  // namespace cohort::pmix
