// Reading `#SBATCH` / `#COHORT` directives from the top of a batch script.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort::cli {

// One directive line: its 1-based number, the whole line as written (for messages), and the
// words after the `#SBATCH`/`#COHORT` prefix, split shell-style with inline comments dropped.
struct DirectiveLine {
    int line_number;
    std::string text;
    std::vector<std::string> words;
};

// Checks that the script is one sbatch would accept (starts with `#!`, not blank, no NUL bytes,
// no CRLF line ends) and returns its directives: lines that start in column 0 with `#SBATCH` or
// `#COHORT` followed by a blank or the line end. Other comment lines (`##SBATCH`, `# SBATCH`,
// `#SBATCHX`) and blank lines are skipped, and reading stops at the first line whose first
// non-blank character is not '#'. Fails, naming the line, on an unterminated quote in a
// directive. The options themselves are not checked here.
Result<std::vector<DirectiveLine>> read_batch_directives(std::string_view script);

// The script `--wrap=cmd` submits: `#!/bin/sh`, a comment saying where it came from, then cmd.
std::string wrap_command_script(std::string_view command);

}  // namespace cohort::cli
