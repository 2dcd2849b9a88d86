// Slurm-shaped JSON (as squeue/sinfo/sacct --json print it) for Cohort's records.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "common/protocol/job_types.h"

namespace cohort::cli {

// Local time as Slurm prints it (2026-12-02T21:00:00), "Unknown" for 0.
std::string format_time(int64_t unix_seconds);

nlohmann::json job_to_json(const protocol::JobRecord& job);
nlohmann::json node_to_json(const protocol::NodeInfo& node);
nlohmann::json step_to_json(const protocol::StepRecord& step);

// {"jobs": [...], "meta": {...}, "errors": [], "warnings": []}
nlohmann::json wrap_payload(const char* key, nlohmann::json items);

}  // namespace cohort::cli
