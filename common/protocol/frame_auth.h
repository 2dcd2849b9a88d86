// How one end of a connection vouches for the frames it sends and checks the ones it
// receives: with the cluster key (daemons, and the CLI of a single-user instance), or with
// MUNGE (users' commands on a multi-user cluster, where only root can read the key).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/protocol/frame.h"
#include "common/status.h"

namespace cohort::protocol {

class FrameAuth {
public:
    // Signs and checks with the cluster key only (implicit: most daemons need no more).
    FrameAuth(std::string cluster_key);  // NOLINT(google-explicit-constructor)

    // A server that also takes frames vouched for by the munged on `munge_socket`.
    static FrameAuth key_or_munge(std::string cluster_key, std::string munge_socket);
    // A user's client: no key; signs with MUNGE and takes replies only from `trusted_uids`
    // (the daemons' users).
    static FrameAuth munge_client(std::string munge_socket, std::vector<uint32_t> trusted_uids);

    // The same, signing its own frames with MUNGE from the first: a daemon that opens a
    // connection to a MUNGE client (which holds no key).
    FrameAuth signing_with_munge() const;

    // True where this end's frames carry MUNGE credentials before the peer sent any.
    bool signs_with_munge() const { return sign_with_munge_; }

    // A complete frame for `body`: with a MUNGE credential when `with_munge` (always when
    // this end has no key), else with the key's MAC.
    Result<std::string> encode(uint16_t type,
                               const Credential& cred,
                               std::string_view body,
                               bool with_munge) const;

    // Checks a received frame (`credential` is empty unless the header announced one) and
    // returns who sent it: the uid/gid the key or munged vouched for.
    Result<Credential> verify(const FrameHeader& header,
                              std::string_view header_bytes,
                              const std::string& credential,
                              std::string_view body) const;

private:
    FrameAuth() = default;
    Result<Credential> verify_munge(const FrameHeader& header,
                                    const std::string& credential,
                                    std::string_view body) const;

    std::string key_;
    std::string munge_socket_;            // empty: MUNGE credentials are refused
    std::vector<uint32_t> trusted_uids_;  // a client's: whose MUNGE frames it takes
    bool sign_with_munge_ = false;
};

// A daemon's: the cluster key, and MUNGE credentials from users' commands where the config
// says auth = munge.
FrameAuth daemon_frame_auth(const ClusterConfig& config, std::string cluster_key);

// A user command's: MUNGE where auth = munge (replies taken from root and daemon_user),
// otherwise the cluster key, which the caller must be able to read.
Result<FrameAuth> client_frame_auth(const ClusterConfig& config);

}  // namespace cohort::protocol
