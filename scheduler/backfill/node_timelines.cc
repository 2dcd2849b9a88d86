// Per-node profiles kept up to date as jobs start, end and overrun.
#include "scheduler/backfill/node_timelines.h"

#include <algorithm>

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
    size_t gres_kinds = 0;
    for (const NodeCapacity& node : nodes) {
        gres_kinds = std::max(gres_kinds, node.gres.size());
    }
    nodes_.reserve(nodes.size());
    cpus_unheld_.reserve(nodes.size());
    for (const NodeCapacity& node : nodes) {
        NodeTimeline timeline{AvailabilityProfile(node.cpus, origin),
                              AvailabilityProfile(node.memory_mib, origin),
                              AvailabilityProfile(node.gpus, origin),
                              {}};
        timeline.gres.reserve(gres_kinds);
        for (size_t kind = 0; kind < gres_kinds; ++kind) {
            timeline.gres.emplace_back(kind < node.gres.size() ? node.gres[kind] : 0, origin);
        }
        nodes_.push_back(std::move(timeline));
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
        for (const GresUse& gres : a.gres_per_node) {
            if (static_cast<size_t>(gres.kind) < timeline.gres.size()) {
                change(timeline.gres[static_cast<size_t>(gres.kind)], gres.per_node);
            }
        }
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
        for (AvailabilityProfile& gres : timeline.gres) {
            gres.advance_origin(t);
        }
    }
}

int64_t PassHold::amount(NodeResource resource) const {
    switch (resource.kind) {
        case NodeResource::Kind::kCpus:
            return cpus;
        case NodeResource::Kind::kMemory:
            return memory_mib;
        case NodeResource::Kind::kGpus:
            return gpus;
        case NodeResource::Kind::kGres:
            for (const GresUse& use : gres) {
                if (use.kind == resource.gres) {
                    return use.per_node;
                }
            }
            return 0;
    }
    return 0;
}

const AvailabilityProfile& HeldNode::profile(NodeResource resource) const {
    static const AvailabilityProfile kNone(0, 0);
    switch (resource.kind) {
        case NodeResource::Kind::kCpus:
            return committed_.cpus;
        case NodeResource::Kind::kMemory:
            return committed_.memory;
        case NodeResource::Kind::kGpus:
            return committed_.gpus;
        case NodeResource::Kind::kGres:
            return static_cast<size_t>(resource.gres) < committed_.gres.size()
                           ? committed_.gres[static_cast<size_t>(resource.gres)]
                           : kNone;
    }
    return committed_.cpus;
}

int64_t HeldNode::held_at(NodeResource resource, int64_t t) const {
    int64_t sum = 0;
    for (const PassHold& hold : holds_) {
        if (hold.start <= t && t < hold.end) {
            sum += hold.amount(resource);
        }
    }
    return sum;
}

int64_t HeldNode::min_free(NodeResource resource, int64_t start, int64_t duration) const {
    const AvailabilityProfile& committed = profile(resource);
    if (holds_.empty()) {
        return committed.min_free(start, duration);
    }
    // Within one step of the committed profile, what the holds take changes only where a
    // hold starts (where one ends, less is taken): look there and at the step's start.
    int64_t least = committed.capacity();
    committed.for_each_step(
            start, start + duration, [&](int64_t from, int64_t until, int64_t free) {
                least = std::min(least, free - held_at(resource, from));
                for (const PassHold& hold : holds_) {
                    if (from < hold.start && hold.start < until) {
                        least = std::min(least, free - held_at(resource, hold.start));
                    }
                }
            });
    return least;
}

int64_t HeldNode::earliest_start(NodeResource resource,
                                 int64_t from,
                                 int64_t duration,
                                 int64_t amount) const {
    const AvailabilityProfile& committed = profile(resource);
    int64_t t = from;
    for (;;) {
        // The holds only take: the committed profile's answer is a lower bound.
        t = committed.earliest_start(t, duration, amount);
        if (t == INT64_MAX || holds_.empty() || min_free(resource, t, duration) >= amount) {
            return t;
        }
        // A hold is in the way: the next start to try is the next change after t.
        int64_t next = committed.next_change_after(t);
        for (const PassHold& hold : holds_) {
            if (hold.end > t) {
                next = std::min(next, hold.end);
            }
        }
        if (next == INT64_MAX) {
            return INT64_MAX;
        }
        t = next;
    }
}

bool HeldNode::append_changes_between(NodeResource resource,
                                      int64_t after,
                                      int64_t until,
                                      std::vector<int64_t>& out) const {
    bool more = profile(resource).append_changes_between(after, until, out);
    for (const PassHold& hold : holds_) {
        if (hold.amount(resource) <= 0) {
            continue;
        }
        for (int64_t t : {hold.start, hold.end}) {
            if (t > until) {
                more = true;
            } else if (t > after) {
                out.push_back(t);
            }
        }
    }
    return more;
}

}  // namespace cohort::sched
