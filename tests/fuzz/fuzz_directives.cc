// A batch script as a user submits it: its #SBATCH directives are read, spelled out as
// getopt_long would, parsed as sbatch options and turned into a job. Anything may be
// refused; nothing may crash.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/batch_script.h"
#include "cli/job_options.h"

using namespace cohort::cli;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view script(reinterpret_cast<const char*>(data), size);
    auto directives = read_batch_directives(script);
    if (!directives) {
        return 0;
    }
    // One parser for every input (building it costs more than a parse); reset between them.
    static JobOptions options;
    static const CommandOptions command(
            "", [](OptionRegistrar& add) { add_job_options(add, options, JobCommand::kBatch); });
    static const std::unique_ptr<CLI::App> app = [] {
        auto all = command.app_for(OptionSelection::all());
        all->prefix_command(false);  // as for a directive line: no operands
        return all;
    }();
    options = JobOptions{};
    app->clear();
    std::vector<std::string> words;
    for (const DirectiveLine& line : *directives) {
        words.insert(words.end(), line.words.begin(), line.words.end());
    }
    auto spelled = spell_out_prefixes(command.catalogue(), words);
    if (!spelled) {
        return 0;
    }
    std::reverse(spelled->begin(), spelled->end());  // CLI11 takes them last-first
    try {
        app->parse(*spelled);
    } catch (const CLI::Error&) {
        return 0;
    }
    std::vector<std::string> warnings;
    (void)job_spec_from(options, &warnings);
    return 0;
}
