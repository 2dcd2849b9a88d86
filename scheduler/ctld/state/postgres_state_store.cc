#include "scheduler/ctld/state/postgres_state_store.h"

#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/job_state.h"
#include "common/protocol/codec.h"

namespace cohort::ctld {
namespace {

using sql::SqlBlob;
using sql::SqlRow;
using sql::SqlValue;

// The advisory lock key every cohortctld of a database takes: "cohort" in ASCII.
constexpr int64_t kControllerLock = 0x636f686f7274;

const char* const kPostgresSchema[] = {
        "CREATE TABLE IF NOT EXISTS jobs (job_id BIGINT PRIMARY KEY, user_name TEXT NOT NULL, "
        "state TEXT NOT NULL, submit_time BIGINT NOT NULL, end_time BIGINT NOT NULL, "
        "record BYTEA NOT NULL)",
        "CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state)",
        "CREATE INDEX IF NOT EXISTS jobs_end ON jobs (end_time)",
        "CREATE INDEX IF NOT EXISTS jobs_user_end ON jobs (user_name, end_time)",
        "CREATE TABLE IF NOT EXISTS array_remainders (job_id BIGINT PRIMARY KEY, user_name TEXT "
        "NOT NULL, state TEXT NOT NULL, submit_time BIGINT NOT NULL, end_time BIGINT NOT NULL, "
        "record BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS job_attempts (job_id BIGINT NOT NULL, attempt BIGINT NOT "
        "NULL, user_name TEXT NOT NULL, state TEXT NOT NULL, submit_time BIGINT NOT NULL, "
        "end_time BIGINT NOT NULL, record BYTEA NOT NULL, PRIMARY KEY (job_id, attempt))",
        "CREATE TABLE IF NOT EXISTS steps (job_id BIGINT NOT NULL, step_id BIGINT NOT NULL, "
        "record BYTEA NOT NULL, PRIMARY KEY (job_id, step_id))",
        "CREATE TABLE IF NOT EXISTS job_payloads (key BIGINT PRIMARY KEY, payload BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS reservations (name TEXT PRIMARY KEY, record BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, record BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)",
};

// "{1,2,3}": one array parameter for `= ANY($n::bigint[])`, whatever the list's length.
std::string id_array(const std::vector<uint64_t>& ids) {
    std::string out = "{";
    for (uint64_t id : ids) {
        out += (out.size() == 1 ? "" : ",") + std::to_string(id);
    }
    return out + "}";
}

std::string state_array(const std::vector<JobState>& states) {
    std::string out = "{";
    for (JobState state : states) {
        out += (out.size() == 1 ? "" : ",") + std::string(job_state_name(state));
    }
    return out + "}";
}

template <typename Record>
Status collect(const SqlRow& row, int column, const char* what, std::vector<Record>& out) {
    auto record = protocol::decode_body<Record>(row.blob(column), what);
    if (!record) {
        return record.status();
    }
    out.push_back(std::move(*record));
    return Status::ok();
}

std::vector<SqlValue> job_values(const protocol::JobRecord& job) {
    return {static_cast<int64_t>(job.job_id),
            job.user_name,
            std::string(job_state_name(job.state)),
            job.submit_time,
            job.end_time,
            SqlBlob{protocol::encode_body(job)}};
}

}  // namespace

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::open(const std::string& uri) {
    auto connection =
            sql::PostgresConnection::open(uri, sql::PostgresConnection::LostSession::kFail);
    if (!connection) {
        return connection.status().with_context("state database");
    }
    std::unique_ptr<PostgresStateStore> store(new PostgresStateStore(std::move(*connection)));
    if (Status s = store->create_or_check_schema(); !s) {
        return s.with_context("state database");
    }
    return store;
}

Status PostgresStateStore::create_or_check_schema() {
    // Two controllers may start at once: the transaction-level lock orders their DDL.
    Status s = sql_->execute("BEGIN");
    if (s) {
        s = sql_->execute(fmt::format("SELECT pg_advisory_xact_lock({})", kControllerLock + 1));
    }
    for (const char* statement : kPostgresSchema) {
        if (s) {
            s = sql_->execute(statement);
        }
    }
    int64_t version = 0;
    if (s) {
        s = sql_->run("SELECT value FROM meta WHERE key = 'schema_version'", {},
                      [&version](const SqlRow& row) { version = row.integer(0); });
    }
    if (s && version > kSchemaVersion) {
        s = Status::invalid(
                fmt::format("schema version {} is newer than this cohortctld's {}; run "
                            "a newer cohortctld",
                            version, kSchemaVersion));
    }
    if (s && version < kSchemaVersion) {
        s = sql_->run(
                "INSERT INTO meta (key, value) VALUES ('schema_version', $1) ON CONFLICT "
                "(key) DO UPDATE SET value = excluded.value",
                std::vector<SqlValue>{int64_t{kSchemaVersion}}, nullptr);
    }
    if (s) {
        return sql_->execute("COMMIT");
    }
    (void)sql_->execute("ROLLBACK");
    return s;
}

Status PostgresStateStore::wait_until_active(const std::function<void()>& waiting) {
    bool taken = false;
    Status s = run("SELECT pg_try_advisory_lock($1)", {kControllerLock},
                   [&taken](const SqlRow& row) { taken = row.text(0) == "t"; });
    if (!s || taken) {
        return s;
    }
    waiting();
    return run("SELECT pg_advisory_lock($1)", {kControllerLock});
}

void PostgresStateStore::fence_if_lost() const {
    if (sql_->lost()) {
        spdlog::critical(
                "lost the session to the state database, and with it the controllers' lock: "
                "another cohortctld may be active now, so this one stops");
        std::_Exit(3);
    }
}

Status PostgresStateStore::run(const std::string& statement,
                               const std::vector<SqlValue>& params,
                               const sql::SqlConnection::OnRow& on_row) {
    Status s = sql_->run(statement, params, on_row);
    if (!s) {
        fence_if_lost();
    }
    return s;
}

Status PostgresStateStore::keep_alive() {
    return run("SELECT 1", {});
}

Status PostgresStateStore::begin() {
    return run("BEGIN", {});
}

Status PostgresStateStore::commit() {
    return run("COMMIT", {});
}

Status PostgresStateStore::rollback() {
    return run("ROLLBACK", {});
}

Status PostgresStateStore::put_job(const protocol::JobRecord& job) {
    return run(fmt::format("INSERT INTO {} (job_id, user_name, state, submit_time, end_time, "
                           "record) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO UPDATE "
                           "SET user_name = excluded.user_name, state = excluded.state, "
                           "submit_time = excluded.submit_time, end_time = excluded.end_time, "
                           "record = excluded.record",
                           job.is_array_remainder() ? "array_remainders" : "jobs"),
               job_values(job));
}

Status PostgresStateStore::delete_array_remainder(uint64_t array_id) {
    return run("DELETE FROM array_remainders WHERE job_id = $1", {static_cast<int64_t>(array_id)});
}

Status PostgresStateStore::put_payload(const StoredPayload& stored) {
    return run(
            "INSERT INTO job_payloads (key, payload) VALUES ($1, $2) ON CONFLICT (key) DO "
            "UPDATE SET payload = excluded.payload",
            {static_cast<int64_t>(stored.key), SqlBlob{protocol::encode_body(stored.payload)}});
}

Status PostgresStateStore::put_step(const protocol::StepRecord& step) {
    return run(
            "INSERT INTO steps (job_id, step_id, record) VALUES ($1, $2, $3) ON CONFLICT "
            "(job_id, step_id) DO UPDATE SET record = excluded.record",
            {static_cast<int64_t>(step.job_id), static_cast<int64_t>(step.step_id),
             SqlBlob{protocol::encode_body(step)}});
}

Status PostgresStateStore::put_attempt(const protocol::JobRecord& attempt) {
    std::vector<SqlValue> values = job_values(attempt);
    values.emplace_back(static_cast<int64_t>(attempt.restart_count));
    return run(
            "INSERT INTO job_attempts (job_id, user_name, state, submit_time, end_time, record, "
            "attempt) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_id, attempt) DO "
            "UPDATE SET state = excluded.state, end_time = excluded.end_time, record = "
            "excluded.record",
            values);
}

Status PostgresStateStore::put_next_job_id(uint64_t next) {
    return run(
            "INSERT INTO meta (key, value) VALUES ('next_job_id', $1) ON CONFLICT (key) DO "
            "UPDATE SET value = excluded.value",
            {static_cast<int64_t>(next)});
}

Status PostgresStateStore::put_reservation(const protocol::ReservationRecord& reservation) {
    return run(
            "INSERT INTO reservations (name, record) VALUES ($1, $2) ON CONFLICT (name) DO "
            "UPDATE SET record = excluded.record",
            {reservation.name, SqlBlob{protocol::encode_body(reservation)}});
}

Status PostgresStateStore::delete_reservation(const std::string& name) {
    return run("DELETE FROM reservations WHERE name = $1", {name});
}

Status PostgresStateStore::put_blob(const std::string& key, std::string bytes) {
    return run(
            "INSERT INTO blobs (key, record) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET "
            "record = excluded.record",
            {key, SqlBlob{std::move(bytes)}});
}

Status PostgresStateStore::put_node_admin(const protocol::NodeAdminRecord& node) {
    return put_blob("node/" + node.name, protocol::encode_body(node));
}

Result<StoredState> PostgresStateStore::load_active() {
    StoredState state;
    Status decoded = Status::ok();
    auto keep = [&decoded](Status s) {
        if (decoded && !s) {
            decoded = s;
        }
    };
    Status s = run("SELECT value FROM meta WHERE key = 'next_job_id'", {},
                   [&state](const SqlRow& row) {
                       state.next_job_id = static_cast<uint64_t>(row.integer(0));
                   });
    if (s) {
        s = run("SELECT record FROM jobs WHERE state IN ('PENDING', 'RUNNING', 'COMPLETING') "
                "UNION ALL SELECT record FROM array_remainders WHERE state = 'PENDING'",
                {},
                [&](const SqlRow& row) { keep(collect(row, 0, "stored job record", state.jobs)); });
    }
    if (s) {
        s = run("SELECT record FROM reservations ORDER BY name", {}, [&](const SqlRow& row) {
            keep(collect(row, 0, "stored reservation", state.reservations));
        });
    }
    if (s) {
        s = run("SELECT record FROM blobs WHERE key LIKE 'node/%' ORDER BY key", {},
                [&](const SqlRow& row) {
                    keep(collect(row, 0, "stored node state", state.node_admin));
                });
    }
    if (!s || !decoded) {
        return !s ? s : decoded;
    }
    for (const auto& job : state.jobs) {
        state.next_job_id = std::max(state.next_job_id, job.job_id + 1);
    }
    return state;
}

Result<std::vector<protocol::JobRecord>> PostgresStateStore::query_jobs(const JobFilter& filter) {
    std::vector<SqlValue> params = {filter.since};
    std::string where = "(end_time = 0 OR end_time >= $1)";
    if (filter.until != 0) {
        params.emplace_back(filter.until);
        where += fmt::format(" AND submit_time <= ${}", params.size());
    }
    if (!filter.job_ids.empty()) {
        params.emplace_back(id_array(filter.job_ids));
        where += fmt::format(" AND job_id = ANY(${}::bigint[])", params.size());
    }
    if (!filter.user.empty()) {
        params.emplace_back(filter.user);
        where += fmt::format(" AND user_name = ${}", params.size());
    }
    if (!filter.states.empty()) {
        params.emplace_back(state_array(filter.states));
        where += fmt::format(" AND state = ANY(${}::text[])", params.size());
    }
    // A job's earlier attempts come before it; a remainder after the task that shares its id.
    std::string statement = "SELECT record, job_id, 1 AS kind, 0 AS attempt FROM jobs WHERE "
                            + where
                            + " UNION ALL SELECT record, job_id, 2, 0 FROM array_remainders "
                              "WHERE "
                            + where;
    if (filter.attempts) {
        statement +=
                " UNION ALL SELECT record, job_id, 0, attempt FROM job_attempts WHERE " + where;
    }
    statement += " ORDER BY job_id, kind, attempt";
    std::vector<protocol::JobRecord> out;
    Status decoded = Status::ok();
    Status s = run(statement, params, [&](const SqlRow& row) {
        if (Status one = collect(row, 0, "stored job record", out); !one && decoded) {
            decoded = one;
        }
    });
    if (!s || !decoded) {
        return !s ? s : decoded;
    }
    return out;
}

Result<size_t> PostgresStateStore::purge_finished(int64_t ended_before, size_t limit) {
    std::vector<protocol::JobRecord> purged;
    for (const char* table : {"jobs", "array_remainders"}) {
        Status s =
                run(fmt::format("SELECT record FROM {} WHERE end_time > 0 AND end_time < $1 "
                                "AND state NOT IN ('PENDING', 'RUNNING', 'COMPLETING') LIMIT $2",
                                table),
                    {ended_before, static_cast<int64_t>(limit - purged.size())},
                    [&](const SqlRow& row) { (void)collect(row, 0, "stored job record", purged); });
        if (!s) {
            return s;
        }
    }
    std::vector<uint64_t> jobs;
    std::vector<uint64_t> remainders;
    for (const auto& job : purged) {
        (job.is_array_remainder() ? remainders : jobs).push_back(job.job_id);
    }
    for (const char* table : {"jobs", "steps", "job_attempts"}) {
        if (Status s = run(fmt::format("DELETE FROM {} WHERE job_id = ANY($1::bigint[])", table),
                           {id_array(jobs)});
            !s) {
            return s;
        }
    }
    if (Status s = run("DELETE FROM array_remainders WHERE job_id = ANY($1::bigint[])",
                       {id_array(remainders)});
        !s) {
        return s;
    }
    std::set<std::pair<uint64_t, uint64_t>> submissions;  // payload key, ids it covers
    for (const auto& job : purged) {
        submissions.emplace(payload_key(job), std::max<uint64_t>(1, job.array_count));
    }
    for (const auto& [key, ids] : submissions) {
        Status s =
                run("DELETE FROM job_payloads WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM jobs "
                    "WHERE job_id >= $1 AND job_id < $2) AND NOT EXISTS (SELECT 1 FROM "
                    "array_remainders WHERE job_id = $1)",
                    {static_cast<int64_t>(key), static_cast<int64_t>(key + ids)});
        if (!s) {
            return s;
        }
    }
    return purged.size();
}

Result<JobPayload> PostgresStateStore::payload(uint64_t key) {
    std::vector<JobPayload> found;
    Status decoded = Status::ok();
    Status s =
            run("SELECT payload FROM job_payloads WHERE key = $1", {static_cast<int64_t>(key)},
                [&](const SqlRow& row) { decoded = collect(row, 0, "stored job payload", found); });
    if (!s || !decoded) {
        return !s ? s : decoded;
    }
    if (found.empty()) {
        return Status::not_found(fmt::format("no stored payload for job {}", key));
    }
    return std::move(found.front());
}

Result<std::vector<protocol::StepRecord>> PostgresStateStore::query_steps(
        const std::vector<uint64_t>& job_ids) {
    std::vector<protocol::StepRecord> out;
    if (job_ids.empty()) {
        return out;
    }
    Status decoded = Status::ok();
    Status s =
            run("SELECT record FROM steps WHERE job_id = ANY($1::bigint[]) ORDER BY job_id, "
                "step_id",
                {id_array(job_ids)}, [&](const SqlRow& row) {
                    if (Status one = collect(row, 0, "stored step record", out); !one && decoded) {
                        decoded = one;
                    }
                });
    if (!s || !decoded) {
        return !s ? s : decoded;
    }
    return out;
}

}  // namespace cohort::ctld
