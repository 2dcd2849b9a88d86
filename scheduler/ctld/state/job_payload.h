// The part of a job that only its launch needs: the script, its arguments and the
// environment (kilobytes per job, against a few hundred bytes for everything else). It is
// stored once per submission (an array's tasks share their array's) and read back when a
// task launches, so a pending job's memory does not grow with its environment.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include "common/protocol/job_types.h"
#include "common/serialize_fields.h"

namespace cohort::ctld {

struct JobPayload {
    std::string script;
    std::vector<std::string> script_args;
    std::vector<std::pair<std::string, std::string>> env;
    std::string command_line;
    std::string submit_host;

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, script, script_args, env, command_line, submit_host);
    }
};

// Moves the payload out of `spec`, leaving those fields empty.
inline JobPayload take_payload(protocol::JobSpec& spec) {
    return {std::exchange(spec.script, {}), std::exchange(spec.script_args, {}),
            std::exchange(spec.env, {}), std::exchange(spec.command_line, {}),
            std::exchange(spec.submit_host, {})};
}

inline void restore_payload(protocol::JobSpec& spec, JobPayload payload) {
    spec.script = std::move(payload.script);
    spec.script_args = std::move(payload.script_args);
    spec.env = std::move(payload.env);
    spec.command_line = std::move(payload.command_line);
    spec.submit_host = std::move(payload.submit_host);
}

// Where a job's payload is stored: under its array's id for an array task, else its own.
inline uint64_t payload_key(const protocol::JobRecord& job) {
    return job.array_job_id != 0 ? job.array_job_id : job.job_id;
}

// A payload to store, in the same transaction as the job records that refer to it.
struct StoredPayload {
    uint64_t key = 0;
    JobPayload payload;
};

}  // namespace cohort::ctld
