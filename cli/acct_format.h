// sacct's output: -o/--format field lists ("JobID,JobName%30,State"), the fixed-width table
// with its dashed rule, and -p/-P's '|'-separated form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/billing_weights.h"
#include "common/generic_gres.h"
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

// A job's trackable resources (sacct's AllocTRES and ReqTRES, and --json's tres).
struct TresCounts {
    double billing = 0;
    int64_t cpu = 0;
    int64_t gpu = 0;
    int64_t mem_mib = 0;
    int64_t node = 0;
    std::vector<GresCount> gres;  // other generic resources, summed over the nodes, by name
};

TresCounts allocated_tres(const protocol::JobRecord& job, const BillingWeights& weights);
// What a step holds: its CPUs and nodes, and its job's memory and GPUs on those nodes (a
// step runs in its job's allocation). No billing, as sacct prints steps.
TresCounts step_tres(const protocol::JobRecord& job, const protocol::StepRecord& step);
// The step's GPUs times its elapsed seconds (up to `now` while it runs).
int64_t step_gpu_seconds(const protocol::JobRecord& job,
                         const protocol::StepRecord& step,
                         int64_t now);
// From the job's request: nodes, tasks times CPUs per task, memory per node or per CPU.
TresCounts requested_tres(const protocol::JobRecord& job, const BillingWeights& weights);
// "billing=8,cpu=8,gres/gpu=2,gres/nvme=40,mem=16G,node=2", in name order as sacct prints
// them; memory in whole GiB as G, else MiB; zero billing, GPUs and memory left out.
std::string tres_text(const TresCounts& tres);

// sacct's default: JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode.
std::vector<AcctField> default_acct_format();
// Names in any case, each optionally %WIDTH; unknown names are refused with the list.
Result<std::vector<AcctField>> parse_acct_format(std::string_view list);

// The header lines (a table's has two: names and the dashed rule).
std::vector<std::string> acct_header(const std::vector<AcctField>& fields, AcctStyle style);
// One line for a job, or (with `step`) for one of its steps. `weights` price the billing
// TRES of AllocTRES and ReqTRES (the cluster's tres_billing_weights).
std::string acct_line(const std::vector<AcctField>& fields,
                      AcctStyle style,
                      const protocol::JobRecord& job,
                      const protocol::StepRecord* step,
                      int64_t now,
                      const BillingWeights& weights = {});

}  // namespace cohort::cli
