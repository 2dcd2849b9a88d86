// The frame decoder: a header from the network is parsed, its length bounded and its MAC
// checked before any body is read. Also: a frame re-encoded from what was parsed verifies.
#include <cstdint>
#include <string_view>

#include "common/protocol/frame.h"

using namespace cohort::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const std::string_view header_bytes = bytes.substr(0, std::min(size, kHeaderSize));
    auto header = decode_header(header_bytes);
    if (!header) {
        return 0;
    }
    const std::string_view body = bytes.substr(header_bytes.size());
    (void)verify_frame(*header, header_bytes, body, "a fuzzing key");
    // A frame this side signs must verify, whatever the body.
    const std::string frame = encode_frame(header->type, {header->uid, header->gid}, body, "k");
    auto again = decode_header(std::string_view(frame).substr(0, kHeaderSize));
    if (!again
        || !verify_frame(*again, std::string_view(frame).substr(0, kHeaderSize),
                         std::string_view(frame).substr(kHeaderSize), "k")) {
        __builtin_trap();
    }
    return 0;
}
