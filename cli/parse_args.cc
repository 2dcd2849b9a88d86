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
        std::cerr << "cohort " << command << ": error: " << e.what() << " (see cohort " << command
                  << " --help)\n";
        return 2;
    }
    return -1;
}

}  // namespace cohort::cli
