// The steps that run inside running jobs: which are open, and the CPUs they hold on each of
// their job's nodes (a new step waits for those unless it overlaps). Ended steps live only
// in the state store.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/protocol/job_types.h"
#include "scheduler/ctld/job.h"

namespace cohort::ctld {

class StepTable {
public:
    void open(protocol::StepRecord step);
    // Removes and returns the open step, if there is one.
    std::optional<protocol::StepRecord> close(uint64_t job_id, uint32_t step_id);
    // Removes and returns every open step of the job (they end with it).
    std::vector<protocol::StepRecord> close_all_of(uint64_t job_id);

    bool is_open(uint64_t job_id, uint32_t step_id) const {
        return steps_.count({job_id, step_id}) != 0;
    }

    // CPUs the job's open steps hold on each of its nodes; --overlap steps hold none.
    std::vector<uint32_t> cpus_held(const Job& job) const;
    // GPUs the job's open steps hold on each of its nodes: those of steps that asked for GPUs,
    // --overlap steps' excepted.
    std::vector<std::set<int32_t>> gpus_held(const Job& job) const;
    // How much of each generic resource the job's open steps that asked for it hold on each
    // of its nodes, by name.
    std::vector<std::map<std::string, int64_t>> gres_held(const Job& job) const;

private:
    // Calls `each(job_node, step, step_node)` for every node of each open step of the job that
    // holds what it uses (not --overlap).
    template <class Each>
    void for_each_holding(const Job& job, Each each) const;

    std::map<std::pair<uint64_t, uint32_t>, protocol::StepRecord> steps_;
};

}  // namespace cohort::ctld
