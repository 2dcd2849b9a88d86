// Reading `#SBATCH` / `#COHORT` directives from the top of a batch script.
#include "cli/batch_script.h"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

#include "common/shell_words.h"

namespace cohort::cli {
namespace {

constexpr std::array<std::string_view, 2> kDirectivePrefixes = {"#SBATCH", "#COHORT"};

constexpr std::string_view kBlanks = " \t\v\f\r\n";

bool is_blank(char c) {
    return kBlanks.find(c) != std::string_view::npos;
}

// 1-based number of the line that holds byte offset.
int line_of(std::string_view script, size_t offset) {
    return 1 + static_cast<int>(std::count(script.begin(), script.begin() + offset, '\n'));
}

Status check_script(std::string_view script) {
    if (std::all_of(script.begin(), script.end(), is_blank)) {
        return Status::invalid("script is empty");
    }
    if (size_t nul = script.find('\0'); nul != std::string_view::npos) {
        return Status::invalid(
                fmt::format("script contains a NUL byte on line {} (a batch script must be text)",
                            line_of(script, nul)));
    }
    if (!script.starts_with("#!")) {
        return Status::invalid(
                "script does not start with '#!' (a batch script needs an interpreter line such "
                "as #!/bin/bash)");
    }
    if (size_t crlf = script.find("\r\n"); crlf != std::string_view::npos) {
        return Status::invalid(fmt::format(
                "script has DOS line breaks (\\r\\n), first on line {} (convert it with dos2unix)",
                line_of(script, crlf)));
    }
    return Status::ok();
}

// The part of a directive line after its prefix; nullopt when the line is not a directive.
std::optional<std::string_view> directive_body(std::string_view line) {
    for (std::string_view prefix : kDirectivePrefixes) {
        if (line.starts_with(prefix)
            && (line.size() == prefix.size() || is_blank(line[prefix.size()]))) {
            return line.substr(prefix.size());
        }
    }
    return std::nullopt;
}

}  // namespace

Result<std::vector<DirectiveLine>> read_batch_directives(std::string_view script) {
    if (Status status = check_script(script); !status) {
        return status;
    }
    std::vector<DirectiveLine> directives;
    int line_number = 0;
    size_t start = 0;
    while (start < script.size()) {
        size_t end = script.find('\n', start);
        if (end == std::string_view::npos) {
            end = script.size();
        }
        std::string_view line = script.substr(start, end - start);
        start = end + 1;
        ++line_number;
        if (std::optional<std::string_view> body = directive_body(line)) {
            while (!body->empty() && is_blank(body->front())) {
                body->remove_prefix(1);
            }
            Result<std::vector<std::string>> words = split_shell_words(*body);
            if (!words) {
                return words.status().with_context(fmt::format("line {}", line_number));
            }
            directives.push_back({line_number, std::string(line), std::move(*words)});
            continue;
        }
        // Blank lines and comments do not end the directives; the first command does.
        const size_t first = line.find_first_not_of(kBlanks);
        if (first != std::string_view::npos && line[first] != '#') {
            break;
        }
    }
    return directives;
}

std::string wrap_command_script(std::string_view command) {
    return "#!/bin/sh\n# This script was created by cohort --wrap.\n\n" + std::string(command)
           + "\n";
}

}  // namespace cohort::cli
