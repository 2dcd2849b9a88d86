// Frames on the wire: a fixed header, an optional MUNGE credential, then the body.
//
// Layout (little endian), see docs/dev/protocol.md:
//   u32 magic 'CHRT' | u16 version | u16 type | u32 body_len | u32 uid | u32 gid
//   | u32 credential_len | u8 mac[32] | credential[credential_len] | body[body_len]
// A frame is vouched for in one of two ways, checked before anything decodes its body:
//  - by the cluster key (credential_len 0): `mac` is an HMAC-SHA256 of the 24 header bytes
//    before it and the body;
//  - by MUNGE (users' requests on a multi-user cluster): the credential's payload is the
//    frame digest, a SHA-256 of the first 20 header bytes and the body, so a credential
//    vouches for one frame only: its type, uid/gid and body (see frame_auth.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cohort::protocol {

inline constexpr uint32_t kFrameMagic = 0x54524843;  // "CHRT" as little-endian bytes
inline constexpr uint16_t kProtocolVersion = 4;
inline constexpr size_t kMacSize = 32;
inline constexpr size_t kDigestedHeaderSize = 20;  // magic to gid
inline constexpr size_t kSignedHeaderSize = 24;    // and credential_len
inline constexpr size_t kHeaderSize = kSignedHeaderSize + kMacSize;
inline constexpr uint32_t kMaxBodySize = 16u << 20;   // larger frames are refused unread
inline constexpr uint32_t kMaxCredentialSize = 4096;  // a MUNGE credential is ~200 bytes

struct FrameHeader {
    uint16_t version = kProtocolVersion;
    uint16_t type = 0;
    uint32_t body_len = 0;
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t credential_len = 0;
    std::array<unsigned char, kMacSize> mac{};
};

// Who sent a frame, as vouched for by its credential.
struct Credential {
    uint32_t uid = 0;
    uint32_t gid = 0;
};

// Builds a complete frame (header + body) signed with `key`.
std::string encode_frame(uint16_t type,
                         const Credential& cred,
                         std::string_view body,
                         std::string_view key);

// What a MUNGE credential for this frame must carry as its payload.
std::array<unsigned char, kMacSize> frame_digest(uint16_t type,
                                                 const Credential& cred,
                                                 std::string_view body);

// Builds a complete frame vouched for by `credential` (a MUNGE credential whose payload is
// frame_digest(type, cred, body)).
std::string encode_credentialed_frame(uint16_t type,
                                      const Credential& cred,
                                      std::string_view body,
                                      std::string_view credential);

// Parses the header; rejects a bad magic, an unknown version or an over-limit length,
// so the caller never reads (or allocates for) the body of a frame it would refuse.
Result<FrameHeader> decode_header(std::string_view header_bytes);

// Checks the MAC of a parsed header against the body, in constant time. A frame that
// carries a MUNGE credential instead is refused: the caller checks those (FrameAuth).
Status verify_frame(const FrameHeader& header,
                    std::string_view header_bytes,
                    std::string_view body,
                    std::string_view key);

// HMAC-SHA256 of `data`, as frames are signed (exposed for the RFC 4231 vector tests).
std::array<unsigned char, kMacSize> hmac_sha256(std::string_view key, std::string_view data);

}  // namespace cohort::protocol
