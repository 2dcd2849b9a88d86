#include "cli/acct_format.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "cli/json_output.h"
#include "common/ascii_lower.h"
#include "common/hostlist.h"
#include "common/job_state.h"
#include "common/time_spec.h"

namespace cohort::cli {
namespace {

struct FieldInfo {
    const char* name;
    size_t width;  // sacct's default
};

constexpr FieldInfo kFields[] = {
        {"JobID", 12},      {"JobIDRaw", 12},    {"JobName", 10},    {"User", 9},
        {"UID", 6},         {"Account", 10},     {"Partition", 10},  {"QOS", 10},
        {"State", 10},      {"ExitCode", 8},     {"Elapsed", 10},    {"ElapsedRaw", 10},
        {"Timelimit", 10},  {"NodeList", 15},    {"NNodes", 8},      {"NCPUS", 10},
        {"AllocCPUS", 10},  {"AllocNodes", 10},  {"Submit", 19},     {"Eligible", 19},
        {"Start", 19},      {"End", 19},         {"Restarts", 8},    {"WorkDir", 20},
        {"Comment", 15},    {"Reason", 20},      {"ReqMem", 10},     {"Priority", 10},
        {"ArrayJobID", 15}, {"ArrayTaskID", 15}, {"TotalCPU", 10},   {"UserCPU", 10},
        {"SystemCPU", 10},  {"MaxRSS", 10},      {"MaxRSSNode", 10}, {"AllocTRES", 10},
        {"ReqTRES", 10},
};

// sacct's CPU time form: [D-]HH:MM:SS, or MM:SS.mmm under an hour.
std::string cpu_time_text(uint64_t usec) {
    const uint64_t seconds = usec / 1000000;
    if (seconds >= 3600) {
        return format_clock(static_cast<int64_t>(seconds));
    }
    return fmt::format("{:02}:{:02}.{:03}", seconds / 60, seconds % 60, usec / 1000 % 1000);
}

int64_t elapsed_seconds(int64_t start, int64_t end, int64_t now) {
    if (start == 0) {
        return 0;
    }
    return std::max<int64_t>((end != 0 ? end : now) - start, 0);
}

int64_t total(const std::vector<uint32_t>& counts) {
    int64_t sum = 0;
    for (uint32_t c : counts) {
        sum += c;
    }
    return sum;
}

// Memory as Slurm's TRES strings write it: whole GiB as G, else MiB.
std::string tres_memory(int64_t mib) {
    return mib % 1024 == 0 && mib != 0 ? fmt::format("{}G", mib / 1024) : fmt::format("{}M", mib);
}

std::string job_value(const std::string& name,
                      const protocol::JobRecord& job,
                      const protocol::StepRecord* step,
                      int64_t now,
                      const BillingWeights& weights) {
    const std::string id = job.display_id() + (step ? "." + std::to_string(step->step_id) : "");
    const std::vector<std::string>& nodes = step ? step->nodes : job.nodes;
    const int64_t start = step ? step->start_time : job.start_time;
    const int64_t end = step ? step->end_time : job.end_time;
    const int64_t cpus = step ? total(step->cpus_per_node) : total(job.cpus_per_node);
    if (name == "JobID") {
        return id;
    }
    if (name == "JobIDRaw") {
        return std::to_string(job.job_id) + (step ? "." + std::to_string(step->step_id) : "");
    }
    if (name == "JobName") {
        return step ? step->name : job.spec.name;
    }
    if (name == "State") {
        return std::string(job_state_name(step ? step->state : job.state));
    }
    if (name == "ExitCode") {
        return fmt::format("{}:{}", step ? step->exit_code : job.exit_code,
                           step ? step->exit_signal : job.exit_signal);
    }
    if (name == "Elapsed") {
        return format_clock(elapsed_seconds(start, end, now));
    }
    if (name == "ElapsedRaw") {
        return std::to_string(elapsed_seconds(start, end, now));
    }
    if (name == "NodeList") {
        return nodes.empty() ? "None assigned" : compress_hostlist(nodes);
    }
    if (name == "NNodes" || name == "AllocNodes") {
        return std::to_string(nodes.empty() && !step ? job.spec.nodes_min : nodes.size());
    }
    if (name == "NCPUS" || name == "AllocCPUS") {
        return std::to_string(cpus);
    }
    if (name == "Start") {
        return format_time(start);
    }
    if (name == "AllocTRES") {
        if (step != nullptr) {
            return tres_text(step_tres(job, *step));
        }
        return nodes.empty() ? "" : tres_text(allocated_tres(job, weights));
    }
    if (name == "End") {
        return format_time(end);
    }
    // A job's usage is its cgroups' on every node; a step's, its own cgroups'.
    const protocol::JobUsage& used = step ? step->usage : job.usage;
    if (name == "TotalCPU") {
        return cpu_time_text(used.cpu_user_usec + used.cpu_system_usec);
    }
    if (name == "UserCPU") {
        return cpu_time_text(used.cpu_user_usec);
    }
    if (name == "SystemCPU") {
        return cpu_time_text(used.cpu_system_usec);
    }
    if (name == "MaxRSS") {
        return used.max_rss_kib > 0 ? std::to_string(used.max_rss_kib) + "K" : "";
    }
    if (name == "MaxRSSNode") {
        return used.max_rss_node;
    }
    if (step != nullptr) {
        return "";  // the rest describe the job, as sacct leaves them blank on steps
    }
    if (name == "User") {
        return job.user_name;
    }
    if (name == "UID") {
        return std::to_string(job.uid);
    }
    if (name == "Account") {
        return job.spec.account;
    }
    if (name == "Partition") {
        return job.partition;
    }
    if (name == "QOS") {
        return job.spec.qos;
    }
    if (name == "Timelimit") {
        return job.time_limit_s < 0 ? "UNLIMITED" : format_clock(job.time_limit_s);
    }
    if (name == "Submit") {
        return format_time(job.submit_time);
    }
    if (name == "Eligible") {
        return format_time(job.eligible_time);
    }
    if (name == "Restarts") {
        return std::to_string(job.restart_count);
    }
    if (name == "WorkDir") {
        return job.spec.cwd;
    }
    if (name == "Comment") {
        return job.spec.comment;
    }
    if (name == "Reason") {
        return job.reason;
    }
    if (name == "ReqMem") {
        return job.spec.mem_per_cpu_mib > 0 ? std::to_string(job.spec.mem_per_cpu_mib) + "Mc"
                                            : std::to_string(job.spec.mem_mib) + "M";
    }
    if (name == "Priority") {
        return std::to_string(job.priority);
    }
    if (name == "ReqTRES") {
        return tres_text(requested_tres(job, weights));
    }
    if (name == "ArrayJobID") {
        return job.is_array_task() ? std::to_string(job.array_job_id) : "";
    }
    if (name == "ArrayTaskID") {
        return job.is_array_task() ? (job.is_array_remainder() ? job.array_pending
                                                               : std::to_string(job.array_task_id))
                                   : "";
    }
    return "";
}

std::string joined(const std::vector<AcctField>& fields,
                   AcctStyle style,
                   const std::vector<std::string>& values) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (style == AcctStyle::kTable) {
            // Text fields are left-aligned, numbers and states right-aligned, as sacct does;
            // a value wider than its column is cut and marked with '+'.
            std::string value = values[i];
            const size_t width = fields[i].width;
            if (value.size() > width) {
                value = value.substr(0, width - 1) + "+";
            }
            const bool left = fields[i].name == "JobID" || fields[i].name == "JobIDRaw"
                              || fields[i].name == "NodeList" || fields[i].name == "WorkDir";
            line += left ? fmt::format("{:<{}} ", value, width)
                         : fmt::format("{:>{}} ", value, width);
        } else {
            line += values[i];
            if (style == AcctStyle::kParsable || i + 1 < fields.size()) {
                line += "|";
            }
        }
    }
    return line;
}

}  // namespace

// The job's generic resources per node (--gres besides GPUs) times `nodes`.
std::vector<GresCount> gres_on(const protocol::JobRecord& job, int64_t nodes) {
    if (job.spec.gres.empty()) {
        return {};
    }
    auto per_node = parse_generic_gres("--gres", job.spec.gres);
    std::vector<GresCount> total = per_node ? *per_node : std::vector<GresCount>{};
    for (GresCount& gres : total) {
        gres.count *= nodes;
    }
    return total;
}

TresCounts allocated_tres(const protocol::JobRecord& job, const BillingWeights& weights) {
    TresCounts tres;
    tres.node = static_cast<int64_t>(job.nodes.size());
    tres.cpu = total(job.cpus_per_node);
    tres.mem_mib = job.mem_per_node_mib * tres.node;
    for (const auto& node : job.gpu_alloc) {
        tres.gpu += static_cast<int64_t>(node.gpus.size());
    }
    tres.billing = weights.billing(tres.cpu, tres.mem_mib, tres.gpu);
    tres.gres = gres_on(job, tres.node);
    return tres;
}

TresCounts step_tres(const protocol::JobRecord& job, const protocol::StepRecord& step) {
    TresCounts tres;
    tres.node = static_cast<int64_t>(step.nodes.size());
    tres.cpu = total(step.cpus_per_node);
    tres.mem_mib = job.mem_per_node_mib * tres.node;
    if (!step.gpus_per_node.empty()) {  // the step asked for GPUs of its own
        for (const auto& gpus : step.gpus_per_node) {
            tres.gpu += static_cast<int64_t>(gpus.size());
        }
    } else {
        for (const std::string& node : step.nodes) {
            const auto at = std::find(job.nodes.begin(), job.nodes.end(), node);
            const auto index = static_cast<size_t>(at - job.nodes.begin());
            if (index < job.gpu_alloc.size()) {
                tres.gpu += static_cast<int64_t>(job.gpu_alloc[index].gpus.size());
            }
        }
    }
    tres.gres = gres_on(job, tres.node);
    if (!step.gres.empty()) {  // the step asked for its own, per node
        auto per_node = parse_generic_gres("--gres", step.gres);
        tres.gres = per_node ? *per_node : std::vector<GresCount>{};
        for (GresCount& gres : tres.gres) {
            gres.count *= tres.node;
        }
    }
    return tres;
}

int64_t step_gpu_seconds(const protocol::JobRecord& job,
                         const protocol::StepRecord& step,
                         int64_t now) {
    return step_tres(job, step).gpu * elapsed_seconds(step.start_time, step.end_time, now);
}

TresCounts requested_tres(const protocol::JobRecord& job, const BillingWeights& weights) {
    TresCounts tres;
    tres.node = std::max<int64_t>(job.spec.nodes_min, 1);
    tres.cpu = std::max<int64_t>(job.spec.ntasks, tres.node)
               * std::max<int64_t>(job.spec.cpus_per_task, 1);
    tres.mem_mib = job.spec.mem_per_cpu_mib > 0 ? job.spec.mem_per_cpu_mib * tres.cpu
                                                : job.spec.mem_mib * tres.node;
    tres.billing = weights.billing(tres.cpu, tres.mem_mib, 0);
    tres.gres = gres_on(job, tres.node);
    return tres;
}

std::string tres_text(const TresCounts& tres) {
    std::vector<std::pair<std::string, std::string>> items;  // name, value
    if (tres.billing > 0) {
        items.emplace_back("billing", std::to_string(static_cast<int64_t>(tres.billing + 0.5)));
    }
    items.emplace_back("cpu", std::to_string(tres.cpu));
    if (tres.gpu > 0) {
        items.emplace_back("gres/gpu", std::to_string(tres.gpu));
    }
    for (const GresCount& gres : tres.gres) {
        items.emplace_back("gres/" + gres.name, std::to_string(gres.count));
    }
    if (tres.mem_mib > 0) {
        items.emplace_back("mem", tres_memory(tres.mem_mib));
    }
    items.emplace_back("node", std::to_string(tres.node));
    std::sort(items.begin(), items.end());
    std::string out;
    for (const auto& [name, value] : items) {
        out += (out.empty() ? "" : ",") + name + "=" + value;
    }
    return out;
}

std::vector<AcctField> default_acct_format() {
    return *parse_acct_format("JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode");
}

Result<std::vector<AcctField>> parse_acct_format(std::string_view list) {
    std::vector<AcctField> fields;
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        const std::string_view item = list.substr(start, comma - start);
        const size_t percent = item.find('%');
        const std::string name = ascii_lower(item.substr(0, percent));
        const FieldInfo* info = nullptr;
        for (const FieldInfo& candidate : kFields) {
            if (ascii_lower(candidate.name) == name) {
                info = &candidate;
            }
        }
        if (info == nullptr) {
            std::string names;
            for (const FieldInfo& candidate : kFields) {
                names += (names.empty() ? "" : ", ") + std::string(candidate.name);
            }
            return Status::invalid(fmt::format("--format: invalid field '{}' (accepted: {})",
                                               std::string(item), names));
        }
        AcctField field{info->name, info->width};
        if (percent != std::string_view::npos) {
            const std::string width(item.substr(percent + 1));
            if (width.empty() || width.size() > 4
                || !std::all_of(width.begin(), width.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })
                || std::stoul(width) == 0) {
                return Status::invalid(fmt::format(
                        "--format: invalid width in '{}' (accepted: NAME%WIDTH, e.g. JobName%30)",
                        std::string(item)));
            }
            field.width = std::stoul(width);
        }
        fields.push_back(std::move(field));
        start = comma + 1;
    }
    return fields;
}

std::vector<std::string> acct_header(const std::vector<AcctField>& fields, AcctStyle style) {
    std::vector<std::string> names;
    std::vector<std::string> rules;
    for (const AcctField& field : fields) {
        names.push_back(field.name);
        rules.push_back(std::string(field.width, '-'));
    }
    if (style != AcctStyle::kTable) {
        return {joined(fields, style, names)};
    }
    return {joined(fields, style, names), joined(fields, style, rules)};
}

std::string acct_line(const std::vector<AcctField>& fields,
                      AcctStyle style,
                      const protocol::JobRecord& job,
                      const protocol::StepRecord* step,
                      int64_t now,
                      const BillingWeights& weights) {
    std::vector<std::string> values;
    for (const AcctField& field : fields) {
        values.push_back(job_value(field.name, job, step, now, weights));
    }
    return joined(fields, style, values);
}

}  // namespace cohort::cli
