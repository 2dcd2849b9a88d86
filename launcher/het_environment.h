// The variables that describe a heterogeneous job's components to its batch script (the
// agent) and to salloc's command (the CLI), in Slurm's names.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/protocol/job_types.h"

namespace cohort {

// The job's task count as given (--ntasks, or --ntasks-per-node on each node); 0: neither.
uint32_t given_ntasks(const protocol::JobRecord& job);

// For each component n (`components`, in offset order): SLURM_JOB_ID_HET_GROUP_<n>,
// _JOB_NODELIST_, _NTASKS_, ... and Slurm's older _PACK_GROUP_<n> names, with
// SLURM_HET_SIZE; each also under COHORT_. Empty for a job of one component.
std::vector<std::pair<std::string, std::string>> het_job_environment(
        const std::vector<protocol::JobRecord>& components);

}  // namespace cohort
