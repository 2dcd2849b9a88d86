// Accounting: every job, ended attempt and step in a schema of its own (docs/dev/accounting.md),
// on SQLite (the embedded default) or PostgreSQL, through one SqlConnection. What `cohort acct`
// lists and `cohort report` sums. Used from one thread (the AccountingWriter's).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/billing_weights.h"
#include "common/protocol/job_types.h"
#include "common/protocol/messages.h"
#include "common/sql/sql_connection.h"

namespace cohort::accounting {

using sql::SqlConnection;
using sql::SqlRow;
using sql::SqlValue;

// A span of time a node gave no service (sreport's Down and PLND Down): DOWN (down, or
// drained with no job left), or MAINT (inside a maintenance reservation). Keyed by node and
// start; `end` is 0 while it lasts, and the record is replaced when it ends.
struct NodeEvent {
    std::string node;
    int64_t start = 0;
    int64_t end = 0;
    std::string state;  // "DOWN" or "MAINT"
    std::string reason;
    int64_t cpus = 0;
    int64_t gpus = 0;
};

// Node-seconds lost in a window, weighted by the nodes' CPUs and GPUs.
struct NodeTimeTotals {
    double down_cpu_seconds = 0;
    double down_gpu_seconds = 0;
    double planned_down_cpu_seconds = 0;  // MAINT
    double planned_down_gpu_seconds = 0;
};

// Seconds eligible jobs waited to start in a window, weighted by their CPUs and GPUs (GPUs
// of waits that ended in a start: they are known once allocated), split as sreport splits
// them, hour by hour: Planned up to what the hour left idle, the rest OverCommitted.
struct WaitSplit {
    double planned_cpu_seconds = 0;
    double overcommitted_cpu_seconds = 0;
    double planned_gpu_seconds = 0;
    double overcommitted_gpu_seconds = 0;
};

// Changes to record together, in one transaction. Records replace earlier ones of the same
// job (attempt, step); a batch holds at most one record of each.
struct RecordBatch {
    std::vector<protocol::JobRecord> jobs;
    std::vector<protocol::JobRecord> attempts;  // ended attempts, keyed by restart_count
    std::vector<protocol::JobRecord> array_remainders;
    std::vector<uint64_t> remainders_emptied;  // array ids whose every task was split off
    std::vector<protocol::StepRecord> steps;
    std::vector<NodeEvent> node_events;

    bool empty() const {
        return jobs.empty() && attempts.empty() && array_remainders.empty()
               && remainders_emptied.empty() && steps.empty() && node_events.empty();
    }
};

struct AcctFilter {
    std::vector<uint64_t> job_ids;
    std::vector<std::string> users;
    std::vector<std::string> accounts;
    std::vector<JobState> states;
    int64_t since = 0;      // unfinished, or ended at or after this; 0: any
    int64_t until = 0;      // submitted at or before this; 0: any
    bool attempts = false;  // each job's ended attempts too, just before it
};

// One user's fair-share usage under one account: billing-seconds, each second weighed by
// how far it has decayed.
struct DecayedUsage {
    std::string user;
    std::string account;  // as the job gave it ("" when none)
    double billing_seconds = 0;
};

class AccountingStore {
public:
    // The schema this code writes; the `schema_version` table holds a database's.
    static constexpr int kSchemaVersion = 6;

    // Connects, then creates or migrates the schema (refusing one newer than this code's).
    static Result<std::unique_ptr<AccountingStore>> open(const std::string& location,
                                                         BillingWeights weights = {});

    Status record(const RecordBatch& batch);
    // What `filter` matches, in listing order: by job id, a job's ended attempts before it,
    // an array's remainder after the task that shares its id. `visit` is called between
    // queries (it may query the store) and only one page of records is held at a time.
    Status each_job(const AcctFilter& filter,
                    const std::function<void(protocol::JobRecord&&)>& visit);
    // each_job, collected.
    Result<std::vector<protocol::JobRecord>> jobs(const AcctFilter& filter);
    Result<std::vector<protocol::StepRecord>> steps(const std::vector<uint64_t>& job_ids);
    // Allocation overlapping [start, end), counting only the part inside it. Running jobs
    // count up to `end`, so callers pass an end no later than now.
    // Per account and user (`cohort report`), as the controller replies with them.
    Result<std::vector<protocol::UsageTotalEntry>> usage(int64_t start, int64_t end);
    // Node events overlapping [start, end), the part inside it; open ones count up to `end`.
    Result<NodeTimeTotals> node_time(int64_t start, int64_t end);
    // Each attempt's wait from its eligible time to its start (or its end, or `end` while
    // still pending), the part inside [start, end), split per clock hour against what the
    // hour left idle: `cluster_cpus` and `cluster_gpus` for the whole hour, less what ran and
    // what nodes lost in it. Attempts never eligible count nothing.
    Result<WaitSplit> eligible_wait(int64_t start,
                                    int64_t end,
                                    int64_t cluster_cpus,
                                    int64_t cluster_gpus);
    // The events not yet ended, which a restarted controller goes on from.
    Result<std::vector<NodeEvent>> open_node_events();
    // Fair-share usage as of `now`: every run (earlier attempts too; running ones up to `now`)
    // charged its billing per second, a second `t` weighing 2^-((now - t) / half_life_s), or
    // 1 when half_life_s is 0 (no decay). Seconds decayed below 2^-32 are left out.
    Result<std::vector<DecayedUsage>> decayed_usage(int64_t now, int64_t half_life_s);
    // Deletes at most `limit` jobs that ended before `ended_before`, with their steps and
    // attempts, and the node events that ended before it; returns how many jobs went.
    Result<size_t> purge(int64_t ended_before, size_t limit);
    // The latest end time recorded; 0 for an empty store.
    Result<int64_t> latest_end_time();

    const char* backend() const { return sql_->backend(); }

private:
    AccountingStore(std::unique_ptr<SqlConnection> sql, BillingWeights weights)
        : sql_(std::move(sql)), weights_(weights) {}

    Status migrate();
    Status upsert_jobs(const char* table,
                       const char* key,
                       const std::vector<protocol::JobRecord>& jobs);
    Status upsert_steps(const std::vector<protocol::StepRecord>& steps);
    Status upsert_node_events(const std::vector<NodeEvent>& events);
    std::unique_ptr<SqlConnection> sql_;
    BillingWeights weights_;
};

}  // namespace cohort::accounting
