#include "cli/queue_format.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "cli/json_output.h"
#include "common/hostlist.h"
#include "common/time_spec.h"

namespace cohort::cli {
namespace {

struct Column {
    char code;
    std::string_view title;     // as squeue prints it in the header
    std::string_view name;      // the -O field name
    std::string_view accepted;  // what it shows, for the error that lists the codes
};

constexpr Column kColumns[] = {
        {'i', "JOBID", "JobID", "job id (123 or 120_3)"},
        {'A', "JOBID", "JobArrayID", "job id as a number"},
        {'F', "ARRAY_JOB_ID", "ArrayJobID", "array job id"},
        {'K', "ARRAY_TASK_ID", "ArrayTaskID", "array task id"},
        {'j', "NAME", "Name", "job name"},
        {'u', "USER", "UserName", "user name"},
        {'U', "UID", "UserID", "user id"},
        {'a', "ACCOUNT", "Account", "account"},
        {'q', "QOS", "QOS", "QoS"},
        {'P', "PARTITION", "Partition", "partition"},
        {'T', "STATE", "State", "state"},
        {'t', "ST", "StateCompact", "state code"},
        {'M', "TIME", "TimeUsed", "time used"},
        {'l', "TIME_LIMIT", "TimeLimit", "time limit"},
        {'L', "TIME_LEFT", "TimeLeft", "time left"},
        {'D', "NODES", "NumNodes", "node count"},
        {'C', "CPUS", "NumCPUs", "CPU count"},
        {'N', "NODELIST", "NodeList", "nodes"},
        {'R', "NODELIST(REASON)", "ReasonList", "nodes, or (reason) when pending"},
        {'r', "REASON", "Reason", "reason"},
        {'Q', "PRIORITY", "Priority", "priority"},
        {'V', "SUBMIT_TIME", "SubmitTime", "submit time"},
        {'S', "START_TIME", "StartTime", "start time"},
        {'e', "END_TIME", "EndTime", "end time"},
        {'Z', "WORK_DIR", "WorkDir", "working directory"},
        {'m', "MIN_MEMORY", "MinMemory", "memory per node"},
        {'b', "TRES_PER_NODE", "tres-per-node", "GPUs and generic resources per node"},
};

const Column* find_column(char code) {
    for (const Column& column : kColumns) {
        if (column.code == code) {
            return &column;
        }
    }
    return nullptr;
}

std::string accepted_codes() {
    std::string out;
    for (const Column& column : kColumns) {
        out += fmt::format("{}%{} {}", out.empty() ? "" : ", ", column.code, column.accepted);
    }
    return out;
}

std::string accepted_names() {
    std::string out;
    for (const Column& column : kColumns) {
        out += fmt::format("{}{}", out.empty() ? "" : ", ", column.name);
    }
    return out;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x))
                      == std::tolower(static_cast<unsigned char>(y));
           });
}

int64_t elapsed_of(const protocol::JobRecord& job, int64_t now) {
    if (job.start_time == 0) {
        return 0;
    }
    const int64_t end = job.end_time != 0 ? job.end_time : now;
    return std::max<int64_t>(end - job.start_time, 0);
}

size_t nodes_of(const protocol::JobRecord& job) {
    return job.nodes.empty() ? std::max<uint32_t>(job.spec.nodes_min, 1) : job.nodes.size();
}

std::string or_null(const std::string& text) {
    return text.empty() ? "(null)" : text;
}

std::string time_or_na(int64_t unix_seconds) {
    return unix_seconds != 0 ? format_time(unix_seconds) : "N/A";
}

// As squeue: a job not yet ended shows when its time limit would end it, NONE without one.
std::string expected_end(const protocol::JobRecord& job) {
    if (job.end_time != 0) {
        return format_time(job.end_time);
    }
    const int64_t start = job.state == JobState::kPending ? job.expected_start : job.start_time;
    if (start == 0) {
        return "N/A";
    }
    return job.time_limit_s < 0 ? "NONE" : format_time(start + job.time_limit_s);
}

std::string value_of(char code, const protocol::JobRecord& job, int64_t now) {
    switch (code) {
        case 'i':
            return job.display_id();
        case 'A':
            return std::to_string(job.job_id);
        case 'F':
            return std::to_string(job.is_array_task() ? job.array_job_id : job.job_id);
        case 'K':
            if (job.is_array_remainder()) {
                return job.array_pending;
            }
            return job.is_array_task() ? std::to_string(job.array_task_id) : "N/A";
        case 'j':
            return job.spec.name;
        case 'u':
            return job.user_name;
        case 'U':
            return std::to_string(job.uid);
        case 'a':
            return or_null(job.spec.account);
        case 'q':
            return or_null(job.spec.qos);
        case 'P':
            return shown_partition(job);
        case 'T':
            return std::string(job_state_name(job.state));
        case 't':
            return std::string(job_state_code(job.state));
        case 'M':
            return format_duration(elapsed_of(job, now));
        case 'l':
            return format_duration(job.time_limit_s);
        case 'L':
            return job.time_limit_s < 0 ? "UNLIMITED"
                                        : format_duration(std::max<int64_t>(
                                                job.time_limit_s - elapsed_of(job, now), 0));
        case 'D':
            return std::to_string(nodes_of(job));
        case 'C':
            return std::to_string(job_cpu_count(job));
        case 'N':
            return compress_hostlist(job.nodes);
        case 'R':
            return job.state == JobState::kPending ? "(" + job.reason + ")"
                                                   : compress_hostlist(job.nodes);
        case 'r':
            return job.reason;
        case 'Q':
            return std::to_string(job.priority);
        case 'V':
            return time_or_na(job.submit_time);
        case 'S':
            return time_or_na(job.state == JobState::kPending ? job.expected_start
                                                              : job.start_time);
        case 'e':
            return expected_end(job);
        case 'Z':
            return job.spec.cwd;
        case 'm':
            return fmt::format("{}M",
                               job.mem_per_node_mib != 0 ? job.mem_per_node_mib : job.spec.mem_mib);
        case 'b': {
            const std::string tres = tres_per_node(job.spec);
            return tres.empty() ? "N/A" : tres;
        }
        default:
            return "";
    }
}

// squeue cuts a value to its column's width in bytes and pads it there, as printf's %*.*s.
std::string fitted(const QueueField& field, std::string value) {
    if (field.width == 0) {
        return value;
    }
    if (value.size() >= field.width) {
        value.resize(field.width);
        return value;
    }
    const size_t padding = field.width - value.size();
    return field.right ? value.insert(0, padding, ' ') : value.append(padding, ' ');
}

std::string render(const std::vector<QueueField>& fields,
                   const std::function<std::string(char)>& value) {
    std::string line;
    for (const QueueField& field : fields) {
        line += field.code == 0 ? field.literal : fitted(field, value(field.code));
    }
    while (!line.empty() && line.back() == ' ') {
        line.pop_back();
    }
    return line;
}

}  // namespace

uint64_t job_cpu_count(const protocol::JobRecord& job) {
    uint64_t cpus = 0;
    for (uint32_t c : job.cpus_per_node) {
        cpus += c;
    }
    if (cpus != 0) {
        return cpus;
    }
    const uint64_t tasks =
            job.spec.ntasks != 0 ? job.spec.ntasks
            : job.spec.ntasks_per_node != 0
                    ? uint64_t{job.spec.ntasks_per_node} * std::max<uint32_t>(job.spec.nodes_min, 1)
                    : std::max<uint32_t>(job.spec.nodes_min, 1);
    return tasks * std::max<uint32_t>(job.spec.cpus_per_task, 1);
}

std::vector<QueueField> default_queue_format() {
    return *parse_queue_format("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R");
}

Result<std::vector<QueueField>> parse_queue_format(std::string_view format) {
    std::vector<QueueField> fields;
    size_t at = 0;
    while (at < format.size()) {
        const size_t percent = format.find('%', at);
        if (percent != at) {
            const size_t end = std::min(percent, format.size());
            fields.push_back({0, 0, false, std::string(format.substr(at, end - at))});
            at = end;
            continue;
        }
        QueueField field;
        size_t i = percent + 1;
        if (i < format.size() && format[i] == '.') {
            field.right = true;
            ++i;
        }
        while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) {
            field.width = field.width * 10 + static_cast<size_t>(format[i] - '0');
            ++i;
        }
        if (i >= format.size() || find_column(format[i]) == nullptr) {
            const std::string code =
                    i < format.size() ? std::string("%") + format[i] : std::string("%");
            return Status::invalid(
                    fmt::format("--format: invalid field '{}' in '{}' (accepted: {})", code, format,
                                accepted_codes()));
        }
        field.code = format[i];
        fields.push_back(field);
        at = i + 1;
    }
    return fields;
}

Result<std::vector<QueueField>> parse_queue_fields(std::string_view list) {
    std::vector<QueueField> fields;
    while (!list.empty()) {
        const size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        QueueField field;
        field.width = 20;  // squeue -O's default column
        const size_t colon = item.find(':');
        std::string_view name = item.substr(0, colon);
        if (colon != std::string_view::npos) {
            std::string_view size = item.substr(colon + 1);
            if (!size.empty() && size.front() == '.') {
                field.right = true;
                size.remove_prefix(1);
            }
            field.width = 0;
            for (char c : size) {
                if (!std::isdigit(static_cast<unsigned char>(c))) {
                    return Status::invalid(fmt::format(
                            "--Format: invalid size '{}' of field '{}' (accepted: a number, "
                            "optionally after '.' to right-justify)",
                            item.substr(colon + 1), name));
                }
                field.width = field.width * 10 + static_cast<size_t>(c - '0');
            }
        }
        for (const Column& column : kColumns) {
            if (iequals(name, column.name)) {
                field.code = column.code;
            }
        }
        if (field.code == 0) {
            return Status::invalid(fmt::format("--Format: invalid field '{}' (accepted: {})", name,
                                               accepted_names()));
        }
        fields.push_back(field);
    }
    return fields;
}

std::string queue_header(const std::vector<QueueField>& fields) {
    return render(fields, [](char code) { return std::string(find_column(code)->title); });
}

std::string queue_line(const std::vector<QueueField>& fields,
                       const protocol::JobRecord& job,
                       int64_t now) {
    return render(fields, [&](char code) { return value_of(code, job, now); });
}

Result<std::vector<SortKey>> parse_sort_keys(std::string_view list) {
    std::vector<SortKey> keys;
    while (!list.empty()) {
        const size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        SortKey key;
        if (!item.empty() && (item.front() == '-' || item.front() == '+')) {
            key.descending = item.front() == '-';
            item.remove_prefix(1);
        }
        if (item.size() != 1 || find_column(item.front()) == nullptr) {
            return Status::invalid(
                    fmt::format("--sort: invalid key '{}' (accepted: {})", item, accepted_codes()));
        }
        key.code = item.front();
        keys.push_back(key);
    }
    return keys;
}

void sort_jobs(std::vector<protocol::JobRecord>& jobs,
               const std::vector<SortKey>& keys,
               int64_t now) {
    // Ids, counts, priorities and times compare as numbers; the rest as their text.
    auto number = [now](char code, const protocol::JobRecord& job) -> std::optional<int64_t> {
        switch (code) {
            case 'i':
            case 'A':
                return static_cast<int64_t>(job.job_id);
            case 'F':
                return static_cast<int64_t>(job.is_array_task() ? job.array_job_id : job.job_id);
            case 'K':
                return job.array_task_id;
            case 'U':
                return job.uid;
            case 'Q':
                return job.priority;
            case 'D':
                return static_cast<int64_t>(nodes_of(job));
            case 'C':
                return static_cast<int64_t>(job_cpu_count(job));
            case 'l':
                return job.time_limit_s;
            case 'M':
                return elapsed_of(job, now);
            case 'V':
                return job.submit_time;
            case 'S':
                return job.start_time;
            case 'e':
                return job.end_time;
            default:
                return std::nullopt;
        }
    };
    std::stable_sort(jobs.begin(), jobs.end(), [&](const auto& a, const auto& b) {
        for (const SortKey& key : keys) {
            int order = 0;
            if (auto x = number(key.code, a)) {
                const int64_t y = *number(key.code, b);
                order = *x < y ? -1 : *x > y ? 1 : 0;
            } else {
                order = value_of(key.code, a, now).compare(value_of(key.code, b, now));
            }
            if (order != 0) {
                return key.descending ? order > 0 : order < 0;
            }
        }
        return false;
    });
}

bool columns_only_suffice(const std::vector<QueueField>& fields, const std::vector<SortKey>& keys) {
    constexpr std::string_view kNotInColumns = "Zb";
    const auto in_columns = [&](char code) {
        return kNotInColumns.find(code) == std::string_view::npos;
    };
    return std::all_of(fields.begin(), fields.end(),
                       [&](const QueueField& field) { return in_columns(field.code); })
           && std::all_of(keys.begin(), keys.end(),
                          [&](const SortKey& key) { return in_columns(key.code); });
}

}  // namespace cohort::cli
