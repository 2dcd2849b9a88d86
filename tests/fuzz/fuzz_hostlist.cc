// Hostlists ("node[001-128,200]"): an expression expands or is refused; what expands
// compresses to an expression that expands to the same hosts.
#include <cstdint>
#include <string_view>

#include "common/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto hosts = cohort::expand_hostlist(text);
    if (!hosts) {
        return 0;
    }
    auto again = cohort::expand_hostlist(cohort::compress_hostlist(*hosts));
    if (!again || *again != *hosts) {
        __builtin_trap();
    }
    return 0;
}
