// What running jobs hold on each node over time, kept between passes. A caller that plans
// often (the simulator replaying a year, a controller at cluster size) adds a job when it
// starts and removes it when it ends, instead of rebuilding every node's profile per pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "scheduler/backfill/profile.h"
#include "scheduler/snapshot.h"

namespace cohort::sched {

// One node's free CPUs, memory and GPUs over time.
struct NodeTimeline {
    AvailabilityProfile cpus;
    AvailabilityProfile memory;
    AvailabilityProfile gpus;
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
