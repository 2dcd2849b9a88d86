// Open steps and what they hold.
#include "scheduler/ctld/step_table.h"

#include <algorithm>

#include "common/generic_gres.h"

namespace cohort::ctld {

void StepTable::open(protocol::StepRecord step) {
    const std::pair<uint64_t, uint32_t> key{step.job_id, step.step_id};
    steps_[key] = std::move(step);
}

std::optional<protocol::StepRecord> StepTable::close(uint64_t job_id, uint32_t step_id) {
    auto it = steps_.find({job_id, step_id});
    if (it == steps_.end()) {
        return std::nullopt;
    }
    protocol::StepRecord step = std::move(it->second);
    steps_.erase(it);
    return step;
}

std::vector<protocol::StepRecord> StepTable::close_all_of(uint64_t job_id) {
    std::vector<protocol::StepRecord> closed;
    for (auto it = steps_.lower_bound({job_id, 0});
         it != steps_.end() && it->first.first == job_id;) {
        closed.push_back(std::move(it->second));
        it = steps_.erase(it);
    }
    return closed;
}

template <class Each>
void StepTable::for_each_holding(const Job& job, Each each) const {
    for (auto it = steps_.lower_bound({job.job_id, 0});
         it != steps_.end() && it->first.first == job.job_id; ++it) {
        const protocol::StepRecord& step = it->second;
        for (size_t i = 0; !step.overlap && i < step.nodes.size(); ++i) {
            auto at = std::find(job.nodes.begin(), job.nodes.end(), step.nodes[i]);
            if (at != job.nodes.end()) {
                each(static_cast<size_t>(at - job.nodes.begin()), step, i);
            }
        }
    }
}

std::vector<uint32_t> StepTable::cpus_held(const Job& job) const {
    std::vector<uint32_t> held(job.nodes.size(), 0);
    for_each_holding(job, [&](size_t node, const protocol::StepRecord& step, size_t i) {
        if (i < step.cpus_per_node.size()) {
            held[node] += step.cpus_per_node[i];
        }
    });
    return held;
}

std::vector<std::set<int32_t>> StepTable::gpus_held(const Job& job) const {
    std::vector<std::set<int32_t>> held(job.nodes.size());
    for_each_holding(job, [&](size_t node, const protocol::StepRecord& step, size_t i) {
        if (i < step.gpus_per_node.size()) {
            held[node].insert(step.gpus_per_node[i].begin(), step.gpus_per_node[i].end());
        }
    });
    return held;
}

std::vector<std::map<std::string, int64_t>> StepTable::gres_held(const Job& job) const {
    std::vector<std::map<std::string, int64_t>> held(job.nodes.size());
    for_each_holding(job, [&](size_t node, const protocol::StepRecord& step, size_t) {
        auto counts = parse_generic_gres("--gres", step.gres);
        for (const GresCount& count : counts ? *counts : std::vector<GresCount>{}) {
            held[node][count.name] += count.count;
        }
    });
    return held;
}

}  // namespace cohort::ctld
