// The scheduler core's inputs and outputs: a snapshot and `now` in, decisions out.
// Pure values: no sockets, threads, files or clock reads anywhere in scheduler/ (but ctld/, sim/).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/placement/gpu_layout.h"
#include "scheduler/placement/network_topology.h"

namespace cohort::sched {

// A generic resource (--gres other than GPUs) taken on each of a job's nodes: its kind, an
// index into the cluster's resource names (ClusterConfig::gres_names), and how many.
struct GresUse {
    int kind = 0;
    int64_t per_node = 0;

    auto operator<=>(const GresUse&) const = default;
};

struct NodeCapacity {
    std::string name;
    int32_t cpus = 0;
    int64_t memory_mib = 0;
    bool up = false;  // registered and responding
    int32_t gpus = 0;
    std::string gpu_type;  // its GPUs' feature, e.g. "h100"; "" unknown
    // For GPU jobs that start now: which GPUs link to which, and the indexes no job holds,
    // so the job goes where its GPUs share one NVLink clique. Null: GPUs are only counted.
    std::shared_ptr<const NodeGpuLayout> gpu_layout;
    std::vector<int> free_gpus;
    std::vector<int64_t> gres;     // how many of each generic resource, by kind; missing: none
    int32_t threads_per_core = 1;  // hardware threads (SMT) each core runs; CPUs counts them
};

struct ResourceRequest {
    uint32_t nodes_min = 0;  // 0: as few as the tasks need
    uint32_t nodes_max = 0;  // 0: nodes_min (or unbounded when nodes_min is 0)
    uint32_t ntasks = 0;     // 0: one per node
    uint32_t ntasks_per_node = 0;
    uint32_t cpus_per_task = 1;
    int64_t memory_mib_per_node = 0;  // 0: not tracked
    int32_t gpus_per_node = 0;
    std::string gpu_type;            // only nodes with this GPU feature; "": any
    uint32_t max_leaf_switches = 0;  // --switches=N: at most N leaf switches; 0: any
    uint32_t segment_nodes = 0;      // --segment=N: groups of N nodes each in one block; 0: none
    bool whole_node = false;         // --exclusive: every CPU and GPU of each node it gets
    bool whole_node_memory = false;  // --mem=0: all of each node's memory
    int64_t memory_mib_per_cpu = 0;  // --mem-per-cpu: memory follows the CPUs on each node
    uint32_t min_cpus_per_node = 0;  // --mincpus
    bool overcommit = false;         // -O: a node gives CPUs for one task, whatever it runs
    // --hint=nomultithread (or compute_bound, memory_bound): each CPU a task asks for is a
    // whole core, every thread of it held, as with Slurm's threads-per-core of 1.
    bool whole_cores = false;
    std::vector<GresUse> gres_per_node;  // by kind, ascending

    // Whether memory can stop the job from fitting a node.
    bool asks_memory() const {
        return memory_mib_per_node > 0 || memory_mib_per_cpu > 0 || whole_node_memory;
    }
};

// A running (or completing) job as planning sees it: what it holds until its expected end.
struct RunningAllocation {
    std::vector<int> nodes;  // indexes into Snapshot::nodes
    std::vector<int32_t> cpus_per_node;
    int64_t memory_mib_per_node = 0;
    int64_t expected_end = 0;  // start + time limit; kForever when unlimited
    int32_t gpus_per_node = 0;
    std::vector<GresUse> gres_per_node;
};

// A cap on what a group of jobs may hold at once, such as one user's jobs under a QoS.
enum class LimitedResource : uint8_t {
    kJobs,
    kCpus,
    kGpus,
    kLicense,  // a cluster's licenses of one name: each job takes the count it asks for
};

struct UsageLimit {
    std::string reason;  // the wait reason when it binds, e.g. "QOSMaxJobsPerUserLimit"
    LimitedResource resource = LimitedResource::kJobs;
    int64_t max = 0;
    int64_t used = 0;  // by the running jobs
};

// An advance reservation's window on its nodes: only its own jobs may use the nodes during
// [start, end), and no other job may be running into it.
struct ReservationWindow {
    std::string name;
    int64_t start = 0;
    int64_t end = 0;
    std::vector<int> nodes;  // indexes into Snapshot::nodes
    bool maintenance = false;
};

// Licenses a job takes (-L): an index into Snapshot::limits and how many.
struct LicenseUse {
    int limit = -1;
    int64_t count = 0;
};

inline constexpr int64_t kForever = int64_t{100} * 365 * 86400;  // "unlimited", as a duration

struct PendingJob {
    uint64_t id = 0;
    int64_t submit_time = 0;
    int64_t priority = 0;       // higher is planned first; ties go to the earlier submit, then id
    int64_t time_limit_s = -1;  // the estimate backfill plans with; -1: unlimited
    // --time-min: the pass may lower the limit as far as this to start the job now; 0: never.
    int64_t time_min_s = 0;
    ResourceRequest request;
    int partition = 0;        // index into Snapshot::partitions
    std::vector<int> limits;  // indexes into Snapshot::limits it counts against
    int reservation = -1;     // index into Snapshot::windows it must run in; -1: none
    // request.max_leaf_switches binds for starts before this time (--switches=N@max-wait).
    int64_t switches_wait_until = 0;
    std::vector<LicenseUse> licenses;  // -L: what it takes of kLicense limits
    std::vector<int> required_nodes;   // -w: nodes every placement must include
    // A heterogeneous job's component: its leader's id (Slurm's het_job_id); 0: none. The
    // components of one job start together or not at all, all planned at the first one's turn.
    uint64_t het_leader = 0;
};

struct Snapshot {
    int64_t now = 0;
    std::vector<NodeCapacity> nodes;
    // Each partition's nodes (indexes into `nodes`), in the order placement tries them.
    std::vector<std::vector<int>> partitions;
    std::vector<RunningAllocation> running;
    std::vector<PendingJob> pending;
    std::vector<UsageLimit> limits;
    std::vector<ReservationWindow> windows;
    NetworkTopology network;  // empty: a flat network
};

// Where a job's tasks go.
struct Placement {
    std::vector<int> nodes;  // indexes into Snapshot::nodes
    std::vector<uint32_t> tasks_per_node;
    std::vector<int32_t> cpus_per_node;
    int64_t memory_mib_per_node = 0;
    int32_t gpus_per_node = 0;
};

struct StartJob {
    uint64_t job_id = 0;
    Placement placement;
    int64_t time_limit_s = 0;  // lowered toward its --time-min to start now; 0: as it was
};

// Why a job waits: "not now". Jobs that can never run are rejected at submit instead.
enum class WaitReason : uint8_t {
    kPriority,      // a higher-priority job waits ahead of it
    kResources,     // it is the first that does not fit
    kLimit,         // a usage limit binds (WaitJob::limit names which)
    kNodeNotAvail,  // it would fit but for a reservation on the nodes
    kReservation,   // its own reservation has not started
};

struct WaitJob {
    uint64_t job_id = 0;
    WaitReason reason = WaitReason::kPriority;
    int limit = -1;  // with kLimit: index into Snapshot::limits
};

// A waiting job's planned start: no later job may delay it.
struct ReservedJob {
    uint64_t job_id = 0;
    int64_t start = 0;
    Placement placement;  // the nodes held for it from `start`
};

struct Decisions {
    std::vector<StartJob> starts;
    std::vector<WaitJob> waits;
    std::vector<ReservedJob> reservations;
};

// Slurm's name for the reason, e.g. "Priority"; kLimit takes the limit's own reason.
std::string wait_reason_name(const WaitJob& wait, const std::vector<UsageLimit>& limits);

}  // namespace cohort::sched
