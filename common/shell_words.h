// Shell-style word splitting for directive lines (`#SBATCH --job-name="my job" -N 2`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort {

// Splits a line into words as sh would, without expansions: blanks separate words, '...' is
// literal, "..." honours the escapes \" \\ \$ \` (any other backslash stays), a backslash
// outside quotes takes the next character literally (a trailing one stays as '\'), and an
// unquoted '#' at the start of a word ends the line. `''` gives an empty word.
// Fails on an unterminated quote, naming the line.
Result<std::vector<std::string>> split_shell_words(std::string_view line);

}  // namespace cohort
