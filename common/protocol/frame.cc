// Frame encoding, header checks and the HMAC credential.
#include "common/protocol/frame.h"

// The SHA-256 primitives are marked deprecated in OpenSSL 3 in favour of EVP, whose fetch
// cost is what this file avoids (see compute_mac).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "common/protocol/messages.h"

namespace cohort::protocol {
namespace {

void put_u16(std::string& out, uint16_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>(v >> 8));
}

void put_u32(std::string& out, uint32_t v) {
    for (int shift = 0; shift < 32; shift += 8) {
        out.push_back(static_cast<char>((v >> shift) & 0xff));
    }
}

uint16_t get_u16(const unsigned char* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

uint32_t get_u32(const unsigned char* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8)
           | (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// HMAC (RFC 2104) over OpenSSL's SHA-256 primitives. OpenSSL 3's EVP_MAC_fetch first builds
// its provider name maps, ~5M instructions: most of the start-up of a short-lived `cohort`
// call. The construction below is checked against RFC 4231's vectors in frame_test.cc.
std::array<unsigned char, kMacSize> compute_mac(std::string_view signed_header,
                                                std::string_view body,
                                                std::string_view key) {
    constexpr size_t kBlock = 64;
    std::array<unsigned char, kBlock> block{};
    if (key.size() > kBlock) {
        SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), block.data());
    } else {
        std::memcpy(block.data(), key.data(), key.size());
    }
    std::array<unsigned char, kBlock> inner_pad{};
    std::array<unsigned char, kBlock> outer_pad{};
    for (size_t i = 0; i < kBlock; ++i) {
        inner_pad[i] = block[i] ^ 0x36;
        outer_pad[i] = block[i] ^ 0x5c;
    }
    std::array<unsigned char, kMacSize> inner{};
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, inner_pad.data(), kBlock);
    SHA256_Update(&ctx, signed_header.data(), signed_header.size());
    SHA256_Update(&ctx, body.data(), body.size());
    SHA256_Final(inner.data(), &ctx);
    std::array<unsigned char, kMacSize> mac{};
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, outer_pad.data(), kBlock);
    SHA256_Update(&ctx, inner.data(), inner.size());
    SHA256_Final(mac.data(), &ctx);
    OPENSSL_cleanse(block.data(), block.size());
    OPENSSL_cleanse(inner_pad.data(), kBlock);
    OPENSSL_cleanse(outer_pad.data(), kBlock);
    return mac;
}

}  // namespace

std::array<unsigned char, kMacSize> hmac_sha256(std::string_view key, std::string_view data) {
    return compute_mac(data, {}, key);
}

// The header bytes a frame digest covers: magic to gid.
std::string digested_header(uint16_t type, const Credential& cred, size_t body_size) {
    std::string header;
    header.reserve(kHeaderSize);
    put_u32(header, kFrameMagic);
    put_u16(header, kProtocolVersion);
    put_u16(header, type);
    put_u32(header, static_cast<uint32_t>(body_size));
    put_u32(header, cred.uid);
    put_u32(header, cred.gid);
    return header;
}

std::string encode_frame(uint16_t type,
                         const Credential& cred,
                         std::string_view body,
                         std::string_view key) {
    std::string frame = digested_header(type, cred, body.size());
    frame.reserve(kHeaderSize + body.size());
    put_u32(frame, 0);  // no credential: the MAC vouches
    auto mac = compute_mac(frame, body, key);
    frame.append(reinterpret_cast<const char*>(mac.data()), mac.size());
    frame.append(body);
    return frame;
}

std::array<unsigned char, kMacSize> frame_digest(uint16_t type,
                                                 const Credential& cred,
                                                 std::string_view body) {
    const std::string header = digested_header(type, cred, body.size());
    std::array<unsigned char, kMacSize> digest{};
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, header.data(), header.size());
    SHA256_Update(&ctx, body.data(), body.size());
    SHA256_Final(digest.data(), &ctx);
    return digest;
}

std::string encode_credentialed_frame(uint16_t type,
                                      const Credential& cred,
                                      std::string_view body,
                                      std::string_view credential) {
    std::string frame = digested_header(type, cred, body.size());
    frame.reserve(kHeaderSize + credential.size() + body.size());
    put_u32(frame, static_cast<uint32_t>(credential.size()));
    frame.append(kMacSize, '\0');  // unused: the credential vouches
    frame.append(credential);
    frame.append(body);
    return frame;
}

Result<FrameHeader> decode_header(std::string_view header_bytes) {
    if (header_bytes.size() != kHeaderSize) {
        return Status::corrupt(fmt::format("truncated frame header: {} of {} bytes",
                                           header_bytes.size(), kHeaderSize));
    }
    const auto* p = reinterpret_cast<const unsigned char*>(header_bytes.data());
    uint32_t magic = get_u32(p);
    if (magic != kFrameMagic) {
        return Status::corrupt("bad frame magic 0x" + [&] {
            char buf[9];
            std::snprintf(buf, sizeof(buf), "%08x", magic);
            return std::string(buf);
        }() + " (not a Cohort peer?)");
    }
    FrameHeader header;
    header.version = get_u16(p + 4);
    if (header.version != kProtocolVersion) {
        return Status::corrupt(fmt::format("unsupported protocol version {} (this build speaks {})",
                                           header.version, kProtocolVersion));
    }
    header.type = get_u16(p + 6);
    if (!is_known_message_type(header.type)) {
        return Status::corrupt(fmt::format("unknown message type {}", header.type));
    }
    header.body_len = get_u32(p + 8);
    if (header.body_len > kMaxBodySize) {
        return Status::corrupt(fmt::format("frame body of {} bytes exceeds the limit of {}",
                                           header.body_len, kMaxBodySize));
    }
    header.uid = get_u32(p + 12);
    header.gid = get_u32(p + 16);
    header.credential_len = get_u32(p + 20);
    if (header.credential_len > kMaxCredentialSize) {
        return Status::corrupt(fmt::format("frame credential of {} bytes exceeds the limit of {}",
                                           header.credential_len, kMaxCredentialSize));
    }
    std::memcpy(header.mac.data(), p + kSignedHeaderSize, kMacSize);
    return header;
}

Status verify_frame(const FrameHeader& header,
                    std::string_view header_bytes,
                    std::string_view body,
                    std::string_view key) {
    if (body.size() != header.body_len) {
        return Status::corrupt(
                fmt::format("truncated frame body: {} of {} bytes", body.size(), header.body_len));
    }
    if (header.credential_len != 0) {
        return Status::denied("a MUNGE credential where the cluster key was expected");
    }
    auto expected = compute_mac(header_bytes.substr(0, kSignedHeaderSize), body, key);
    if (CRYPTO_memcmp(expected.data(), header.mac.data(), kMacSize) != 0) {
        return Status::denied("bad frame credential (wrong cluster key or altered frame)");
    }
    return Status::ok();
}

}  // namespace cohort::protocol
