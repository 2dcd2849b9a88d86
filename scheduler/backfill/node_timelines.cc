// Per-node profiles kept up to date as jobs start, end and overrun.
#include "scheduler/backfill/node_timelines.h"

namespace cohort::sched {

namespace {

int64_t cpus_of(const std::vector<NodeCapacity>& nodes) {
    int64_t sum = 0;
    for (const NodeCapacity& node : nodes) {
        sum += node.cpus;
    }
    return sum;
}

}  // namespace

NodeTimelines::NodeTimelines(const std::vector<NodeCapacity>& nodes, int64_t origin)
    : cpus_total_(cpus_of(nodes), origin) {
    nodes_.reserve(nodes.size());
    cpus_unheld_.reserve(nodes.size());
    for (const NodeCapacity& node : nodes) {
        nodes_.push_back({AvailabilityProfile(node.cpus, origin),
                          AvailabilityProfile(node.memory_mib, origin),
                          AvailabilityProfile(node.gpus, origin)});
        cpus_unheld_.push_back(node.cpus);
    }
}

void NodeTimelines::apply(const Held& held, int64_t end, int sign) {
    const RunningAllocation& a = held.allocation;
    const int64_t duration = end - held.start;
    const auto change = [&](AvailabilityProfile& profile, int64_t amount) {
        if (amount <= 0) {
            return;
        }
        if (sign < 0) {
            profile.reserve(held.start, duration, amount);
        } else {
            profile.release(held.start, duration, amount);
        }
    };
    int64_t cpus = 0;
    for (size_t i = 0; i < a.nodes.size(); ++i) {
        const auto index = static_cast<size_t>(a.nodes[i]);
        NodeTimeline& timeline = nodes_[index];
        cpus += a.cpus_per_node[i];
        change(timeline.cpus, a.cpus_per_node[i]);
        change(timeline.memory, a.memory_mib_per_node);
        change(timeline.gpus, a.gpus_per_node);
    }
    change(cpus_total_, cpus);
}

void NodeTimelines::add(uint64_t job, const RunningAllocation& allocation, int64_t start) {
    auto [it, fresh] = held_.try_emplace(job, Held{allocation, start});
    if (!fresh) {
        return;
    }
    apply(it->second, allocation.expected_end, -1);
    for (size_t i = 0; i < allocation.nodes.size(); ++i) {
        cpus_unheld_[static_cast<size_t>(allocation.nodes[i])] -= allocation.cpus_per_node[i];
    }
}

void NodeTimelines::remove(uint64_t job) {
    auto it = held_.find(job);
    if (it == held_.end()) {
        return;
    }
    const RunningAllocation& a = it->second.allocation;
    apply(it->second, a.expected_end, +1);
    for (size_t i = 0; i < a.nodes.size(); ++i) {
        cpus_unheld_[static_cast<size_t>(a.nodes[i])] += a.cpus_per_node[i];
    }
    held_.erase(it);
}

void NodeTimelines::extend(uint64_t job, int64_t end) {
    auto it = held_.find(job);
    if (it == held_.end() || end <= it->second.allocation.expected_end) {
        return;
    }
    Held& held = it->second;
    // Hold the added tail [old end, end) only: the head is already taken.
    Held tail = held;
    tail.start = held.allocation.expected_end;
    apply(tail, end, -1);
    held.allocation.expected_end = end;
}

void NodeTimelines::forget_before(int64_t t) {
    cpus_total_.advance_origin(t);
    for (NodeTimeline& timeline : nodes_) {
        timeline.cpus.advance_origin(t);
        timeline.memory.advance_origin(t);
        timeline.gpus.advance_origin(t);
    }
}

}  // namespace cohort::sched
