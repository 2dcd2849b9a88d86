// Which of the host's CPUs each job on this node holds. The controller counts CPUs per node;
// the agent picks which ones, as Slurm's task plugin does, so a job's cpuset and binding are
// the cores it was allotted and two jobs do not share one while others idle.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace cohort::agent {

class CpuLedger {
public:
    // `host_cpus`: the CPU ids this agent may use (its own affinity, own_cpus()).
    explicit CpuLedger(std::vector<int> host_cpus);

    // The CPUs the calling process may run on.
    static std::vector<int> own_cpus();

    // `count` CPUs for the job, the least used first (an emulated node may claim more CPUs
    // than the host has: its jobs then share them evenly). Asking again returns what the job
    // holds. 0, or at least the host's count: all of them.
    std::vector<int> take(uint64_t job_id, uint32_t count);
    void release(uint64_t job_id);

private:
    std::vector<int> host_cpus_;
    std::map<int, int> jobs_on_cpu_;
    std::map<uint64_t, std::vector<int>> held_;
};

}  // namespace cohort::agent
