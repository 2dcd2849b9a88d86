// squeue's output formats: -o/--format ("%.18i %.9P %j", printf-like codes) and
// -O/--Format ("JobID,Name:30,State", named fields), and --sort keys, over the job records
// a listing returns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol/job_types.h"
#include "common/status.h"

namespace cohort::cli {

// One column, or literal text between columns (code 0).
struct QueueField {
    char code = 0;       // squeue's letter: 'i' job id, 'j' name, 'T' state, ...
    size_t width = 0;    // 0: as wide as the value
    bool right = false;  // "%.8j": right-justified
    std::string literal;
};

// The CPUs the job holds, or while pending those its tasks ask for (squeue's %C, NumCPUs).
uint64_t job_cpu_count(const protocol::JobRecord& job);

// squeue's default: "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R".
std::vector<QueueField> default_queue_format();
Result<std::vector<QueueField>> parse_queue_format(std::string_view format);
Result<std::vector<QueueField>> parse_queue_fields(std::string_view list);

std::string queue_header(const std::vector<QueueField>& fields);
std::string queue_line(const std::vector<QueueField>& fields,
                       const protocol::JobRecord& job,
                       int64_t now);

// --sort: comma-separated codes, "-" before one for descending ("-t,i").
struct SortKey {
    char code = 0;
    bool descending = false;
};

Result<std::vector<SortKey>> parse_sort_keys(std::string_view list);
void sort_jobs(std::vector<protocol::JobRecord>& jobs,
               const std::vector<SortKey>& keys,
               int64_t now);

// Whether a columns-only listing (JobRecord::serialize_columns) holds what these columns and
// sort keys show: every code but %Z, the working directory, and %b, what it asks per node.
bool columns_only_suffice(const std::vector<QueueField>& fields, const std::vector<SortKey>& keys);

}  // namespace cohort::cli
