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

    // Every part at once, each on nodes no earlier part took.
    bool fits(const std::vector<WaitingPart>& waiting) const {
        std::vector<bool> taken(nodes_.size(), false);
        for (const WaitingPart& part : waiting) {
            auto capacity = [&](int index) -> uint32_t {
                const auto n = static_cast<size_t>(index);
                if (!nodes_[n].up || taken[n] || !has_gpu_type(part.request, nodes_[n])) {
                    return 0;
                }
                return tasks_that_fit_on(part.request, nodes_[n], cpus_[n], memory_[n], gpus_[n]);
            };
            auto placement = place_tasks(part.request, part.eligible, capacity);
            if (!placement) {
                return false;
            }
            for (int node : placement->nodes) {
                taken[static_cast<size_t>(node)] = true;
            }
        }
        return true;
    }

private:
    const std::vector<NodeCapacity>& nodes_;
    std::vector<int64_t> cpus_;
    std::vector<int64_t> memory_;
    std::vector<int64_t> gpus_;
};

}  // namespace

std::vector<uint64_t> choose_preemptees(const std::vector<NodeCapacity>& nodes,
                                        const std::vector<WaitingPart>& waiting,
                                        const std::vector<RunningAllocation>& held,
                                        std::vector<PreemptionCandidate> candidates) {
    FreeResources free(nodes, held);
    if (free.fits(waiting)) {
        return {};
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const PreemptionCandidate& a, const PreemptionCandidate& b) {
                         return a.priority < b.priority;
                     });
    size_t needed = 0;
    for (; needed < candidates.size(); ++needed) {
        free.add(candidates[needed], +1);
        if (free.fits(waiting)) {
            break;
        }
    }
    if (needed == candidates.size()) {
        return {};  // it could not start even then
    }
    std::vector<bool> chosen(needed + 1, true);
    for (size_t i = needed; i-- > 0;) {  // the last one added is needed by construction
        free.add(candidates[i], -1);
        if (free.fits(waiting)) {
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
