// Comma-separated lists as Slurm's options and displays write them ("a,b,c").
#pragma once

#include <string>
#include <vector>

namespace cohort {

// "a,,b" -> {"a", "b"}: empty items are dropped; "" is no items.
std::vector<std::string> split_comma_list(const std::string& text);

// {"a", "b"} -> "a,b"; `when_empty` for no items (Slurm shows "(null)").
std::string join_comma_list(const std::vector<std::string>& items,
                            const std::string& when_empty = "");

}  // namespace cohort
