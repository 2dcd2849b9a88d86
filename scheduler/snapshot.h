// The scheduler core's inputs and outputs: a snapshot and `now` in, decisions out.
// Pure values: no sockets, threads, files or clock reads anywhere in scheduler/ (but ctld/, sim/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cohort::sched {

struct NodeCapacity {
    std::string name;
    int32_t cpus = 0;
    int64_t memory_mib = 0;
    bool up = false;  // registered and responding
    int32_t cpus_used = 0;
    int64_t memory_used_mib = 0;

    int32_t cpus_free() const { return cpus - cpus_used; }
    int64_t memory_free_mib() const { return memory_mib - memory_used_mib; }
};

struct ResourceRequest {
    uint32_t nodes_min = 0;  // 0: as few as the tasks need
    uint32_t nodes_max = 0;  // 0: nodes_min (or unbounded when nodes_min is 0)
    uint32_t ntasks = 0;     // 0: one per node
    uint32_t ntasks_per_node = 0;
    uint32_t cpus_per_task = 1;
    int64_t memory_mib_per_node = 0;  // 0: not tracked
};

// A running (or completing) job as planning sees it: what it holds until its expected end.
struct RunningAllocation {
    std::vector<int> nodes;  // indexes into Snapshot::nodes
    std::vector<int32_t> cpus_per_node;
    int64_t memory_mib_per_node = 0;
    int64_t expected_end = 0;  // start + time limit; kForever when unlimited
};

inline constexpr int64_t kForever = int64_t{100} * 365 * 86400;  // "unlimited", as a duration

struct PendingJob {
    uint64_t id = 0;
    int64_t submit_time = 0;
    int32_t nice = 0;
    int64_t time_limit_s = -1;  // the estimate backfill plans with; -1: unlimited
    ResourceRequest request;
    std::vector<int> eligible_nodes;  // indexes into Snapshot::nodes (its partition)
};

struct Snapshot {
    int64_t now = 0;
    std::vector<NodeCapacity> nodes;
    std::vector<RunningAllocation> running;
    std::vector<PendingJob> pending;
};

// Where a job's tasks go.
struct Placement {
    std::vector<int> nodes;  // indexes into Snapshot::nodes
    std::vector<uint32_t> tasks_per_node;
    std::vector<int32_t> cpus_per_node;
    int64_t memory_mib_per_node = 0;
};

struct StartJob {
    uint64_t job_id = 0;
    Placement placement;
};

// Why a job waits: "not now". Jobs that can never run are rejected at submit instead.
enum class WaitReason : uint8_t { kPriority, kResources };

struct WaitJob {
    uint64_t job_id = 0;
    WaitReason reason = WaitReason::kPriority;
};

// A waiting job's planned start: no later job may delay it.
struct ReservedJob {
    uint64_t job_id = 0;
    int64_t start = 0;
};

struct Decisions {
    std::vector<StartJob> starts;
    std::vector<WaitJob> waits;
    std::vector<ReservedJob> reservations;
};

const char* wait_reason_name(WaitReason reason);

}  // namespace cohort::sched
