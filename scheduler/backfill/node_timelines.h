// What running jobs hold on each node over time, kept between passes. A caller that plans
// often (the simulator replaying a year, a controller at cluster size) adds a job when it
// starts and removes it when it ends, instead of rebuilding every node's profile per pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "scheduler/backfill/profile.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// One node's free CPUs, memory, GPUs and generic resources over time.
struct NodeTimeline {
    AvailabilityProfile cpus;
    AvailabilityProfile memory;
    AvailabilityProfile gpus;
    std::vector<AvailabilityProfile> gres;  // by kind: every node has one per kind
};

// Which of a node's resources: NodeResource::kCpus, kMemory, kGpus, or generic(kind).
struct NodeResource {
    enum class Kind : uint8_t {
        kCpus,
        kMemory,
        kGpus,
        kGres
    };

    Kind kind = Kind::kCpus;
    int gres = 0;  // with kGres: the generic resource's kind

    static const NodeResource kCpus;
    static const NodeResource kMemory;
    static const NodeResource kGpus;

    static constexpr NodeResource generic(int kind) { return {Kind::kGres, kind}; }
};

inline constexpr NodeResource NodeResource::kCpus{NodeResource::Kind::kCpus, 0};
inline constexpr NodeResource NodeResource::kMemory{NodeResource::Kind::kMemory, 0};
inline constexpr NodeResource NodeResource::kGpus{NodeResource::Kind::kGpus, 0};

// What a pass took from one node during [start, end): a job it starts or a reservation.
struct PassHold {
    int64_t start = 0;
    int64_t end = 0;
    int64_t cpus = 0;
    int64_t memory_mib = 0;
    int64_t gpus = 0;
    std::span<const GresUse> gres;  // the job's request, which outlives the pass

    int64_t amount(NodeResource resource) const;
};

// One node as a pass sees it: the committed timeline less the pass's holds on the node.
// Reads subtract the holds, so a pass never copies a profile (a reservation for a large job
// touches hundreds of nodes); a node holds one or two of them.
class HeldNode {
public:
    HeldNode(const NodeTimeline& committed, std::span<const PassHold> holds)
        : committed_(committed), holds_(holds) {}

    // The least free at any instant of [start, start + duration).
    int64_t min_free(NodeResource resource, int64_t start, int64_t duration) const;
    // The earliest t >= from at which `amount` stays free for `duration`; INT64_MAX: never.
    int64_t earliest_start(NodeResource resource,
                           int64_t from,
                           int64_t duration,
                           int64_t amount) const;
    // Appends every time in (after, until] at which what is free changes; true if it also
    // changes after `until`.
    bool append_changes_between(NodeResource resource,
                                int64_t after,
                                int64_t until,
                                std::vector<int64_t>& out) const;

private:
    const AvailabilityProfile& profile(NodeResource resource) const;
    int64_t held_at(NodeResource resource, int64_t t) const;

    const NodeTimeline& committed_;
    std::span<const PassHold> holds_;
};

class NodeTimelines {
public:
    // Every node of `nodes` (by index, as in Snapshot::nodes) free from `origin` on.
    NodeTimelines(const std::vector<NodeCapacity>& nodes, int64_t origin);

    // `job` holds `allocation` from `start` until allocation.expected_end.
    // REQUIRES: `job` is not held; start < expected_end.
    void add(uint64_t job, const RunningAllocation& allocation, int64_t start);
    // Gives back what `job` holds; a job not held is ignored.
    void remove(uint64_t job);
    // `job` outlived its expected end: it holds its nodes until `end` instead.
    void extend(uint64_t job, int64_t end);
    // Forgets every breakpoint before `t`; later queries must not look before it.
    void forget_before(int64_t t);

    size_t size() const { return nodes_.size(); }

    const NodeTimeline& node(size_t index) const { return nodes_[index]; }

    // CPUs no held job takes. It is what is free now as long as every held job still
    // covers now: the caller extends jobs that outlive their expected end before planning.
    int64_t cpus_unheld(size_t index) const { return cpus_unheld_[index]; }

    // Free CPUs summed over every node: no set of nodes has more free at any time, so a job
    // needing more during a window fits nowhere in it.
    const AvailabilityProfile& cpus_total() const { return cpus_total_; }

private:
    struct Held {
        RunningAllocation allocation;
        int64_t start = 0;
    };

    void apply(const Held& held, int64_t end, int sign);

    std::vector<NodeTimeline> nodes_;
    std::vector<int64_t> cpus_unheld_;
    AvailabilityProfile cpus_total_;
    std::unordered_map<uint64_t, Held> held_;
};

}  // namespace cohort::sched
