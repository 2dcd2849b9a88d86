// The default StateStore: one SQLite database in WAL mode (schema in docs/dev/state-schema.md).
// Opening a database of an older schema version migrates it in one transaction; a newer one
// is refused.
#pragma once

#include <sqlite3.h>

#include "scheduler/ctld/state/state_store.h"

namespace cohort::ctld {

class SqliteStateStore final : public StateStore {
public:
    // `synchronous` is "full" (survives power loss) or "normal" (survives a process kill).
    static Result<std::unique_ptr<SqliteStateStore>> open(const std::string& path,
                                                          const std::string& synchronous);
    ~SqliteStateStore() override;
    SqliteStateStore(const SqliteStateStore&) = delete;
    SqliteStateStore& operator=(const SqliteStateStore&) = delete;

    Status begin() override;
    Status commit() override;
    Status rollback() override;
    // The layout this code writes; PRAGMA user_version holds a database's.
    static constexpr int kSchemaVersion = 8;

    Status put_job(const protocol::JobRecord& job) override;
    Status delete_array_remainder(uint64_t array_id) override;
    Status put_payload(const StoredPayload& payload) override;
    Status put_step(const protocol::StepRecord& step) override;
    Status put_attempt(const protocol::JobRecord& attempt) override;
    Status put_next_job_id(uint64_t next) override;
    Status put_reservation(const protocol::ReservationRecord& reservation) override;
    Status delete_reservation(const std::string& name) override;
    Status put_node_admin(const protocol::NodeAdminRecord& node) override;
    Result<StoredState> load_active() override;
    Result<std::vector<protocol::JobRecord>> query_jobs(const JobFilter& filter) override;
    Result<size_t> purge_finished(int64_t ended_before, size_t limit) override;
    Result<JobPayload> payload(uint64_t key) override;
    Result<std::vector<protocol::StepRecord>> query_steps(
            const std::vector<uint64_t>& job_ids) override;

private:
    explicit SqliteStateStore(sqlite3* db) : db_(db) {}

    Status exec(const char* sql);
    Status prepare_statements();
    // Brings a database of an older layout to kSchemaVersion; refuses a newer one.
    Status migrate(const std::string& path);
    Status migrate_v1_to_v2();
    Result<int> schema_version();
    Status load_extras(StoredState& state);
    Status error(const std::string& what) const;

    sqlite3* db_;
    sqlite3_stmt* put_job_ = nullptr;
    sqlite3_stmt* put_remainder_ = nullptr;
    sqlite3_stmt* delete_remainder_ = nullptr;
    sqlite3_stmt* put_step_ = nullptr;
    sqlite3_stmt* put_attempt_ = nullptr;
    sqlite3_stmt* put_meta_ = nullptr;
    sqlite3_stmt* put_reservation_ = nullptr;
    sqlite3_stmt* delete_reservation_ = nullptr;
    sqlite3_stmt* put_blob_ = nullptr;
    sqlite3_stmt* put_payload_ = nullptr;
    sqlite3_stmt* get_payload_ = nullptr;
};

}  // namespace cohort::ctld
