// ASCII lower case, for the option values and keywords Slurm compares without case.
#pragma once

#include <string>
#include <string_view>

namespace cohort {

inline std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

}  // namespace cohort
