#include "launcher/cpu_ledger.h"

#include <algorithm>
#include <fstream>
#include <string>

#include <sched.h>

namespace cohort::agent {

CpuLedger::CpuLedger(std::vector<std::vector<int>> host_cores) : cores_(std::move(host_cores)) {
    std::erase_if(cores_, [](const std::vector<int>& core) { return core.empty(); });
    for (std::vector<int>& core : cores_) {
        std::sort(core.begin(), core.end());
        host_cpus_.insert(host_cpus_.end(), core.begin(), core.end());
    }
    std::sort(cores_.begin(), cores_.end());
    std::sort(host_cpus_.begin(), host_cpus_.end());
}

std::vector<std::vector<int>> CpuLedger::own_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return {};
    }
    // Threads of one core list the same siblings.
    std::map<std::string, std::vector<int>> by_siblings;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set)) {
            continue;
        }
        std::ifstream file("/sys/devices/system/cpu/cpu" + std::to_string(cpu)
                           + "/topology/thread_siblings_list");
        std::string siblings;
        if (!std::getline(file, siblings) || siblings.empty()) {
            siblings = "alone:" + std::to_string(cpu);
        }
        by_siblings[siblings].push_back(cpu);
    }
    std::vector<std::vector<int>> cores;
    for (auto& [siblings, cpus] : by_siblings) {
        cores.push_back(std::move(cpus));
    }
    return cores;
}

int CpuLedger::uses_of(const std::vector<int>& core) {
    int uses = 0;
    for (int cpu : core) {
        uses += jobs_on_cpu_[cpu];
    }
    return uses;
}

std::vector<int> CpuLedger::take(uint64_t job_id, uint32_t count, bool whole_cores) {
    if (auto held = held_.find(job_id); held != held_.end()) {
        return held->second.cpus;
    }
    std::vector<int> chosen = host_cpus_;
    if (count > 0 && count < chosen.size()) {
        chosen.clear();
        if (whole_cores) {
            // Least used cores first, then the lowest ids, all their threads.
            std::vector<const std::vector<int>*> order;
            for (const std::vector<int>& core : cores_) {
                order.push_back(&core);
            }
            std::stable_sort(order.begin(), order.end(), [this](const auto* a, const auto* b) {
                return uses_of(*a) < uses_of(*b);
            });
            for (const std::vector<int>* core : order) {
                if (chosen.size() >= count) {
                    break;
                }
                chosen.insert(chosen.end(), core->begin(), core->end());
            }
        } else {
            // Least used first, then the lowest id: a job's CPUs stay together where they can.
            chosen = host_cpus_;
            std::stable_sort(chosen.begin(), chosen.end(),
                             [this](int a, int b) { return jobs_on_cpu_[a] < jobs_on_cpu_[b]; });
            chosen.resize(count);
        }
        std::sort(chosen.begin(), chosen.end());
    }
    for (int cpu : chosen) {
        ++jobs_on_cpu_[cpu];
    }
    held_[job_id] = {chosen, whole_cores};
    return chosen;
}

void CpuLedger::release(uint64_t job_id) {
    auto held = held_.find(job_id);
    if (held == held_.end()) {
        return;
    }
    for (int cpu : held->second.cpus) {
        --jobs_on_cpu_[cpu];
    }
    held_.erase(held);
}

std::vector<int> CpuLedger::one_thread_per_core(uint64_t job_id) const {
    auto held = held_.find(job_id);
    if (held == held_.end() || !held->second.whole_cores) {
        return {};
    }
    const std::vector<int>& cpus = held->second.cpus;
    std::vector<int> first_threads;
    for (const std::vector<int>& core : cores_) {
        auto first = std::find_first_of(core.begin(), core.end(), cpus.begin(), cpus.end());
        if (first != core.end()) {
            first_threads.push_back(*first);
        }
    }
    std::sort(first_threads.begin(), first_threads.end());
    return first_threads;
}

}  // namespace cohort::agent
