// srun inside a heterogeneous job: --het-group=N runs a step in component N; --het-group=0,1
// and `srun A : B` run one step over several components, one MPI_COMM_WORLD, each component
// with its own shape and, for `:`, its own command.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/protocol/messages.h"
#include "common/status.h"

namespace cohort::cli {

// One part of srun's command line: `srun [options] A : [options] B` has two.
struct HetSegment {
    std::string het_group;        // its --het-group; empty: its position on the line
    protocol::HetStepPart shape;  // what it asks of its component; job_id is found later
    std::vector<std::string> argv;
    protocol::JobSpec spec;  // its component's job, where srun A : B makes the allocation
};

// The words between standalone ":" words; one segment when there is none.
std::vector<std::vector<std::string>> split_het_segments(const std::vector<std::string>& args);

// Where a step runs: `job_id` alone, or, with parts, over those components of the hetjob
// that `job_id` leads, each with its command where `:` gave several.
struct StepJob {
    uint64_t job_id = 0;
    std::vector<protocol::HetStepPart> parts;
    std::map<uint64_t, std::vector<std::string>> argv_by_job;
};

// `segments` as parsed, the first one's from the command line's options. Component ids are
// `component_ids` where this command made the allocation, else SLURM_JOB_ID_HET_GROUP_<n>;
// `allocation` is the job this runs in (0: none). A segment without a command runs the next
// one's, as in Slurm.
Result<StepJob> step_job_of(uint64_t allocation,
                            std::vector<HetSegment> segments,
                            const std::vector<uint64_t>& component_ids = {});

}  // namespace cohort::cli
