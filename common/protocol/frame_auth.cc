#include "common/protocol/frame_auth.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <pwd.h>

#include "common/protocol/messages.h"
#include "common/protocol/munge_credential.h"

namespace cohort::protocol {

FrameAuth::FrameAuth(std::string cluster_key) : key_(std::move(cluster_key)) {}

FrameAuth FrameAuth::key_or_munge(std::string cluster_key, std::string munge_socket) {
    FrameAuth auth(std::move(cluster_key));
    auth.munge_socket_ = std::move(munge_socket);
    return auth;
}

FrameAuth FrameAuth::munge_client(std::string munge_socket, std::vector<uint32_t> trusted_uids) {
    FrameAuth auth;
    auth.munge_socket_ = std::move(munge_socket);
    auth.trusted_uids_ = std::move(trusted_uids);
    auth.sign_with_munge_ = true;
    return auth;
}

FrameAuth FrameAuth::signing_with_munge() const {
    FrameAuth auth = *this;
    auth.sign_with_munge_ = true;
    return auth;
}

Result<std::string> FrameAuth::encode(uint16_t type,
                                      const Credential& cred,
                                      std::string_view body,
                                      bool with_munge) const {
    if (!with_munge && !key_.empty()) {
        return encode_frame(type, cred, body, key_);
    }
    const auto digest = frame_digest(type, cred, body);
    auto credential = munge_encode(
            munge_socket_,
            std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
    if (!credential) {
        return credential.status();
    }
    return encode_credentialed_frame(type, cred, body, *credential);
}

Result<Credential> FrameAuth::verify(const FrameHeader& header,
                                     std::string_view header_bytes,
                                     const std::string& credential,
                                     std::string_view body) const {
    if (header.credential_len == 0) {
        if (key_.empty()) {
            return Status::denied(
                    "a frame signed with the cluster key, which this end does "
                    "not hold (expected a MUNGE credential)");
        }
        if (Status verified = verify_frame(header, header_bytes, body, key_); !verified) {
            return verified;
        }
        return Credential{header.uid, header.gid};
    }
    if (munge_socket_.empty()) {
        return Status::denied(
                "a MUNGE credential, which this end does not take (auth is "
                "cluster_key)");
    }
    return verify_munge(header, credential, body);
}

Result<Credential> FrameAuth::verify_munge(const FrameHeader& header,
                                           const std::string& credential,
                                           std::string_view body) const {
    if (body.size() != header.body_len || credential.size() != header.credential_len) {
        return Status::corrupt("truncated frame");
    }
    auto identity = munge_decode(munge_socket_, credential);
    if (!identity) {
        return identity.status();
    }
    // The credential vouches for one frame: this type, this uid/gid and this body.
    const auto digest = frame_digest(header.type, {header.uid, header.gid}, body);
    if (identity->payload.size() != digest.size()
        || std::memcmp(identity->payload.data(), digest.data(), digest.size()) != 0) {
        return Status::denied(
                fmt::format("MUNGE credential refused: it was made for another frame than this {} "
                            "(altered or replayed)",
                            message_type_name(header.type)));
    }
    if (identity->uid != header.uid || identity->gid != header.gid) {
        return Status::denied(fmt::format(
                "MUNGE credential refused: it vouches for uid {} gid {}, the frame claims "
                "uid {} gid {}",
                identity->uid, identity->gid, header.uid, header.gid));
    }
    if (!trusted_uids_.empty()
        && std::find(trusted_uids_.begin(), trusted_uids_.end(), identity->uid)
                   == trusted_uids_.end()) {
        return Status::denied(fmt::format(
                "MUNGE credential refused: uid {} is not one the daemons run as", identity->uid));
    }
    return Credential{identity->uid, identity->gid};
}

FrameAuth daemon_frame_auth(const ClusterConfig& config, std::string cluster_key) {
    if (config.auth == "munge") {
        return FrameAuth::key_or_munge(std::move(cluster_key), config.munge_socket);
    }
    return FrameAuth(std::move(cluster_key));
}

Result<FrameAuth> client_frame_auth(const ClusterConfig& config) {
    if (config.auth != "munge") {
        auto key = load_key(config.key_file);
        if (!key) {
            return key.status();
        }
        return FrameAuth(std::move(*key));
    }
    std::vector<uint32_t> trusted{0};

    struct passwd entry {};
    struct passwd* found = nullptr;
    char buffer[4096];
    if (getpwnam_r(config.daemon_user.c_str(), &entry, buffer, sizeof(buffer), &found) == 0
        && found != nullptr) {
        trusted.push_back(found->pw_uid);
    } else if (char* end = nullptr; !config.daemon_user.empty()) {
        const unsigned long uid = std::strtoul(config.daemon_user.c_str(), &end, 10);
        if (*end != '\0') {
            return Status::invalid("daemon_user: unknown user '" + config.daemon_user
                                   + "' (accepted: a user name or uid)");
        }
        trusted.push_back(static_cast<uint32_t>(uid));
    }
    return FrameAuth::munge_client(config.munge_socket, std::move(trusted));
}

}  // namespace cohort::protocol
