// sacct's output: -o/--format field lists ("JobID,JobName%30,State"), the fixed-width table
// with its dashed rule, and -p/-P's '|'-separated form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/protocol/job_types.h"
#include "common/status.h"

namespace cohort::cli {

struct AcctField {
    std::string name;  // as sacct spells it: JobID, JobName, State, ...
    size_t width = 0;
};

enum class AcctStyle : uint8_t {
    kTable,      // padded columns under a header and a dashed rule
    kParsable,   // -p: every field followed by '|'
    kParsable2,  // -P: fields separated by '|'
};

// sacct's default: JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode.
std::vector<AcctField> default_acct_format();
// Names in any case, each optionally %WIDTH; unknown names are refused with the list.
Result<std::vector<AcctField>> parse_acct_format(std::string_view list);

// The header lines (a table's has two: names and the dashed rule).
std::vector<std::string> acct_header(const std::vector<AcctField>& fields, AcctStyle style);
// One line for a job, or (with `step`) for one of its steps.
std::string acct_line(const std::vector<AcctField>& fields,
                      AcctStyle style,
                      const protocol::JobRecord& job,
                      const protocol::StepRecord* step,
                      int64_t now);

}  // namespace cohort::cli
