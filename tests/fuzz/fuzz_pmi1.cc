// PMI-1 ("simple") lines from a local rank, as MPICH's built-in client sends them, into the
// server's state machine for a 4-rank step: any bytes, any order of commands.
#include <cstdint>
#include <string>
#include <string_view>

#include "pmix/pmi_core.h"
#include "pmix/pmi_simple.h"
#include "tests/fuzz/fuzz_pmi_job.h"

using namespace cohort::pmix;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    PmiCore core(fuzzed_step());
    PmiSimpleServer server(core);
    std::string_view input(reinterpret_cast<const char*>(data), size);
    // The first byte of each line says which of two clients sends it.
    while (!input.empty()) {
        const size_t end = input.find('\n');
        const std::string_view line = input.substr(0, end);
        if (!line.empty()) {
            (void)server.on_line(static_cast<PmiClient>(line[0] & 1), std::string(line.substr(1)));
        }
        input = end == std::string_view::npos ? std::string_view{} : input.substr(end + 1);
    }
    return 0;
}
