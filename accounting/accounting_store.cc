#include "accounting/accounting_store.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <optional>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "accounting/job_columns.h"
#include "common/job_state.h"

namespace cohort::accounting {
namespace {

using protocol::JobRecord;
using protocol::StepRecord;

// Each version's step from the one before. A database records the last one applied.
struct Migration {
    int version;
    std::vector<std::string> statements;
};

std::string joined(const std::vector<std::string>& items) {
    return fmt::format("{}", fmt::join(items, ", "));
}

// Columns version `version` added to `table`, as ALTER TABLE statements.
std::vector<std::string> added_columns(const char* table,
                                       const std::vector<std::string>& definitions) {
    std::vector<std::string> statements;
    for (const std::string& definition : definitions) {
        statements.push_back(fmt::format("ALTER TABLE {} ADD COLUMN {}", table, definition));
    }
    return statements;
}

// The columns version `version` added to the three job tables.
std::vector<std::string> added_job_columns(int version) {
    std::vector<std::string> statements;
    for (const char* table : {"jobs", "job_attempts", "array_remainders"}) {
        for (std::string& statement :
             added_columns(table, job_column_definitions(version, version))) {
            statements.push_back(std::move(statement));
        }
    }
    return statements;
}

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> steps = {
            {1,
             {
                     fmt::format("CREATE TABLE jobs ({}, PRIMARY KEY (job_id))",
                                 joined(job_column_definitions(1, 1))),
                     fmt::format("CREATE TABLE job_attempts ({}, PRIMARY KEY (job_id, "
                                 "restart_count))",
                                 joined(job_column_definitions(1, 1))),
                     fmt::format("CREATE TABLE array_remainders ({}, PRIMARY KEY (job_id))",
                                 joined(job_column_definitions(1, 1))),
                     fmt::format("CREATE TABLE steps ({}, PRIMARY KEY (job_id, step_id))",
                                 joined(step_column_definitions(1, 1))),
                     "CREATE INDEX jobs_user_end ON jobs (user_name, end_time)",
                     "CREATE INDEX jobs_account_end ON jobs (account, end_time)",
                     "CREATE INDEX jobs_end ON jobs (end_time)",
                     "CREATE INDEX jobs_start ON jobs (start_time)",
                     "CREATE INDEX job_attempts_end ON job_attempts (end_time)",
             }},
            // Each step's usage from its own cgroups.
            {2, added_columns("steps", step_column_definitions(2, 2))},
            // Time nodes gave no service, for the utilization report.
            {3,
             {
                     "CREATE TABLE node_events (node_name TEXT NOT NULL, start_time BIGINT NOT "
                     "NULL, end_time BIGINT NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, "
                     "cpus BIGINT NOT NULL, gpus BIGINT NOT NULL, PRIMARY KEY (node_name, "
                     "start_time))",
                     "CREATE INDEX node_events_end ON node_events (end_time)",
             }},
            // Generic resources per node (--gres besides GPUs), for AllocTRES and ReqTRES.
            {4, added_job_columns(4)},
            // Heterogeneous jobs' components, shown as 120+1; sacct -j N finds an array's
            // tasks and a hetjob's components through these indexes, not a scan.
            {5,
             [] {
                 std::vector<std::string> statements = added_job_columns(5);
                 statements.emplace_back("CREATE INDEX jobs_array ON jobs (array_job_id)");
                 statements.emplace_back("CREATE INDEX jobs_het ON jobs (het_job_id)");
                 return statements;
             }()},
            // The GPUs a step that asked for its own holds (srun --gpus inside a job).
            {6, added_columns("steps", step_column_definitions(6, 6))},
    };
    return steps;
}

// Rows per INSERT: powers of two up to this, so a handful of statement texts cover any batch.
constexpr size_t kMaxRowsPerInsert = 128;
// Ids per SELECT ... IN (...), well under both databases' parameter limits.
constexpr size_t kIdsPerQuery = 512;

std::string placeholders(size_t first, size_t count) {
    std::string out;
    for (size_t i = 0; i < count; ++i) {
        out += fmt::format("{}${}", i == 0 ? "" : ", ", first + i);
    }
    return out;
}

std::string upsert_sql(const char* table,
                       const char* key,
                       const std::string& columns,
                       size_t column_count,
                       size_t rows) {
    std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ", table, columns);
    for (size_t row = 0; row < rows; ++row) {
        sql += fmt::format("{}({})", row == 0 ? "" : ", ",
                           placeholders(row * column_count + 1, column_count));
    }
    sql += fmt::format(" ON CONFLICT ({}) DO UPDATE SET ", key);
    bool first = true;
    size_t start = 0;
    while (start < columns.size()) {
        size_t end = columns.find(", ", start);
        const std::string name =
                columns.substr(start, end == std::string::npos ? std::string::npos : end - start);
        sql += fmt::format("{}{} = excluded.{}", first ? "" : ", ", name, name);
        first = false;
        start = end == std::string::npos ? columns.size() : end + 2;
    }
    return sql;
}

// Splits `count` into chunks of kMaxRowsPerInsert, then powers of two.
template <class Each>
Status for_each_chunk(size_t count, Each each) {
    size_t done = 0;
    while (done < count) {
        size_t rows = kMaxRowsPerInsert;
        while (rows > count - done) {
            rows /= 2;
        }
        if (Status s = each(done, rows); !s) {
            return s;
        }
        done += rows;
    }
    return Status::ok();
}

// Calls `each(clause, values)` with `where` as it is, or, when ids are named, once per chunk
// of them with the ids added: an array's id also names its tasks and a hetjob's its
// components, as in sacct -j.
template <class Each>
Status each_clause(const std::vector<uint64_t>& job_ids,
                   const std::string& where,
                   const std::vector<SqlValue>& params,
                   Each each) {
    if (job_ids.empty()) {
        return each(where, params);
    }
    for (size_t first = 0; first < job_ids.size(); first += kIdsPerQuery) {
        const size_t count = std::min(kIdsPerQuery, job_ids.size() - first);
        std::vector<SqlValue> values = params;
        for (size_t i = first; i < first + count; ++i) {
            values.emplace_back(static_cast<int64_t>(job_ids[i]));
        }
        const std::string ids = placeholders(params.size() + 1, count);
        if (Status s = each(fmt::format("{} AND (job_id IN ({}) OR array_job_id IN ({}) OR "
                                        "het_job_id IN ({}))",
                                        where, ids, ids, ids),
                            values);
            !s) {
            return s;
        }
    }
    return Status::ok();
}

// Runs overlapping [$1, $2). Found through the end-time index: a report's window is
// mostly recent, and few runs end after its start, where every run of the history may have
// started before its end (`+` keeps the planner off the start-time index).
const std::string kRanInWindow =
        "(end_time = 0 OR end_time > $1) AND +start_time > 0 AND +start_time < $2";

// CPU- and GPU-seconds per clock hour of [start, end): sreport's cluster figures are summed
// from hourly ones, each capped by the hour's own capacity.
class HourlySeconds {
public:
    HourlySeconds(int64_t start, int64_t end)
        : start_(start), end_(end), first_hour_(start - start % kHour) {
        const size_t hours =
                end > start ? static_cast<size_t>((end - 1 - first_hour_) / kHour + 1) : 0;
        cpu_.resize(hours);
        gpu_.resize(hours);
    }

    size_t hours() const { return cpu_.size(); }

    // Seconds of the window inside the hour: a whole hour but for the first and last.
    int64_t length(size_t hour) const {
        const int64_t from = first_hour_ + static_cast<int64_t>(hour) * kHour;
        return std::min(from + kHour, end_) - std::max(from, start_);
    }

    std::pair<double, double> at(size_t hour) const { return {cpu_[hour], gpu_[hour]}; }

    // `cpus` and `gpus` held over [from, to), the part inside the window.
    void add(int64_t from, int64_t to, double cpus, double gpus) {
        from = std::max(from, start_);
        to = std::min(to, end_);
        while (from < to) {
            const auto hour = static_cast<size_t>((from - first_hour_) / kHour);
            const int64_t until =
                    std::min(first_hour_ + (static_cast<int64_t>(hour) + 1) * kHour, to);
            cpu_[hour] += cpus * static_cast<double>(until - from);
            gpu_[hour] += gpus * static_cast<double>(until - from);
            from = until;
        }
    }

private:
    static constexpr int64_t kHour = 3600;
    int64_t start_;
    int64_t end_;
    int64_t first_hour_;
    std::vector<double> cpu_;
    std::vector<double> gpu_;
};

// Where a listed record lives, in listing order within one job id.
enum class ListedTable : uint8_t {
    kAttempts,
    kJobs,
    kRemainders
};

struct ListingKey {
    uint64_t job_id = 0;
    ListedTable table = ListedTable::kJobs;
    int64_t restart_count = 0;  // of an attempt; 0 otherwise

    auto operator<=>(const ListingKey&) const = default;
};

// Records read per query, and held at once, by each_job.
constexpr size_t kRecordsPerPage = 2048;

const char* table_name(ListedTable table) {
    switch (table) {
        case ListedTable::kAttempts:
            return "job_attempts";
        case ListedTable::kJobs:
            return "jobs";
        case ListedTable::kRemainders:
            return "array_remainders";
    }
    return "jobs";
}

// The records of `page_keys` in `table`, each put in `page` at its key's index: read by the
// filter's `where` between the page's first and last id (`by_range`), else by the ids.
Status read_page(SqlConnection& sql,
                 ListedTable table,
                 std::span<const ListingKey> page_keys,
                 bool by_range,
                 const std::string& where,
                 const std::vector<SqlValue>& params,
                 std::vector<std::optional<JobRecord>>& page) {
    auto keep = [&](const SqlRow& row) {
        JobRecord job = job_from_row(row);
        const ListingKey key{job.job_id, table,
                             table == ListedTable::kAttempts ? job.restart_count : 0};
        // A range also holds the records of a job split across two pages: each is kept once,
        // in the page its key is in.
        auto at = std::lower_bound(page_keys.begin(), page_keys.end(), key);
        if (at != page_keys.end() && *at == key) {
            page[static_cast<size_t>(at - page_keys.begin())] = std::move(job);
        }
    };
    const std::string select =
            fmt::format("SELECT {} FROM {} WHERE ", job_column_list(), table_name(table));
    if (by_range) {
        // The filter's rows between the page's first and last ids, read in key order.
        std::vector<SqlValue> values = params;
        values.emplace_back(static_cast<int64_t>(page_keys.front().job_id));
        values.emplace_back(static_cast<int64_t>(page_keys.back().job_id));
        return sql.run(fmt::format("{}{} AND job_id BETWEEN ${} AND ${}", select, where,
                                   values.size() - 1, values.size()),
                       values, keep);
    }
    // Named ids may lie far apart: the page's own ids only.
    std::vector<uint64_t> ids;
    for (const ListingKey& key : page_keys) {
        if (key.table == table && (ids.empty() || ids.back() != key.job_id)) {
            ids.push_back(key.job_id);
        }
    }
    for (size_t first = 0; first < ids.size(); first += kIdsPerQuery) {
        const size_t count = std::min(kIdsPerQuery, ids.size() - first);
        std::vector<SqlValue> values;
        for (size_t i = first; i < first + count; ++i) {
            values.emplace_back(static_cast<int64_t>(ids[i]));
        }
        if (Status s = sql.run(fmt::format("{}job_id IN ({})", select, placeholders(1, count)),
                               values, keep);
            !s) {
            return s;
        }
    }
    return Status::ok();
}

}  // namespace

Result<std::unique_ptr<AccountingStore>> AccountingStore::open(const std::string& location,
                                                               BillingWeights weights) {
    auto sql = sql::connect_sql(location);
    if (!sql) {
        return sql.status();
    }
    std::unique_ptr<AccountingStore> store(new AccountingStore(std::move(*sql), weights));
    if (Status s = store->migrate(); !s) {
        return s;
    }
    return store;
}

Status AccountingStore::migrate() {
    if (Status s = sql_->execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT "
                                 "NOT NULL)");
        !s) {
        return s;
    }
    int64_t version = 0;
    if (Status s = sql_->run("SELECT MAX(version) FROM schema_version", {},
                             [&version](const SqlRow& row) { version = row.integer(0); });
        !s) {
        return s;
    }
    if (version > kSchemaVersion) {
        return Status::invalid(fmt::format(
                "accounting database: schema version {} is newer than this cohortctld's {}; "
                "run a newer cohortctld",
                version, kSchemaVersion));
    }
    for (const Migration& migration : migrations()) {
        if (migration.version <= version) {
            continue;
        }
        Status applied = sql_->execute("BEGIN");
        for (const std::string& statement : migration.statements) {
            if (applied) {
                applied = sql_->execute(statement);
            }
        }
        if (applied) {
            applied = sql_->execute(
                    fmt::format("DELETE FROM schema_version; INSERT INTO schema_version VALUES "
                                "({})",
                                migration.version));
        }
        if (applied) {
            applied = sql_->execute("COMMIT");
        }
        if (!applied) {
            (void)sql_->execute("ROLLBACK");
            return applied.with_context(
                    fmt::format("accounting database: migration to version {}", migration.version));
        }
    }
    return Status::ok();
}

Status AccountingStore::upsert_jobs(const char* table,
                                    const char* key,
                                    const std::vector<JobRecord>& jobs) {
    const size_t columns = job_column_count();
    std::vector<SqlValue> values;
    return for_each_chunk(jobs.size(), [&](size_t first, size_t rows) {
        values.clear();
        for (size_t i = first; i < first + rows; ++i) {
            append_job_values(jobs[i], weights_, values);
        }
        return sql_->run(upsert_sql(table, key, job_column_list(), columns, rows), values);
    });
}

Status AccountingStore::upsert_steps(const std::vector<StepRecord>& steps) {
    const size_t columns = step_column_count();
    std::vector<SqlValue> values;
    return for_each_chunk(steps.size(), [&](size_t first, size_t rows) {
        values.clear();
        for (size_t i = first; i < first + rows; ++i) {
            append_step_values(steps[i], values);
        }
        return sql_->run(upsert_sql("steps", "job_id, step_id", step_column_list(), columns, rows),
                         values);
    });
}

Status AccountingStore::upsert_node_events(const std::vector<NodeEvent>& events) {
    static const std::string kColumns =
            "node_name, start_time, end_time, state, reason, cpus, gpus";
    constexpr size_t kColumnCount = 7;
    std::vector<SqlValue> values;
    return for_each_chunk(events.size(), [&](size_t first, size_t rows) {
        values.clear();
        for (size_t i = first; i < first + rows; ++i) {
            const NodeEvent& e = events[i];
            values.insert(values.end(),
                          {e.node, e.start, e.end, e.state, e.reason, e.cpus, e.gpus});
        }
        return sql_->run(
                upsert_sql("node_events", "node_name, start_time", kColumns, kColumnCount, rows),
                values);
    });
}

Status AccountingStore::record(const RecordBatch& batch) {
    if (batch.empty()) {
        return Status::ok();
    }
    Status s = sql_->execute("BEGIN");
    if (s) {
        s = upsert_jobs("jobs", "job_id", batch.jobs);
    }
    if (s) {
        s = upsert_jobs("job_attempts", "job_id, restart_count", batch.attempts);
    }
    if (s) {
        s = upsert_jobs("array_remainders", "job_id", batch.array_remainders);
    }
    for (uint64_t array_id : batch.remainders_emptied) {
        if (s) {
            s = sql_->run("DELETE FROM array_remainders WHERE job_id = $1",
                          {static_cast<int64_t>(array_id)});
        }
    }
    if (s) {
        s = upsert_steps(batch.steps);
    }
    if (s) {
        s = upsert_node_events(batch.node_events);
    }
    if (s) {
        s = sql_->execute("COMMIT");
    }
    if (!s) {
        (void)sql_->execute("ROLLBACK");
    }
    return s;
}

Result<std::vector<JobRecord>> AccountingStore::jobs(const AcctFilter& filter) {
    std::vector<JobRecord> out;
    Status s = each_job(filter, [&out](JobRecord&& job) { out.push_back(std::move(job)); });
    if (!s) {
        return s;
    }
    return out;
}

Status AccountingStore::each_job(const AcctFilter& filter,
                                 const std::function<void(JobRecord&&)>& visit) {
    // One WHERE clause for the three tables; lists become IN ($n, ...).
    std::vector<SqlValue> params;
    std::string where = "1 = 1";
    auto add_list = [&](const char* column, const auto& items, auto as_value) {
        if (items.empty()) {
            return;
        }
        where += fmt::format(" AND {} IN ({})", column,
                             placeholders(params.size() + 1, items.size()));
        for (const auto& item : items) {
            params.push_back(as_value(item));
        }
    };
    auto text = [](const std::string& value) -> SqlValue {
        return value;
    };
    add_list("user_name", filter.users, text);
    add_list("account", filter.accounts, text);
    add_list("state", filter.states,
             [](JobState state) -> SqlValue { return std::string(job_state_name(state)); });
    if (filter.since != 0) {
        params.emplace_back(filter.since);
        where += fmt::format(" AND (end_time = 0 OR end_time >= ${})", params.size());
    }
    if (filter.until != 0) {
        params.emplace_back(filter.until);
        where += fmt::format(" AND submit_time <= ${}", params.size());
    }
    std::vector<ListedTable> tables = {ListedTable::kJobs, ListedTable::kRemainders};
    if (filter.attempts) {
        tables.push_back(ListedTable::kAttempts);
    }

    // First only the keys of what matches, sorted: the records are then read a page at a
    // time, in that order, so a listing of any length holds one page of records, and `visit`
    // runs between queries (it may query the store; PostgreSQL streams one query at a time).
    std::vector<ListingKey> keys;
    for (ListedTable table : tables) {
        Status s = each_clause(
                filter.job_ids, where, params,
                [&](const std::string& clause, const std::vector<SqlValue>& values) {
                    return sql_->run(
                            fmt::format("SELECT job_id, restart_count FROM {} WHERE {}",
                                        table_name(table), clause),
                            values, [&keys, table](const SqlRow& row) {
                                keys.push_back(
                                        {static_cast<uint64_t>(row.integer(0)), table,
                                         table == ListedTable::kAttempts ? row.integer(1) : 0});
                            });
                });
        if (!s) {
            return s;
        }
    }
    std::sort(keys.begin(), keys.end());
    // An id listed twice by overlapping chunks (a task and its array both named) once.
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

    std::vector<std::optional<JobRecord>> page;
    for (size_t first = 0; first < keys.size(); first += kRecordsPerPage) {
        const std::span<const ListingKey> page_keys(keys.data() + first,
                                                    std::min(kRecordsPerPage, keys.size() - first));
        page.assign(page_keys.size(), std::nullopt);
        for (ListedTable table : tables) {
            Status s =
                    read_page(*sql_, table, page_keys, filter.job_ids.empty(), where, params, page);
            if (!s) {
                return s;
            }
        }
        for (std::optional<JobRecord>& job : page) {
            if (job) {
                visit(std::move(*job));
            }
        }
    }
    return Status::ok();
}

Result<std::vector<StepRecord>> AccountingStore::steps(const std::vector<uint64_t>& job_ids) {
    std::vector<StepRecord> out;
    for (size_t first = 0; first < job_ids.size(); first += kIdsPerQuery) {
        const size_t count = std::min(kIdsPerQuery, job_ids.size() - first);
        std::vector<SqlValue> values;
        for (size_t i = first; i < first + count; ++i) {
            values.emplace_back(static_cast<int64_t>(job_ids[i]));
        }
        Status s =
                sql_->run(fmt::format("SELECT {} FROM steps WHERE job_id IN ({}) ORDER BY "
                                      "job_id, step_id",
                                      step_column_list(), placeholders(1, count)),
                          values, [&out](const SqlRow& row) { out.push_back(step_from_row(row)); });
        if (!s) {
            return s;
        }
    }
    return out;
}

Result<std::vector<protocol::UsageTotalEntry>> AccountingStore::usage(int64_t start, int64_t end) {
    // Each run's seconds inside [$1, $2), weighted by what it held; earlier attempts count.
    static const std::string kRan =
            "SELECT account, user_name, alloc_cpus, alloc_gpus, billing, "
            "(CASE WHEN end_time = 0 OR end_time > $2 THEN $2 ELSE end_time END) - "
            "(CASE WHEN start_time < $1 THEN $1 ELSE start_time END) AS seconds FROM {} "
            "WHERE "
            + kRanInWindow;
    const std::string sql = fmt::format(
            "SELECT account, user_name, SUM(alloc_cpus * seconds), SUM(alloc_gpus * seconds), "
            "SUM(billing * seconds), COUNT(*) FROM ({} UNION ALL {}) AS ran "
            "GROUP BY account, user_name ORDER BY account, user_name",
            fmt::format(fmt::runtime(kRan), "jobs"),
            fmt::format(fmt::runtime(kRan), "job_attempts"));
    std::vector<protocol::UsageTotalEntry> totals;
    Status s = sql_->run(sql, {start, end}, [&totals](const SqlRow& row) {
        totals.push_back(
                {row.text(0), row.text(1), row.real(2), row.real(3), row.real(4), row.integer(5)});
    });
    if (!s) {
        return s;
    }
    return totals;
}

Result<WaitSplit> AccountingStore::eligible_wait(int64_t start,
                                                 int64_t end,
                                                 int64_t cluster_cpus,
                                                 int64_t cluster_gpus) {
    // Each query gives intervals (CPUs, GPUs, from, to) overlapping [$1, $2).
    static const std::string kRan =
            "SELECT alloc_cpus, alloc_gpus, start_time, end_time FROM {} WHERE " + kRanInWindow;
    static const std::string kLost =
            "SELECT cpus, gpus, start_time, end_time FROM node_events WHERE start_time < $2 AND "
            "(end_time = 0 OR end_time > $1)";
    // A job not started holds no CPUs yet: its request counts, at least one CPU per node or
    // task asked for.
    // The wait ends at the start, else at the end (cancelled while pending), else it goes on;
    // the conditions on start_time let the start index find the few that reach the window.
    static const std::string kWaited =
            "SELECT CASE WHEN alloc_cpus > 0 THEN alloc_cpus ELSE (CASE WHEN req_tasks > "
            "req_nodes THEN req_tasks WHEN req_nodes > 0 THEN req_nodes ELSE 1 END) * (CASE WHEN "
            "req_cpus_per_task > 0 THEN req_cpus_per_task ELSE 1 END) END, alloc_gpus, "
            "eligible_time, CASE WHEN start_time > 0 THEN start_time ELSE end_time END FROM {} "
            "WHERE eligible_time > 0 AND eligible_time < $2 AND (start_time > $1 OR (start_time "
            "= 0 AND (end_time = 0 OR end_time > $1)))";
    HourlySeconds used(start, end);
    HourlySeconds waited(start, end);
    auto into = [](HourlySeconds& hours) {
        return [&hours](const SqlRow& row) {
            const int64_t to = row.integer(3);
            hours.add(row.integer(2), to == 0 ? INT64_MAX : to, row.real(0), row.real(1));
        };
    };
    Status s = Status::ok();
    for (const char* table : {"jobs", "job_attempts"}) {
        if (s) {
            s = sql_->run(fmt::format(fmt::runtime(kRan), table), {start, end}, into(used));
        }
        if (s) {
            s = sql_->run(fmt::format(fmt::runtime(kWaited), table), {start, end}, into(waited));
        }
    }
    if (s) {
        s = sql_->run(kLost, {start, end}, into(used));  // down and maintenance alike
    }
    if (!s) {
        return s;
    }
    WaitSplit split;
    for (size_t hour = 0; hour < used.hours(); ++hour) {
        const auto seconds = static_cast<double>(used.length(hour));
        const auto [used_cpus, used_gpus] = used.at(hour);
        const auto [waited_cpus, waited_gpus] = waited.at(hour);
        const double idle_cpus =
                std::max(static_cast<double>(cluster_cpus) * seconds - used_cpus, 0.0);
        const double idle_gpus =
                std::max(static_cast<double>(cluster_gpus) * seconds - used_gpus, 0.0);
        split.planned_cpu_seconds += std::min(waited_cpus, idle_cpus);
        split.overcommitted_cpu_seconds += std::max(waited_cpus - idle_cpus, 0.0);
        split.planned_gpu_seconds += std::min(waited_gpus, idle_gpus);
        split.overcommitted_gpu_seconds += std::max(waited_gpus - idle_gpus, 0.0);
    }
    return split;
}

Result<NodeTimeTotals> AccountingStore::node_time(int64_t start, int64_t end) {
    static const std::string kSql =
            "SELECT state, SUM(cpus * seconds), SUM(gpus * seconds) FROM (SELECT state, cpus, "
            "gpus, (CASE WHEN end_time = 0 OR end_time > $2 THEN $2 ELSE end_time END) - "
            "(CASE WHEN start_time < $1 THEN $1 ELSE start_time END) AS seconds FROM "
            "node_events WHERE start_time < $2 AND (end_time = 0 OR end_time > $1)) AS lost "
            "GROUP BY state";
    NodeTimeTotals totals;
    Status s = sql_->run(kSql, {start, end}, [&totals](const SqlRow& row) {
        const bool planned = row.text(0) == "MAINT";
        (planned ? totals.planned_down_cpu_seconds : totals.down_cpu_seconds) += row.real(1);
        (planned ? totals.planned_down_gpu_seconds : totals.down_gpu_seconds) += row.real(2);
    });
    if (!s) {
        return s;
    }
    return totals;
}

Result<std::vector<NodeEvent>> AccountingStore::open_node_events() {
    std::vector<NodeEvent> events;
    Status s = sql_->run(
            "SELECT node_name, start_time, end_time, state, reason, cpus, gpus FROM node_events "
            "WHERE end_time = 0 ORDER BY node_name",
            {}, [&events](const SqlRow& row) {
                events.push_back({row.text(0), row.integer(1), row.integer(2), row.text(3),
                                  row.text(4), row.integer(5), row.integer(6)});
            });
    if (!s) {
        return s;
    }
    return events;
}

Result<std::vector<DecayedUsage>> AccountingStore::decayed_usage(int64_t now, int64_t half_life_s) {
    // A second t weighs exp(-k (now - t)) with k = ln 2 / half-life; over a run [s, e] that
    // integrates to (exp(-k (now - e)) - exp(-k (now - s))) / k.
    static const std::string kEnd =
            "(CASE WHEN end_time = 0 OR end_time > $1 THEN $1 ELSE end_time END)";
    static const std::string kRan = "SELECT user_name, account, billing, start_time, " + kEnd
                                    + " AS end_at FROM {} WHERE start_time > 0 AND start_time < $1 "
                                      "AND (end_time = 0 OR end_time > $2)";
    const bool decays = half_life_s > 0;
    const double k = decays ? std::log(2.0) / static_cast<double>(half_life_s) : 0.0;
    const std::string charge =
            decays ? "billing * (exp(CAST($3 AS DOUBLE PRECISION) * (end_at - $1)) - "
                     "exp(CAST($3 AS DOUBLE PRECISION) * (start_time - $1))) / "
                     "CAST($3 AS DOUBLE PRECISION)"
                   : "billing * (end_at - start_time)";
    const std::string sql = fmt::format(
            "SELECT user_name, account, SUM({}) FROM ({} UNION ALL {}) AS ran "
            "GROUP BY user_name, account ORDER BY user_name, account",
            charge, fmt::format(fmt::runtime(kRan), "jobs"),
            fmt::format(fmt::runtime(kRan), "job_attempts"));
    std::vector<SqlValue> params = {now, int64_t{0}};
    if (decays) {
        params = {now, now - 32 * half_life_s, k};
    }
    std::vector<DecayedUsage> usage;
    Status s = sql_->run(sql, params, [&usage](const SqlRow& row) {
        usage.push_back({row.text(0), row.text(1), row.real(2)});
    });
    if (!s) {
        return s;
    }
    return usage;
}

Result<size_t> AccountingStore::purge(int64_t ended_before, size_t limit) {
    const std::string chosen =
            "SELECT job_id FROM jobs WHERE end_time > 0 AND end_time < $1 ORDER BY end_time, "
            "job_id LIMIT $2";
    const std::vector<SqlValue> params = {ended_before, static_cast<int64_t>(limit)};
    size_t count = 0;
    Status s = sql_->execute("BEGIN");
    if (s) {
        s = sql_->run(fmt::format("SELECT COUNT(*) FROM ({}) AS chosen", chosen), params,
                      [&count](const SqlRow& row) { count = static_cast<size_t>(row.integer(0)); });
    }
    for (const char* table : {"steps", "job_attempts", "jobs"}) {
        if (s) {
            s = sql_->run(fmt::format("DELETE FROM {} WHERE job_id IN ({})", table, chosen),
                          params);
        }
    }
    for (const char* table : {"array_remainders", "node_events"}) {
        if (s) {
            s = sql_->run(fmt::format("DELETE FROM {} WHERE end_time > 0 AND end_time < $1", table),
                          {ended_before});
        }
    }
    if (s) {
        s = sql_->execute("COMMIT");
    }
    if (!s) {
        (void)sql_->execute("ROLLBACK");
        return s;
    }
    return count;
}

Result<int64_t> AccountingStore::latest_end_time() {
    int64_t latest = 0;
    Status s = sql_->run("SELECT COALESCE(MAX(end_time), 0) FROM jobs", {},
                         [&latest](const SqlRow& row) { latest = row.integer(0); });
    if (!s) {
        return s;
    }
    return latest;
}

}  // namespace cohort::accounting
