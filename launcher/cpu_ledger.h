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
    // `host_cores`: the CPU ids this agent may use (its own affinity, own_cores()), grouped
    // by the core whose hardware threads they are.
    explicit CpuLedger(std::vector<std::vector<int>> host_cores);

    // The CPUs the calling process may run on, grouped by core as the kernel's topology
    // says (a CPU whose siblings it cannot read is a core of its own).
    static std::vector<std::vector<int>> own_cores();

    // `count` CPUs for the job, the least used first (an emulated node may claim more CPUs
    // than the host has: its jobs then share them evenly); with `whole_cores`, every thread of
    // the least used cores (--hint=nomultithread). Asking again returns what the job holds.
    // 0, or at least the host's count: all of them.
    std::vector<int> take(uint64_t job_id, uint32_t count, bool whole_cores = false);
    void release(uint64_t job_id);

    // Where the tasks of a job holding whole cores run: the first thread of each of its
    // cores. Empty for other jobs, whose tasks run on all it holds.
    std::vector<int> one_thread_per_core(uint64_t job_id) const;

private:
    struct Held {
        std::vector<int> cpus;
        bool whole_cores = false;
    };

    int uses_of(const std::vector<int>& core);

    std::vector<std::vector<int>> cores_;  // by their first CPU id
    std::vector<int> host_cpus_;           // every CPU of cores_, ascending
    std::map<int, int> jobs_on_cpu_;
    std::map<uint64_t, Held> held_;
};

}  // namespace cohort::agent
