// SQLite StateStore: indexed columns for queries, the record as a serialized blob, the
// payload of each submission in a table of its own; versioned by PRAGMA user_version.
#include "scheduler/ctld/state/sqlite_state_store.h"

#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/protocol/codec.h"

namespace cohort::ctld {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
    job_id      INTEGER PRIMARY KEY,
    user_name   TEXT NOT NULL,
    state       TEXT NOT NULL,
    submit_time INTEGER NOT NULL,
    end_time    INTEGER NOT NULL,
    record      BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_time);
CREATE INDEX IF NOT EXISTS jobs_user_end ON jobs(user_name, end_time);
CREATE TABLE IF NOT EXISTS steps (
    job_id  INTEGER NOT NULL,
    step_id INTEGER NOT NULL,
    record  BLOB NOT NULL,
    PRIMARY KEY (job_id, step_id)
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS reservations (
    name   TEXT PRIMARY KEY,
    record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs (
    key    TEXT PRIMARY KEY,
    record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS array_remainders (
    job_id      INTEGER PRIMARY KEY,
    user_name   TEXT NOT NULL,
    state       TEXT NOT NULL,
    submit_time INTEGER NOT NULL,
    end_time    INTEGER NOT NULL,
    record      BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS job_attempts (
    job_id      INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    user_name   TEXT NOT NULL,
    state       TEXT NOT NULL,
    submit_time INTEGER NOT NULL,
    end_time    INTEGER NOT NULL,
    record      BLOB NOT NULL,
    PRIMARY KEY (job_id, attempt)
);
CREATE TABLE IF NOT EXISTS job_payloads (
    key     INTEGER PRIMARY KEY,
    payload BLOB NOT NULL
);
)sql";

// RAII reset for a cached statement.
struct Reset {
    sqlite3_stmt* stmt;

    ~Reset() {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
    }
};

struct Statement {
    sqlite3_stmt* stmt = nullptr;

    ~Statement() { sqlite3_finalize(stmt); }
};

template <typename Record>
Result<Record> column_record(sqlite3_stmt* stmt, int column, const char* what) {
    const void* blob = sqlite3_column_blob(stmt, column);
    int size = sqlite3_column_bytes(stmt, column);
    return protocol::decode_body<Record>(
            std::string_view(static_cast<const char*>(blob), static_cast<size_t>(size)), what);
}

std::string id_list(const std::vector<uint64_t>& ids) {
    std::string out;
    for (uint64_t id : ids) {
        out += (out.empty() ? "" : ",") + std::to_string(id);
    }
    return out;
}

}  // namespace

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::open(const std::string& path,
                                                                 const std::string& synchronous) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr)
        != SQLITE_OK) {
        std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return Status::io_error("cannot open state database '" + path + "': " + message);
    }
    std::unique_ptr<SqliteStateStore> store(new SqliteStateStore(db));
    sqlite3_busy_timeout(db, 5000);
    std::string pragmas = "PRAGMA journal_mode=WAL; PRAGMA synchronous="
                          + std::string(synchronous == "normal" ? "NORMAL" : "FULL") + ";";
    if (Status status = store->exec(pragmas.c_str()); !status) {
        return status.with_context(path);
    }
    if (Status status = store->migrate(path); !status) {
        return status.with_context(path);
    }
    if (Status status = store->prepare_statements(); !status) {
        return status;
    }
    return store;
}

SqliteStateStore::~SqliteStateStore() {
    sqlite3_finalize(put_job_);
    sqlite3_finalize(put_remainder_);
    sqlite3_finalize(delete_remainder_);
    sqlite3_finalize(put_step_);
    sqlite3_finalize(put_attempt_);
    sqlite3_finalize(put_meta_);
    sqlite3_finalize(put_reservation_);
    sqlite3_finalize(delete_reservation_);
    sqlite3_finalize(put_blob_);
    sqlite3_finalize(put_payload_);
    sqlite3_finalize(get_payload_);
    sqlite3_close(db_);
}

Status SqliteStateStore::error(const std::string& what) const {
    return Status::io_error(what + ": " + sqlite3_errmsg(db_));
}

Status SqliteStateStore::exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message != nullptr ? message : "unknown error";
        sqlite3_free(message);
        return Status::io_error("sqlite: " + text);
    }
    return Status::ok();
}

Status SqliteStateStore::prepare_statements() {
    const char* job_sql =
            "INSERT OR REPLACE INTO jobs(job_id,user_name,state,submit_time,end_time,record) "
            "VALUES(?,?,?,?,?,?)";
    const char* step_sql = "INSERT OR REPLACE INTO steps(job_id,step_id,record) VALUES(?,?,?)";
    const char* attempt_sql =
            "INSERT OR REPLACE INTO job_attempts(job_id,attempt,user_name,state,submit_time,"
            "end_time,record) VALUES(?,?,?,?,?,?,?)";
    // An upsert changes the value in place; REPLACE would delete and insert the row, writing
    // the key's index page too, on every submission.
    const char* meta_sql =
            "INSERT INTO meta(key,value) VALUES('next_job_id',?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value";
    const char* remainder_sql =
            "INSERT OR REPLACE INTO array_remainders(job_id,user_name,state,submit_time,end_time,"
            "record) VALUES(?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db_, job_sql, -1, &put_job_, nullptr) != SQLITE_OK
        || sqlite3_prepare_v2(db_, remainder_sql, -1, &put_remainder_, nullptr) != SQLITE_OK
        || sqlite3_prepare_v2(db_, "DELETE FROM array_remainders WHERE job_id=?", -1,
                              &delete_remainder_, nullptr)
                   != SQLITE_OK
        || sqlite3_prepare_v2(db_, step_sql, -1, &put_step_, nullptr) != SQLITE_OK
        || sqlite3_prepare_v2(db_, attempt_sql, -1, &put_attempt_, nullptr) != SQLITE_OK
        || sqlite3_prepare_v2(db_, meta_sql, -1, &put_meta_, nullptr) != SQLITE_OK
        || sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO reservations(name,record) VALUES(?,?)",
                              -1, &put_reservation_, nullptr)
                   != SQLITE_OK
        || sqlite3_prepare_v2(db_, "DELETE FROM reservations WHERE name=?", -1,
                              &delete_reservation_, nullptr)
                   != SQLITE_OK
        || sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO blobs(key,record) VALUES(?,?)", -1,
                              &put_blob_, nullptr)
                   != SQLITE_OK
        || sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO job_payloads(key,payload) VALUES(?,?)",
                              -1, &put_payload_, nullptr)
                   != SQLITE_OK
        || sqlite3_prepare_v2(db_, "SELECT payload FROM job_payloads WHERE key=?", -1,
                              &get_payload_, nullptr)
                   != SQLITE_OK) {
        return error("prepare");
    }
    return Status::ok();
}

Result<int> SqliteStateStore::schema_version() {
    Statement jobs;
    sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='jobs'",
                       -1, &jobs.stmt, nullptr);
    if (sqlite3_step(jobs.stmt) != SQLITE_ROW) {
        return error("reading the schema");
    }
    if (sqlite3_column_int(jobs.stmt, 0) == 0) {
        return 0;  // a new database
    }
    Statement version;
    sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &version.stmt, nullptr);
    if (sqlite3_step(version.stmt) != SQLITE_ROW) {
        return error("reading the schema version");
    }
    // The first layout set no version: its tables exist with user_version 0.
    return std::max(sqlite3_column_int(version.stmt, 0), 1);
}

Status SqliteStateStore::migrate(const std::string& path) {
    auto version = schema_version();
    if (!version) {
        return version.status();
    }
    if (*version > kSchemaVersion) {
        return Status::invalid(
                fmt::format("state database schema version {} is newer than "
                            "this cohortctld's ({}); run a newer cohortctld",
                            *version, kSchemaVersion));
    }
    if (*version == kSchemaVersion) {
        return Status::ok();
    }
    if (Status status = exec("BEGIN IMMEDIATE"); !status) {
        return status;
    }
    Status status = exec(kSchema);
    if (status && *version == 1) {
        status = migrate_v1_to_v2();
    }
    if (status) {
        status = exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
    }
    if (!status) {
        exec("ROLLBACK");
        return status.with_context(fmt::format("migrating from schema version {}", *version));
    }
    if (*version > 0) {
        spdlog::info("{}: state migrated from schema version {} to {}", path, *version,
                     kSchemaVersion);
    }
    return exec("COMMIT");
}

// Version 1 kept the script and environment in every job's record: move them to
// job_payloads, once per submission.
Status SqliteStateStore::migrate_v1_to_v2() {
    Statement rows;
    Statement update;
    Statement insert;
    if (sqlite3_prepare_v2(db_, "SELECT record FROM jobs ORDER BY job_id", -1, &rows.stmt, nullptr)
                != SQLITE_OK
        || sqlite3_prepare_v2(db_, "UPDATE jobs SET record=? WHERE job_id=?", -1, &update.stmt,
                              nullptr)
                   != SQLITE_OK
        || sqlite3_prepare_v2(db_, "INSERT OR IGNORE INTO job_payloads(key,payload) VALUES(?,?)",
                              -1, &insert.stmt, nullptr)
                   != SQLITE_OK) {
        return error("prepare migration");
    }
    int rc = 0;
    while ((rc = sqlite3_step(rows.stmt)) == SQLITE_ROW) {
        auto job = column_record<protocol::JobRecord>(rows.stmt, 0, "stored job record");
        if (!job) {
            return job.status();
        }
        const std::string payload = protocol::encode_body(take_payload(job->spec));
        const std::string record = protocol::encode_body(*job);
        sqlite3_bind_int64(insert.stmt, 1, static_cast<sqlite3_int64>(payload_key(*job)));
        sqlite3_bind_blob(insert.stmt, 2, payload.data(), static_cast<int>(payload.size()),
                          SQLITE_TRANSIENT);
        sqlite3_bind_blob(update.stmt, 1, record.data(), static_cast<int>(record.size()),
                          SQLITE_TRANSIENT);
        sqlite3_bind_int64(update.stmt, 2, static_cast<sqlite3_int64>(job->job_id));
        const bool ok = sqlite3_step(insert.stmt) == SQLITE_DONE
                        && sqlite3_step(update.stmt) == SQLITE_DONE;
        sqlite3_reset(insert.stmt);
        sqlite3_reset(update.stmt);
        if (!ok) {
            return error(fmt::format("migrate job {}", job->job_id));
        }
    }
    return rc == SQLITE_DONE ? Status::ok() : error("read jobs to migrate");
}

Status SqliteStateStore::begin() {
    return exec("BEGIN IMMEDIATE");
}

Status SqliteStateStore::commit() {
    return exec("COMMIT");
}

Status SqliteStateStore::rollback() {
    return exec("ROLLBACK");
}

Status SqliteStateStore::put_job(const protocol::JobRecord& job) {
    sqlite3_stmt* put = job.is_array_remainder() ? put_remainder_ : put_job_;
    Reset reset{put};
    std::string blob = protocol::encode_body(job);
    std::string state(job_state_name(job.state));
    sqlite3_bind_int64(put, 1, static_cast<sqlite3_int64>(job.job_id));
    sqlite3_bind_text(put, 2, job.user_name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(put, 3, state.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(put, 4, job.submit_time);
    sqlite3_bind_int64(put, 5, job.end_time);
    sqlite3_bind_blob(put, 6, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    return sqlite3_step(put) == SQLITE_DONE ? Status::ok() : error("put job");
}

Status SqliteStateStore::delete_array_remainder(uint64_t array_id) {
    Reset reset{delete_remainder_};
    sqlite3_bind_int64(delete_remainder_, 1, static_cast<sqlite3_int64>(array_id));
    return sqlite3_step(delete_remainder_) == SQLITE_DONE ? Status::ok()
                                                          : error("delete array remainder");
}

Status SqliteStateStore::put_payload(const StoredPayload& stored) {
    Reset reset{put_payload_};
    std::string blob = protocol::encode_body(stored.payload);
    sqlite3_bind_int64(put_payload_, 1, static_cast<sqlite3_int64>(stored.key));
    sqlite3_bind_blob(put_payload_, 2, blob.data(), static_cast<int>(blob.size()),
                      SQLITE_TRANSIENT);
    return sqlite3_step(put_payload_) == SQLITE_DONE ? Status::ok() : error("put payload");
}

Result<JobPayload> SqliteStateStore::payload(uint64_t key) {
    Reset reset{get_payload_};
    sqlite3_bind_int64(get_payload_, 1, static_cast<sqlite3_int64>(key));
    const int rc = sqlite3_step(get_payload_);
    if (rc == SQLITE_ROW) {
        return column_record<JobPayload>(get_payload_, 0, "stored job payload");
    }
    if (rc == SQLITE_DONE) {
        return Status::not_found(fmt::format("no stored payload for job {}", key));
    }
    return error("get payload");
}

Status SqliteStateStore::put_step(const protocol::StepRecord& step) {
    Reset reset{put_step_};
    std::string blob = protocol::encode_body(step);
    sqlite3_bind_int64(put_step_, 1, static_cast<sqlite3_int64>(step.job_id));
    sqlite3_bind_int64(put_step_, 2, step.step_id);
    sqlite3_bind_blob(put_step_, 3, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    return sqlite3_step(put_step_) == SQLITE_DONE ? Status::ok() : error("put step");
}

Status SqliteStateStore::put_attempt(const protocol::JobRecord& attempt) {
    Reset reset{put_attempt_};
    std::string blob = protocol::encode_body(attempt);
    std::string state(job_state_name(attempt.state));
    sqlite3_bind_int64(put_attempt_, 1, static_cast<sqlite3_int64>(attempt.job_id));
    sqlite3_bind_int64(put_attempt_, 2, attempt.restart_count);
    sqlite3_bind_text(put_attempt_, 3, attempt.user_name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(put_attempt_, 4, state.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(put_attempt_, 5, attempt.submit_time);
    sqlite3_bind_int64(put_attempt_, 6, attempt.end_time);
    sqlite3_bind_blob(put_attempt_, 7, blob.data(), static_cast<int>(blob.size()),
                      SQLITE_TRANSIENT);
    return sqlite3_step(put_attempt_) == SQLITE_DONE ? Status::ok() : error("put attempt");
}

Status SqliteStateStore::put_next_job_id(uint64_t next) {
    Reset reset{put_meta_};
    sqlite3_bind_int64(put_meta_, 1, static_cast<sqlite3_int64>(next));
    return sqlite3_step(put_meta_) == SQLITE_DONE ? Status::ok() : error("put next_job_id");
}

Status SqliteStateStore::put_reservation(const protocol::ReservationRecord& reservation) {
    Reset reset{put_reservation_};
    std::string blob = protocol::encode_body(reservation);
    sqlite3_bind_text(put_reservation_, 1, reservation.name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(put_reservation_, 2, blob.data(), static_cast<int>(blob.size()),
                      SQLITE_TRANSIENT);
    return sqlite3_step(put_reservation_) == SQLITE_DONE ? Status::ok() : error("put reservation");
}

Status SqliteStateStore::delete_reservation(const std::string& name) {
    Reset reset{delete_reservation_};
    sqlite3_bind_text(delete_reservation_, 1, name.c_str(), -1, SQLITE_TRANSIENT);
    return sqlite3_step(delete_reservation_) == SQLITE_DONE ? Status::ok()
                                                            : error("delete reservation");
}

// Nodes' records share the blobs table, keyed "node/NAME": no schema change for a few rows.
Status SqliteStateStore::put_node_admin(const protocol::NodeAdminRecord& node) {
    Reset reset{put_blob_};
    std::string key = "node/" + node.name;
    std::string blob = protocol::encode_body(node);
    sqlite3_bind_text(put_blob_, 1, key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(put_blob_, 2, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    return sqlite3_step(put_blob_) == SQLITE_DONE ? Status::ok() : error("put node state");
}

Status SqliteStateStore::load_extras(StoredState& state) {
    Statement reservations;
    sqlite3_prepare_v2(db_, "SELECT record FROM reservations ORDER BY name", -1, &reservations.stmt,
                       nullptr);
    int rc = 0;
    while ((rc = sqlite3_step(reservations.stmt)) == SQLITE_ROW) {
        auto reservation = column_record<protocol::ReservationRecord>(reservations.stmt, 0,
                                                                      "stored reservation");
        if (!reservation) {
            return reservation.status();
        }
        state.reservations.push_back(std::move(*reservation));
    }
    if (rc != SQLITE_DONE) {
        return error("load reservations");
    }
    Statement nodes;
    sqlite3_prepare_v2(db_, "SELECT record FROM blobs WHERE key LIKE 'node/%' ORDER BY key", -1,
                       &nodes.stmt, nullptr);
    while ((rc = sqlite3_step(nodes.stmt)) == SQLITE_ROW) {
        auto node = column_record<protocol::NodeAdminRecord>(nodes.stmt, 0, "stored node state");
        if (!node) {
            return node.status();
        }
        state.node_admin.push_back(std::move(*node));
    }
    return rc == SQLITE_DONE ? Status::ok() : error("load node states");
}

Result<StoredState> SqliteStateStore::load_active() {
    StoredState state;
    Statement meta;
    sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key='next_job_id'", -1, &meta.stmt,
                       nullptr);
    if (sqlite3_step(meta.stmt) == SQLITE_ROW) {
        state.next_job_id = static_cast<uint64_t>(sqlite3_column_int64(meta.stmt, 0));
    }
    Statement jobs;
    sqlite3_prepare_v2(db_,
                       "SELECT record FROM jobs WHERE state IN ('PENDING','RUNNING','COMPLETING') "
                       "UNION ALL SELECT record FROM array_remainders WHERE state = 'PENDING'",
                       -1, &jobs.stmt, nullptr);
    int rc = 0;
    while ((rc = sqlite3_step(jobs.stmt)) == SQLITE_ROW) {
        auto job = column_record<protocol::JobRecord>(jobs.stmt, 0, "stored job record");
        if (!job) {
            return job.status();
        }
        state.next_job_id = std::max(state.next_job_id, job->job_id + 1);
        state.jobs.push_back(std::move(*job));
    }
    if (rc != SQLITE_DONE) {
        return error("load jobs");
    }
    if (Status extras = load_extras(state); !extras) {
        return extras;
    }
    return state;
}

Result<std::vector<protocol::JobRecord>> SqliteStateStore::query_jobs(const JobFilter& filter) {
    std::string where = "(end_time = 0 OR end_time >= ?1)";
    if (filter.until != 0) {
        where += fmt::format(" AND submit_time <= {}", filter.until);
    }
    if (!filter.job_ids.empty()) {
        where += " AND job_id IN (" + id_list(filter.job_ids) + ")";
    }
    if (!filter.user.empty()) {
        where += " AND user_name = ?2";
    }
    if (!filter.states.empty()) {
        where += " AND state IN (";
        for (size_t i = 0; i < filter.states.size(); ++i) {
            where += std::string(i == 0 ? "'" : ",'")
                     + std::string(job_state_name(filter.states[i])) + "'";
        }
        where += ")";
    }
    // A job's earlier attempts come before it, in order; a remainder shares its id with its
    // first task, which is listed first.
    std::string sql = "SELECT record, job_id, 1 AS kind, 0 AS attempt FROM jobs WHERE " + where
                      + " UNION ALL SELECT record, job_id, 2, 0 FROM array_remainders WHERE "
                      + where;
    if (filter.attempts) {
        sql += " UNION ALL SELECT record, job_id, 0, attempt FROM job_attempts WHERE " + where;
    }
    sql += " ORDER BY job_id, kind, attempt";
    Statement stmt;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt.stmt, nullptr) != SQLITE_OK) {
        return error("query jobs");
    }
    sqlite3_bind_int64(stmt.stmt, 1, filter.since);
    if (!filter.user.empty()) {
        sqlite3_bind_text(stmt.stmt, 2, filter.user.c_str(), -1, SQLITE_TRANSIENT);
    }
    std::vector<protocol::JobRecord> out;
    while (sqlite3_step(stmt.stmt) == SQLITE_ROW) {
        auto job = column_record<protocol::JobRecord>(stmt.stmt, 0, "stored job record");
        if (!job) {
            return job.status();
        }
        out.push_back(std::move(*job));
    }
    return out;
}

Result<size_t> SqliteStateStore::purge_finished(int64_t ended_before, size_t limit) {
    // The jobs_end index finds them; payloads go once no job of their submission is left.
    std::vector<protocol::JobRecord> purged;
    for (const char* table : {"jobs", "array_remainders"}) {
        const std::string sql = fmt::format(
                "SELECT record FROM {} WHERE end_time > 0 AND end_time < ? AND state NOT IN "
                "('PENDING','RUNNING','COMPLETING') LIMIT ?",
                table);
        Statement select;
        if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &select.stmt, nullptr) != SQLITE_OK) {
            return error("purge: select");
        }
        sqlite3_bind_int64(select.stmt, 1, ended_before);
        sqlite3_bind_int64(select.stmt, 2, static_cast<sqlite3_int64>(limit - purged.size()));
        while (sqlite3_step(select.stmt) == SQLITE_ROW) {
            auto job = column_record<protocol::JobRecord>(select.stmt, 0, "stored job record");
            if (!job) {
                return job.status();
            }
            purged.push_back(std::move(*job));
        }
    }
    std::vector<uint64_t> jobs;
    std::vector<uint64_t> remainders;
    for (const auto& job : purged) {
        (job.is_array_remainder() ? remainders : jobs).push_back(job.job_id);
    }
    const std::string deletes = fmt::format(
            "DELETE FROM jobs WHERE job_id IN ({0}); "
            "DELETE FROM steps WHERE job_id IN ({0}); "
            "DELETE FROM job_attempts WHERE job_id IN ({0}); "
            "DELETE FROM array_remainders WHERE job_id IN ({1});",
            id_list(jobs), id_list(remainders));
    if (Status deleted = exec(deletes.c_str()); !deleted) {
        return deleted;
    }
    std::set<std::pair<uint64_t, uint64_t>> submissions;  // payload key, ids it covers
    for (const auto& job : purged) {
        submissions.emplace(payload_key(job), std::max<uint64_t>(1, job.array_count));
    }
    for (const auto& [key, ids] : submissions) {
        const std::string sql = fmt::format(
                "DELETE FROM job_payloads WHERE key = {0} "
                "AND NOT EXISTS (SELECT 1 FROM jobs WHERE job_id >= {0} AND job_id < {1}) "
                "AND NOT EXISTS (SELECT 1 FROM array_remainders WHERE job_id = {0})",
                key, key + ids);
        if (Status deleted = exec(sql.c_str()); !deleted) {
            return deleted;
        }
    }
    return purged.size();
}

Result<std::vector<protocol::StepRecord>> SqliteStateStore::query_steps(
        const std::vector<uint64_t>& job_ids) {
    std::vector<protocol::StepRecord> out;
    if (job_ids.empty()) {
        return out;
    }
    std::string sql = "SELECT record FROM steps WHERE job_id IN (" + id_list(job_ids)
                      + ") ORDER BY job_id, step_id";
    Statement stmt;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt.stmt, nullptr) != SQLITE_OK) {
        return error("query steps");
    }
    while (sqlite3_step(stmt.stmt) == SQLITE_ROW) {
        auto step = column_record<protocol::StepRecord>(stmt.stmt, 0, "stored step record");
        if (!step) {
            return step.status();
        }
        out.push_back(std::move(*step));
    }
    return out;
}

}  // namespace cohort::ctld
