#include "accounting/job_columns.h"

#include <functional>
#include <numeric>
#include <type_traits>

#include "common/comma_list.h"
#include "common/job_state.h"

namespace cohort::accounting {
namespace {

using protocol::JobRecord;
using protocol::StepRecord;

template <class Record>
struct Column {
    const char* name;
    const char* type;
    std::function<SqlValue(const Record&, const BillingWeights&)> value;
    std::function<void(Record&, const SqlRow&, int)> read;  // null: derived, not read back
    int since = 1;                                          // the schema version that added it
};

template <class Record>
Column<Record> added_in(int version, Column<Record> column) {
    column.since = version;
    return column;
}

std::string join_counts(const std::vector<uint32_t>& counts) {
    std::string out;
    for (uint32_t count : counts) {
        out += (out.empty() ? "" : ",") + std::to_string(count);
    }
    return out;
}

std::vector<uint32_t> split_counts(const std::string& text) {
    std::vector<uint32_t> counts;
    for (const std::string& item : split_comma_list(text)) {
        counts.push_back(static_cast<uint32_t>(std::stoul(item)));
    }
    return counts;
}

// Each node's GPU indexes, nodes separated by ';': "0,1;2,3"; "" without GPUs.
std::string gpu_indexes_text(const std::vector<protocol::NodeGpuAlloc>& allocs) {
    std::string out;
    for (size_t i = 0; i < allocs.size(); ++i) {
        out += i == 0 ? "" : ";";
        for (size_t g = 0; g < allocs[i].gpus.size(); ++g) {
            out += (g == 0 ? "" : ",") + std::to_string(allocs[i].gpus[g]);
        }
    }
    return out;
}

std::vector<protocol::NodeGpuAlloc> gpu_allocs_from_text(const std::string& text) {
    std::vector<protocol::NodeGpuAlloc> allocs;
    if (text.empty()) {
        return allocs;
    }
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(';', start), text.size());
        protocol::NodeGpuAlloc node;
        for (const std::string& index : split_comma_list(text.substr(start, end - start))) {
            node.gpus.push_back(static_cast<int32_t>(std::stol(index)));
        }
        allocs.push_back(std::move(node));
        start = end + 1;
    }
    return allocs;
}

int64_t sum(const std::vector<uint32_t>& counts) {
    return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

JobState state_from_text(const std::string& text) {
    auto state = parse_job_state(text);
    return state ? *state : JobState::kFailed;
}

int64_t allocated_mem_mib(const JobRecord& job) {
    return job.mem_per_node_mib * static_cast<int64_t>(job.nodes.size());
}

// Integer and text fields that round-trip unchanged; `field` gives the record's member,
// const or not.
template <class Record, class Field>
Column<Record> integer(const char* name, Field field) {
    return {name, "BIGINT NOT NULL DEFAULT 0",
            [field](const Record& record, const BillingWeights&) -> SqlValue {
                return static_cast<int64_t>(field(record));
            },
            [field](Record& record, const SqlRow& row, int column) {
                auto& target = field(record);
                target =
                        static_cast<std::remove_reference_t<decltype(target)>>(row.integer(column));
            }};
}

template <class Record, class Field>
Column<Record> text(const char* name, Field field) {
    return {name, "TEXT NOT NULL DEFAULT ''",
            [field](const Record& record, const BillingWeights&) -> SqlValue {
                return field(record);
            },
            [field](Record& record, const SqlRow& row, int column) {
                field(record) = row.text(column);
            }};
}

const std::vector<Column<JobRecord>>& job_columns() {
    static const std::vector<Column<JobRecord>> columns = {
            integer<JobRecord>(
                    "job_id", [](auto& j) -> auto& { return j.job_id; }),
            integer<JobRecord>(
                    "array_job_id", [](auto& j) -> auto& { return j.array_job_id; }),
            integer<JobRecord>(
                    "array_task_id", [](auto& j) -> auto& { return j.array_task_id; }),
            integer<JobRecord>(
                    "array_max_running", [](auto& j) -> auto& { return j.array_max_running; }),
            text<JobRecord>(
                    "array_pending", [](auto& j) -> auto& { return j.array_pending; }),
            text<JobRecord>(
                    "name", [](auto& j) -> auto& { return j.spec.name; }),
            text<JobRecord>(
                    "user_name", [](auto& j) -> auto& { return j.user_name; }),
            integer<JobRecord>(
                    "uid", [](auto& j) -> auto& { return j.uid; }),
            integer<JobRecord>(
                    "gid", [](auto& j) -> auto& { return j.gid; }),
            text<JobRecord>(
                    "account", [](auto& j) -> auto& { return j.spec.account; }),
            text<JobRecord>(
                    "partition_name", [](auto& j) -> auto& { return j.partition; }),
            text<JobRecord>(
                    "qos", [](auto& j) -> auto& { return j.spec.qos; }),
            {"state", "TEXT NOT NULL",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return std::string(job_state_name(j.state));
             },
             [](JobRecord& j, const SqlRow& r, int c) {
                 j.state = state_from_text(r.text(c));
             }},
            text<JobRecord>(
                    "reason", [](auto& j) -> auto& { return j.reason; }),
            integer<JobRecord>(
                    "exit_code", [](auto& j) -> auto& { return j.exit_code; }),
            integer<JobRecord>(
                    "exit_signal", [](auto& j) -> auto& { return j.exit_signal; }),
            integer<JobRecord>(
                    "priority", [](auto& j) -> auto& { return j.priority; }),
            integer<JobRecord>(
                    "submit_time", [](auto& j) -> auto& { return j.submit_time; }),
            integer<JobRecord>(
                    "eligible_time", [](auto& j) -> auto& { return j.eligible_time; }),
            integer<JobRecord>(
                    "start_time", [](auto& j) -> auto& { return j.start_time; }),
            integer<JobRecord>(
                    "end_time", [](auto& j) -> auto& { return j.end_time; }),
            integer<JobRecord>(
                    "time_limit_s", [](auto& j) -> auto& { return j.time_limit_s; }),
            {"nodes", "TEXT NOT NULL DEFAULT ''",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return join_comma_list(j.nodes);
             },
             [](JobRecord& j, const SqlRow& r, int c) {
                 j.nodes = split_comma_list(r.text(c));
             }},
            {"cpus_per_node", "TEXT NOT NULL DEFAULT ''",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return join_counts(j.cpus_per_node);
             },
             [](JobRecord& j, const SqlRow& r, int c) {
                 j.cpus_per_node = split_counts(r.text(c));
             }},
            {"tasks_per_node", "TEXT NOT NULL DEFAULT ''",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return join_counts(j.tasks_per_node);
             },
             [](JobRecord& j, const SqlRow& r, int c) {
                 j.tasks_per_node = split_counts(r.text(c));
             }},
            {"gpu_indexes", "TEXT NOT NULL DEFAULT ''",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return gpu_indexes_text(j.gpu_alloc);
             },
             [](JobRecord& j, const SqlRow& r, int c) {
                 j.gpu_alloc = gpu_allocs_from_text(r.text(c));
             }},
            integer<JobRecord>(
                    "mem_per_node_mib", [](auto& j) -> auto& { return j.mem_per_node_mib; }),
            integer<JobRecord>(
                    "req_nodes", [](auto& j) -> auto& { return j.spec.nodes_min; }),
            integer<JobRecord>(
                    "req_tasks", [](auto& j) -> auto& { return j.spec.ntasks; }),
            integer<JobRecord>(
                    "req_cpus_per_task", [](auto& j) -> auto& { return j.spec.cpus_per_task; }),
            integer<JobRecord>(
                    "req_mem_mib", [](auto& j) -> auto& { return j.spec.mem_mib; }),
            integer<JobRecord>(
                    "req_mem_per_cpu_mib", [](auto& j) -> auto& { return j.spec.mem_per_cpu_mib; }),
            {"alloc_cpus", "BIGINT NOT NULL DEFAULT 0",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return sum(j.cpus_per_node);
             },
             nullptr},
            {"alloc_mem_mib", "BIGINT NOT NULL DEFAULT 0",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return allocated_mem_mib(j);
             },
             nullptr},
            {"alloc_gpus", "BIGINT NOT NULL DEFAULT 0",
             [](const JobRecord& j, const BillingWeights&) -> SqlValue {
                 return allocated_gpus(j);
             },
             nullptr},
            {"billing", "DOUBLE PRECISION NOT NULL DEFAULT 0",
             [](const JobRecord& j, const BillingWeights& w) -> SqlValue {
                 return w.billing(sum(j.cpus_per_node), allocated_mem_mib(j), allocated_gpus(j));
             },
             nullptr},
            integer<JobRecord>(
                    "cpu_user_usec", [](auto& j) -> auto& { return j.usage.cpu_user_usec; }),
            integer<JobRecord>(
                    "cpu_system_usec", [](auto& j) -> auto& { return j.usage.cpu_system_usec; }),
            integer<JobRecord>(
                    "max_rss_kib", [](auto& j) -> auto& { return j.usage.max_rss_kib; }),
            text<JobRecord>(
                    "max_rss_node", [](auto& j) -> auto& { return j.usage.max_rss_node; }),
            integer<JobRecord>(
                    "oom_kills", [](auto& j) -> auto& { return j.usage.oom_kills; }),
            integer<JobRecord>(
                    "restart_count", [](auto& j) -> auto& { return j.restart_count; }),
            text<JobRecord>(
                    "work_dir", [](auto& j) -> auto& { return j.spec.cwd; }),
            text<JobRecord>(
                    "comment", [](auto& j) -> auto& { return j.spec.comment; }),
            text<JobRecord>(
                    "std_out", [](auto& j) -> auto& { return j.spec.output; }),
            text<JobRecord>(
                    "std_err", [](auto& j) -> auto& { return j.spec.error; }),
            text<JobRecord>(
                    "reservation", [](auto& j) -> auto& { return j.spec.reservation; }),
            text<JobRecord>(
                    "features", [](auto& j) -> auto& { return j.spec.constraint; }),
            text<JobRecord>(
                    "dependency", [](auto& j) -> auto& { return j.spec.dependency; }),
            added_in(4, text<JobRecord>(
                                "req_gres", [](auto& j) -> auto& { return j.spec.gres; })),
            added_in(5, integer<JobRecord>(
                                "het_job_id", [](auto& j) -> auto& { return j.het_job_id; })),
            added_in(5,
                     integer<JobRecord>(
                             "het_job_offset", [](auto& j) -> auto& { return j.het_job_offset; })),
            added_in(5, integer<JobRecord>(
                                "het_size", [](auto& j) -> auto& { return j.het_size; })),
    };
    return columns;
}

const std::vector<Column<StepRecord>>& step_columns() {
    static const std::vector<Column<StepRecord>> columns = {
            integer<StepRecord>(
                    "job_id", [](auto& s) -> auto& { return s.job_id; }),
            integer<StepRecord>(
                    "step_id", [](auto& s) -> auto& { return s.step_id; }),
            {"name", "TEXT NOT NULL DEFAULT ''",
             [](const StepRecord& s, const BillingWeights&) -> SqlValue { return s.name; },
             [](StepRecord& s, const SqlRow& r, int c) {
                 s.name = r.text(c);
             }},
            {"state", "TEXT NOT NULL",
             [](const StepRecord& s, const BillingWeights&) -> SqlValue {
                 return std::string(job_state_name(s.state));
             },
             [](StepRecord& s, const SqlRow& r, int c) {
                 s.state = state_from_text(r.text(c));
             }},
            integer<StepRecord>(
                    "exit_code", [](auto& s) -> auto& { return s.exit_code; }),
            integer<StepRecord>(
                    "exit_signal", [](auto& s) -> auto& { return s.exit_signal; }),
            integer<StepRecord>(
                    "start_time", [](auto& s) -> auto& { return s.start_time; }),
            integer<StepRecord>(
                    "end_time", [](auto& s) -> auto& { return s.end_time; }),
            integer<StepRecord>(
                    "ntasks", [](auto& s) -> auto& { return s.ntasks; }),
            {"nodes", "TEXT NOT NULL DEFAULT ''",
             [](const StepRecord& s, const BillingWeights&) -> SqlValue {
                 return join_comma_list(s.nodes);
             },
             [](StepRecord& s, const SqlRow& r, int c) {
                 s.nodes = split_comma_list(r.text(c));
             }},
            {"cpus_per_node", "TEXT NOT NULL DEFAULT ''",
             [](const StepRecord& s, const BillingWeights&) -> SqlValue {
                 return join_counts(s.cpus_per_node);
             },
             [](StepRecord& s, const SqlRow& r, int c) {
                 s.cpus_per_node = split_counts(r.text(c));
             }},
            integer<StepRecord>(
                    "overlap", [](auto& s) -> auto& { return s.overlap; }),
            added_in(2, integer<StepRecord>(
                                "cpu_user_usec",
                                [](auto& s) -> auto& { return s.usage.cpu_user_usec; })),
            added_in(2, integer<StepRecord>(
                                "cpu_system_usec",
                                [](auto& s) -> auto& { return s.usage.cpu_system_usec; })),
            added_in(2,
                     integer<StepRecord>(
                             "max_rss_kib", [](auto& s) -> auto& { return s.usage.max_rss_kib; })),
            added_in(2, text<StepRecord>(
                                "max_rss_node",
                                [](auto& s) -> auto& { return s.usage.max_rss_node; })),
            added_in(2, integer<StepRecord>(
                                "oom_kills", [](auto& s) -> auto& { return s.usage.oom_kills; })),
            added_in(6,
                     Column<StepRecord>{"gpus", "TEXT NOT NULL DEFAULT ''",
                                        [](const StepRecord& s, const BillingWeights&) -> SqlValue {
                                            std::vector<protocol::NodeGpuAlloc> held;
                                            for (const auto& gpus : s.gpus_per_node) {
                                                held.push_back({gpus, {}, {}, ""});
                                            }
                                            return gpu_indexes_text(held);
                                        },
                                        [](StepRecord& s, const SqlRow& r, int c) {
                                            s.gpus_per_node.clear();
                                            for (auto& held : gpu_allocs_from_text(r.text(c))) {
                                                s.gpus_per_node.push_back(std::move(held.gpus));
                                            }
                                        }}),
            added_in(6, text<StepRecord>(
                                "gres", [](auto& s) -> auto& { return s.gres; })),
    };
    return columns;
}

template <class Record>
std::string names_of(const std::vector<Column<Record>>& columns) {
    std::string out;
    for (const auto& column : columns) {
        out += (out.empty() ? "" : ", ") + std::string(column.name);
    }
    return out;
}

// "name TYPE" of each column that schema versions [from, to] added.
template <class Record>
std::vector<std::string> definitions_of(const std::vector<Column<Record>>& columns,
                                        int from,
                                        int to) {
    std::vector<std::string> out;
    for (const auto& column : columns) {
        if (column.since >= from && column.since <= to) {
            out.push_back(std::string(column.name) + " " + column.type);
        }
    }
    return out;
}

template <class Record>
Record read_row(const std::vector<Column<Record>>& columns, const SqlRow& row) {
    Record record;
    for (size_t i = 0; i < columns.size(); ++i) {
        if (columns[i].read) {
            columns[i].read(record, row, static_cast<int>(i));
        }
    }
    return record;
}

}  // namespace

int64_t allocated_gpus(const JobRecord& job) {
    int64_t gpus = 0;
    for (const auto& node : job.gpu_alloc) {
        gpus += static_cast<int64_t>(node.gpus.size());
    }
    return gpus;
}

const std::string& job_column_list() {
    static const std::string list = names_of(job_columns());
    return list;
}

std::vector<std::string> job_column_definitions(int from, int to) {
    return definitions_of(job_columns(), from, to);
}

size_t job_column_count() {
    return job_columns().size();
}

void append_job_values(const JobRecord& job,
                       const BillingWeights& weights,
                       std::vector<SqlValue>& out) {
    for (const auto& column : job_columns()) {
        out.push_back(column.value(job, weights));
    }
}

JobRecord job_from_row(const SqlRow& row) {
    return read_row(job_columns(), row);
}

const std::string& step_column_list() {
    static const std::string list = names_of(step_columns());
    return list;
}

std::vector<std::string> step_column_definitions(int from, int to) {
    return definitions_of(step_columns(), from, to);
}

size_t step_column_count() {
    return step_columns().size();
}

void append_step_values(const StepRecord& step, std::vector<SqlValue>& out) {
    static const BillingWeights kUnused;
    for (const auto& column : step_columns()) {
        out.push_back(column.value(step, kUnused));
    }
}

StepRecord step_from_row(const SqlRow& row) {
    return read_row(step_columns(), row);
}

}  // namespace cohort::accounting
