// The default JobStore: one SQLite database in WAL mode (schema in docs/dev/state-schema.md).
#pragma once

#include <sqlite3.h>

#include "accounting/job_store.h"

namespace cohort::acct {

class SqliteJobStore final : public JobStore {
public:
    // `synchronous` is "full" (survives power loss) or "normal" (survives a process kill).
    static Result<std::unique_ptr<SqliteJobStore>> open(const std::string& path,
            const std::string& synchronous);
    ~SqliteJobStore() override;
    SqliteJobStore(const SqliteJobStore&) = delete;
    SqliteJobStore& operator=(const SqliteJobStore&) = delete;

    Status begin() override;
    Status commit() override;
    Status rollback() override;
    Status put_job(const protocol::JobRecord& job) override;
    Status put_step(const protocol::StepRecord& step) override;
    Status put_next_job_id(uint64_t next) override;
    Status put_reservation(const protocol::ReservationRecord& reservation) override;
    Status delete_reservation(const std::string& name) override;
    Status put_usage(const protocol::UsageLedgerRecord& usage) override;
    Result<StoredState> load_active() override;
    Result<std::vector<protocol::JobRecord>> query_jobs(const JobFilter& filter) override;
    Result<std::vector<protocol::StepRecord>> query_steps(
            const std::vector<uint64_t>& job_ids) override;

private:
    explicit SqliteJobStore(sqlite3* db) : db_(db) {}
    Status exec(const char* sql);
    Status prepare_statements();
    Status load_extras(StoredState& state);
    Status error(const std::string& what) const;

    sqlite3* db_;
    sqlite3_stmt* put_job_ = nullptr;
    sqlite3_stmt* put_step_ = nullptr;
    sqlite3_stmt* put_meta_ = nullptr;
    sqlite3_stmt* put_reservation_ = nullptr;
    sqlite3_stmt* delete_reservation_ = nullptr;
    sqlite3_stmt* put_blob_ = nullptr;
};

}  // namespace cohort::acct
