// MUNGE credentials (libmunge): a local munged vouches for the uid/gid of whoever encoded a
// credential, to any host that shares its key, once, within the credential's time to live.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cohort::protocol {

// What a credential vouches for once decoded.
struct MungeIdentity {
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::string payload;
};

// Asks the munged listening on `socket` for a credential carrying `payload`; `ttl_s` 0 is
// munged's default time to live (300 s unless configured).
Result<std::string> munge_encode(const std::string& socket,
                                 std::string_view payload,
                                 int ttl_s = 0);

// Decodes `credential` with the munged on `socket`. Refused (kDenied, the reason named):
// an expired, rewound (future-dated), replayed (decoded before) or invalid credential;
// kUnavailable when munged cannot be reached.
Result<MungeIdentity> munge_decode(const std::string& socket, const std::string& credential);

}  // namespace cohort::protocol
