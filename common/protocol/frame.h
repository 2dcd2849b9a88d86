// Frames on the wire: a fixed header, an HMAC-SHA256 credential, then the body.
//
// Layout (little endian), see docs/dev/protocol.md:
//   u32 magic 'CHRT' | u16 version | u16 type | u32 body_len | u32 uid | u32 gid | u8 mac[32]
// The MAC covers the first 20 header bytes and the body, keyed with the cluster key, so a
// receiver verifies who sent a frame (and the uid/gid it claims) before decoding the body.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cohort::protocol {

inline constexpr uint32_t kFrameMagic = 0x54524843;  // "CHRT" as little-endian bytes
inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kMacSize = 32;
inline constexpr size_t kSignedHeaderSize = 20;
inline constexpr size_t kHeaderSize = kSignedHeaderSize + kMacSize;
inline constexpr uint32_t kMaxBodySize = 16u << 20;  // larger frames are refused unread

struct FrameHeader {
    uint16_t version = kProtocolVersion;
    uint16_t type = 0;
    uint32_t body_len = 0;
    uint32_t uid = 0;
    uint32_t gid = 0;
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

// Parses the header; rejects a bad magic, an unknown version or an over-limit length,
// so the caller never reads (or allocates for) the body of a frame it would refuse.
Result<FrameHeader> decode_header(std::string_view header_bytes);

// Checks the MAC of a parsed header against the body, in constant time.
Status verify_frame(const FrameHeader& header,
                    std::string_view header_bytes,
                    std::string_view body,
                    std::string_view key);

// HMAC-SHA256 of `data`, as frames are signed (exposed for the RFC 4231 vector tests).
std::array<unsigned char, kMacSize> hmac_sha256(std::string_view key, std::string_view data);

}  // namespace cohort::protocol
