#include "launcher/cpu_ledger.h"

#include <algorithm>

#include <sched.h>

namespace cohort::agent {

CpuLedger::CpuLedger(std::vector<int> host_cpus) : host_cpus_(std::move(host_cpus)) {
    std::sort(host_cpus_.begin(), host_cpus_.end());
}

std::vector<int> CpuLedger::own_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return cpus;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) {
            cpus.push_back(cpu);
        }
    }
    return cpus;
}

std::vector<int> CpuLedger::take(uint64_t job_id, uint32_t count) {
    if (auto held = held_.find(job_id); held != held_.end()) {
        return held->second;
    }
    std::vector<int> chosen = host_cpus_;
    if (count > 0 && count < chosen.size()) {
        // Least used first, then the lowest id: a job's CPUs stay together where they can.
        std::stable_sort(chosen.begin(), chosen.end(),
                         [this](int a, int b) { return jobs_on_cpu_[a] < jobs_on_cpu_[b]; });
        chosen.resize(count);
        std::sort(chosen.begin(), chosen.end());
    }
    for (int cpu : chosen) {
        ++jobs_on_cpu_[cpu];
    }
    held_[job_id] = chosen;
    return chosen;
}

void CpuLedger::release(uint64_t job_id) {
    auto held = held_.find(job_id);
    if (held == held_.end()) {
        return;
    }
    for (int cpu : held->second) {
        --jobs_on_cpu_[cpu];
    }
    held_.erase(held);
}

}  // namespace cohort::agent
