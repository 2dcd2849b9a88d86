// The controller's state in PostgreSQL (`state = postgresql://...`), for two controllers
// sharing one database: the active one holds a session-level advisory lock, the standby
// waits for it in wait_until_active(). The lock lives as long as the session, so a lost
// session ends this controller (fence_if_lost): another one may be active by then, and a
// controller that went on would answer for jobs it no longer owns. The tables mirror the
// SQLite store's (docs/dev/state-schema.md); records are the same serialized blobs.
#pragma once

#include "common/sql/postgres_connection.h"
#include "scheduler/ctld/state/state_store.h"

namespace cohort::ctld {

class PostgresStateStore final : public StateStore {
public:
    // The layout this code writes (meta 'schema_version'); a newer one is refused.
    static constexpr int kSchemaVersion = 4;

    static Result<std::unique_ptr<PostgresStateStore>> open(const std::string& uri);

    // Blocks until this controller holds the controllers' lock; `waiting` runs once first
    // when another controller holds it.
    Status wait_until_active(const std::function<void()>& waiting);

    Status begin() override;
    Status commit() override;
    Status rollback() override;
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
    Status keep_alive() override;

private:
    explicit PostgresStateStore(std::unique_ptr<sql::PostgresConnection> sql)
        : sql_(std::move(sql)) {}

    Status create_or_check_schema();
    // Every statement goes through here: a failure on a lost session ends the process.
    Status run(const std::string& statement,
               const std::vector<sql::SqlValue>& params,
               const sql::SqlConnection::OnRow& on_row = nullptr);
    Status put_blob(const std::string& key, std::string bytes);
    void fence_if_lost() const;

    std::unique_ptr<sql::PostgresConnection> sql_;
};

}  // namespace cohort::ctld
