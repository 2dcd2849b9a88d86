// Shell-style word splitting for directive lines (`#SBATCH --job-name="my job" -N 2`).
#include "common/shell_words.h"

namespace cohort {
namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// The characters a backslash escapes inside double quotes, as in POSIX sh.
bool escapable_in_double_quotes(char c) {
    return c == '"' || c == '\\' || c == '$' || c == '`' || c == '\n';
}

}  // namespace

Result<std::vector<std::string>> split_shell_words(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;  // true once anything, even '', has started a word
    size_t i = 0;
    while (i < line.size()) {
        const char c = line[i];
        if (is_blank(c)) {
            if (in_word) {
                words.push_back(std::move(word));
                word.clear();
                in_word = false;
            }
            ++i;
        } else if (c == '#' && !in_word) {
            break;  // a comment: `#` inside a word (`a#b`) is literal, as in sh
        } else if (c == '\'') {
            const size_t close = line.find('\'', i + 1);
            if (close == std::string_view::npos) {
                return Status::invalid("unterminated quote in '" + std::string(line) + "'");
            }
            word.append(line.substr(i + 1, close - i - 1));
            in_word = true;
            i = close + 1;
        } else if (c == '"') {
            size_t j = i + 1;
            while (j < line.size() && line[j] != '"') {
                if (line[j] == '\\' && j + 1 < line.size()
                    && escapable_in_double_quotes(line[j + 1])) {
                    // A backslash-newline is a line continuation and vanishes.
                    if (line[j + 1] != '\n') {
                        word.push_back(line[j + 1]);
                    }
                    j += 2;
                } else {
                    word.push_back(line[j]);
                    ++j;
                }
            }
            if (j == line.size()) {
                return Status::invalid("unterminated quote in '" + std::string(line) + "'");
            }
            in_word = true;
            i = j + 1;
        } else if (c == '\\' && i + 1 < line.size()) {
            if (line[i + 1] != '\n') {
                word.push_back(line[i + 1]);
                in_word = true;
            }
            i += 2;
        } else {
            word.push_back(c);
            in_word = true;
            ++i;
        }
    }
    if (in_word) {
        words.push_back(std::move(word));
    }
    return words;
}

}  // namespace cohort
