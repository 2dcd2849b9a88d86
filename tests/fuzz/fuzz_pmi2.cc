// The PMI-2 wire: a byte stream is cut into length-prefixed commands, each parsed and fed to
// the server's state machine for a 4-rank step, as from one local rank's socket.
#include <cstdint>
#include <optional>
#include <string>

#include "pmix/pmi2_server.h"
#include "pmix/pmi2_wire.h"
#include "pmix/pmi_core.h"
#include "tests/fuzz/fuzz_pmi_job.h"

using namespace cohort::pmix;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    PmiCore core(fuzzed_step());
    Pmi2Server server(core);
    std::string buffer(reinterpret_cast<const char*>(data), size);
    for (int commands = 0; commands < 64; ++commands) {
        std::optional<std::string> body;
        if (!take_pmi2_frame(buffer, body) || !body) {
            break;
        }
        auto command = parse_pmi2_command(*body);
        if (!command) {
            continue;
        }
        // A parsed command encodes to a frame that parses back to the same command.
        std::string encoded = encode_pmi2(command->name, command->pairs);
        std::optional<std::string> again;
        if (!take_pmi2_frame(encoded, again) || !again) {
            __builtin_trap();
        }
        auto reparsed = parse_pmi2_command(*again);
        if (!reparsed || reparsed->name != command->name || reparsed->pairs != command->pairs) {
            __builtin_trap();
        }
        (void)server.on_command(commands % 2, *command);
    }
    return 0;
}
