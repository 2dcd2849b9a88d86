// The cluster config a daemon loads at start: any JSON (or not), refused with a message or
// loaded; never a crash.
#include <cstdint>
#include <string_view>

#include "common/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)cohort::parse_config_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                    "fuzzed.json");
    return 0;
}
