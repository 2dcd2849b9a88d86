// Choosing preemptees: a greedy fill by priority, then a pass that drops the unneeded.
#include "scheduler/preemption/preemption.h"

#include <algorithm>

#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

// What each node has free, and what ending some of the candidates would add back.
class FreeResources {
public:
    FreeResources(const std::vector<NodeCapacity>& nodes,
                  const std::vector<RunningAllocation>& held)
        : nodes_(nodes), cpus_(nodes.size()), memory_(nodes.size()), gpus_(nodes.size()) {
        for (size_t i = 0; i < nodes.size(); ++i) {
            cpus_[i] = nodes[i].cpus;
            memory_[i] = nodes[i].memory_mib;
            gpus_[i] = nodes[i].gpus;
        }
        for (const auto& allocation : held) {
            add(allocation, -1);
        }
    }

    // sign +1: the candidate's resources come free; -1: they are held.
    void add(const PreemptionCandidate& candidate, int sign) {
        for (const auto& allocation : candidate.allocations) {
            add(allocation, sign);
        }
    }

    void add(const RunningAllocation& allocation, int sign) {
        for (size_t k = 0; k < allocation.nodes.size(); ++k) {
            const auto n = static_cast<size_t>(allocation.nodes[k]);
            cpus_[n] += sign * allocation.cpus_per_node.at(k);
            memory_[n] += sign * allocation.memory_mib_per_node;
            gpus_[n] += sign * allocation.gpus_per_node;
        }
    }

    bool fits(const ResourceRequest& request, const std::vector<int>& eligible) const {
        auto capacity = [&](int index) -> uint32_t {
            const auto n = static_cast<size_t>(index);
            if (!nodes_[n].up || !has_gpu_type(request, nodes_[n])) {
                return 0;
            }
            return tasks_that_fit_on(request, nodes_[n], cpus_[n], memory_[n], gpus_[n]);
        };
        return place_tasks(request, eligible, capacity).has_value();
    }

private:
    const std::vector<NodeCapacity>& nodes_;
    std::vector<int64_t> cpus_;
    std::vector<int64_t> memory_;
    std::vector<int64_t> gpus_;
};

}  // namespace

std::vector<uint64_t> choose_preemptees(const std::vector<NodeCapacity>& nodes,
                                        const std::vector<int>& eligible,
                                        const std::vector<RunningAllocation>& held,
                                        const ResourceRequest& request,
                                        std::vector<PreemptionCandidate> candidates) {
    FreeResources free(nodes, held);
    if (free.fits(request, eligible)) {
        return {};
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const PreemptionCandidate& a, const PreemptionCandidate& b) {
                         return a.priority < b.priority;
                     });
    size_t needed = 0;
    for (; needed < candidates.size(); ++needed) {
        free.add(candidates[needed], +1);
        if (free.fits(request, eligible)) {
            break;
        }
    }
    if (needed == candidates.size()) {
        return {};  // it could not start even then
    }
    std::vector<bool> chosen(needed + 1, true);
    for (size_t i = needed; i-- > 0;) {  // the last one added is needed by construction
        free.add(candidates[i], -1);
        if (free.fits(request, eligible)) {
            chosen[i] = false;
        } else {
            free.add(candidates[i], +1);
        }
    }
    std::vector<uint64_t> ids;
    for (size_t i = 0; i <= needed; ++i) {
        if (chosen[i]) {
            ids.push_back(candidates[i].job_id);
        }
    }
    return ids;
}

}  // namespace cohort::sched
