// The controller's durable state: every job and step, each submission's payload (script and
// environment), the id counter, reservations and nodes' drains. Behind an interface so
// that a second backend (PostgreSQL, for failover) can follow; the layout of the SQLite one
// is docs/dev/state-schema.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/protocol/job_types.h"
#include "common/status.h"
#include "scheduler/ctld/state/job_payload.h"

namespace cohort::ctld {

struct JobFilter {
    std::vector<uint64_t> job_ids;
    std::string user;
    int64_t since = 0;  // unfinished, or ended at or after this; 0: any
    std::vector<JobState> states;
    int64_t until = 0;      // submitted at or before this; 0: any
    bool attempts = false;  // also the earlier attempts of requeued jobs, before each job
};

struct StoredState {
    std::vector<protocol::JobRecord> jobs;
    uint64_t next_job_id = 1;
    std::vector<protocol::ReservationRecord> reservations;
    std::vector<protocol::NodeAdminRecord> node_admin;
};

// A storage backend. Calls come from one thread (the controller's writer).
class StateStore {
public:
    virtual ~StateStore() = default;
    virtual Status begin() = 0;
    virtual Status commit() = 0;
    virtual Status rollback() = 0;
    // Jobs are stored without their payload (see job_payload.h). An array's remainder
    // (is_array_remainder()) is stored apart from the jobs, as its id is also its first task's.
    virtual Status put_job(const protocol::JobRecord& job) = 0;
    // Once every task of the array has been split off.
    virtual Status delete_array_remainder(uint64_t array_id) = 0;
    virtual Status put_payload(const StoredPayload& payload) = 0;
    virtual Status put_step(const protocol::StepRecord& step) = 0;
    // An ended attempt of a job that runs again: the job as it was when the attempt ended,
    // keyed by its restart_count.
    virtual Status put_attempt(const protocol::JobRecord& attempt) = 0;
    virtual Status put_next_job_id(uint64_t next) = 0;
    virtual Status put_reservation(const protocol::ReservationRecord& reservation) = 0;
    virtual Status delete_reservation(const std::string& name) = 0;
    // A node's drain, held DOWN and reason; replaces the node's earlier record.
    virtual Status put_node_admin(const protocol::NodeAdminRecord& node) = 0;
    // Everything the controller needs after a restart: unfinished jobs and array remainders,
    // the id counter, reservations and nodes' drains and holds.
    virtual Result<StoredState> load_active() = 0;
    // Jobs and ended array remainders that match, by id.
    virtual Result<std::vector<protocol::JobRecord>> query_jobs(const JobFilter& filter) = 0;
    // Deletes at most `limit` jobs (and ended array remainders) that ended before
    // `ended_before`, with their steps, attempts and the payloads no job refers to any more;
    // returns
    // how many records went.
    virtual Result<size_t> purge_finished(int64_t ended_before, size_t limit) = 0;
    // The payload stored under `key` (payload_key()); kNotFound if none.
    virtual Result<JobPayload> payload(uint64_t key) = 0;
    virtual Result<std::vector<protocol::StepRecord>> query_steps(
            const std::vector<uint64_t>& job_ids) = 0;

    // Checks the store is still this controller's (the PostgreSQL store's lock); called on
    // the controller's tick.
    virtual Status keep_alive() { return Status::ok(); }
};

}  // namespace cohort::ctld
