// Expanding Slurm-style output filename patterns (`logs/%x-%j.out`, `sweep_%A_%a.out`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cohort {

// What a pattern's codes expand to, for one job, step, node and task.
struct FilenamePatternContext {
    uint64_t job_id = 0;
    uint64_t array_job_id = 0;              // 0 = not an array: %A expands to job_id
    std::optional<uint32_t> array_task_id;  // none: %a expands to 4294967294
    std::optional<uint32_t> step_id;        // none: the batch step, %s = "batch"
    std::string job_name, node_name, user;
    uint32_t node_index = 0;          // %n
    std::optional<uint32_t> task_id;  // %t; none: leave "%t" unexpanded
    uint32_t restart_count = 0;       // %r
};

// Expands %% %A %a %b %J %j %N %n %s %t %u %x %r. A width after '%' zero-pads numeric codes
// (`%4j` -> 0128), capped at 10; on %J it pads the job id only. %N is the short host name (up to
// the first '.'). Unknown codes, and %t without a task, are left exactly as written. Any '\' in
// the pattern turns expansion off, as in Slurm: the pattern comes back with its backslashes
// removed.
std::string expand_filename_pattern(std::string_view pattern, const FilenamePatternContext& ctx);

// An output path as a task opens it: relative ones are under `cwd` ("." when empty).
std::string path_from(const std::string& path, const std::string& cwd);

}  // namespace cohort
