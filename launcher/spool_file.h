// Writing a node's spool records so that a reader (the next agent, `cohort stop`) never sees
// half of one.
#pragma once

#include <string>

#include "common/status.h"

namespace cohort::agent {

// Writes `text` to a temporary file beside `path` and renames it over `path`.
Status replace_file(const std::string& path, const std::string& text);

}  // namespace cohort::agent
