// The one way every subcommand parses its arguments with CLI11.
#include <algorithm>
#include <iostream>

#include "cli/commands.h"

namespace cohort::cli {

int parse_args(CLI::App& app, const std::string& command, Args args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
    try {
        app.parse(args);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return 0;
    } catch (const CLI::ParseError& e) {
        // What CLI11 leaves over is what getopt would not know: say it in Slurm's words.
        const std::vector<std::string> extras = app.remaining();
        std::string what = e.what();
        if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !extras.empty()) {
            const std::string& extra = extras.front();
            const bool is_option = extra.size() > 1 && extra[0] == '-';
            what = (is_option ? "unrecognized option '" : "unexpected argument '") + extra + "'";
        }
        std::cerr << "cohort " << command << ": error: " << what << " (see cohort " << command
                  << " --help)\n";
        return 1;  // as Slurm's commands exit on a bad option or value
    }
    return -1;
}

}  // namespace cohort::cli
