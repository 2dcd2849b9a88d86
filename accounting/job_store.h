// Durable job and step records, and the queries `cohort acct` runs over them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/protocol/job_types.h"
#include "common/status.h"

namespace cohort::acct {

struct JobFilter {
    std::vector<uint64_t> job_ids;
    std::string user;
    int64_t since = 0;
    std::vector<JobState> states;
};

struct StoredState {
    std::vector<protocol::JobRecord> jobs;
    uint64_t next_job_id = 1;
    std::vector<protocol::ReservationRecord> reservations;
    protocol::UsageLedgerRecord usage;
};

// A storage backend. Calls come from one thread (the controller's writer).
class JobStore {
public:
    virtual ~JobStore() = default;
    virtual Status begin() = 0;
    virtual Status commit() = 0;
    virtual Status rollback() = 0;
    virtual Status put_job(const protocol::JobRecord& job) = 0;
    virtual Status put_step(const protocol::StepRecord& step) = 0;
    virtual Status put_next_job_id(uint64_t next) = 0;
    virtual Status put_reservation(const protocol::ReservationRecord& reservation) = 0;
    virtual Status delete_reservation(const std::string& name) = 0;
    virtual Status put_usage(const protocol::UsageLedgerRecord& usage) = 0;
    // Everything the controller needs after a restart: unfinished jobs, the id counter,
    // reservations and fair-share usage.
    virtual Result<StoredState> load_active() = 0;
    virtual Result<std::vector<protocol::JobRecord>> query_jobs(const JobFilter& filter) = 0;
    virtual Result<std::vector<protocol::StepRecord>> query_steps(
            const std::vector<uint64_t>& job_ids) = 0;
};

}  // namespace cohort::acct
