// The job, step and node records that travel between the CLI, the controller and the agents,
// and that the controller stores. Plain structs with Boost.Serialization hooks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <boost/serialization/version.hpp>

#include "common/gpu_options.h"
#include "common/job_state.h"
#include "common/node_state.h"
#include "common/protocol/topology_serialization.h"
#include "common/serialize_fields.h"
#include "common/task_distribution.h"
#include "common/topology/node_topology.h"

namespace cohort::protocol {

// Whether a job's nodes may hold other jobs: --exclusive[=user|mcs] and --oversubscribe.
enum class NodeSharing : uint8_t {
    kDefault,        // CPUs not asked for stay free for other jobs
    kExclusive,      // --exclusive: every CPU and GPU of its nodes
    kExclusiveUser,  // --exclusive=user: here as --exclusive, since CPUs are never shared
    kExclusiveMcs,   // --exclusive=mcs: likewise
    kOversubscribe,  // -s/--oversubscribe: accepted; CPUs are never shared here
};

// What the user asked for; validated by the CLI and again by the controller.
// --hint=nomultithread, compute_bound and memory_bound: each CPU a task asks for is a whole
// core, all of whose threads the job holds and one of which the task uses (Slurm's
// threads-per-core of 1).
inline bool one_thread_per_core(std::string_view hint) {
    return hint == "nomultithread" || hint == "compute_bound" || hint == "memory_bound";
}

struct JobSpec {
    std::string name;
    std::string partition;         // empty: the default partition
    uint32_t nodes_min = 0;        // 0: as few as the tasks need
    uint32_t nodes_max = 0;        // 0: nodes_min
    uint32_t ntasks = 0;           // 0: not given (one per node)
    uint32_t ntasks_per_node = 0;  // 0: not given
    uint32_t cpus_per_task = 1;
    bool cpus_per_task_set = false;
    int64_t mem_mib = 0;        // per node; 0: not tracked
    int64_t time_limit_s = -2;  // -2: partition default, -1: unlimited
    std::string script;         // empty for an interactive allocation (cohort run)
    std::vector<std::string> script_args;
    std::string output;  // filename patterns; empty: slurm-%j.out
    std::string error;
    std::string cwd;
    std::vector<std::pair<std::string, std::string>> env;  // the job's environment
    std::string export_spec = "ALL";
    bool hold = false;
    int32_t nice = 0;
    std::string submit_host;
    std::string command_line;
    std::string dependency;           // as given to --dependency; checked by the controller
    bool kill_on_invalid_dep = true;  // cancel when the dependency can never be met
    std::string array;                // as given to --array; one job per index
    int64_t begin_time = 0;           // unix seconds from --begin; 0: at once
    // Set by the controller at submit when not given: the user's default account, the
    // cluster's default QoS.
    std::string account;
    std::string qos;
    std::string reservation;       // an advance reservation to run in; empty: none
    GpuOptions gpu;                // as given; resolve_gpus() gives the per-node shape
    uint32_t switches = 0;         // --switches=N: at most N leaf switches; 0: any
    int64_t switches_wait_s = -1;  // its @max-wait; -1: the cluster's max_switch_wait
    uint32_t segment = 0;          // --segment=N: nodes per block segment; 0: none
    std::string distribution;      // --distribution as given; empty: block
    int32_t requeue = -1;          // --requeue 1, --no-requeue 0; -1: the cluster's job_requeue
    // --open-mode: "append" or "truncate"; empty: truncate for the first attempt, append with
    // a banner line for each later one, so no attempt's output is lost.
    std::string open_mode;
    std::string signal;  // --signal as given: [{R|B}:]SIG[@SECONDS] (warning_signal.h)
    std::string comment;
    uint32_t mail_type = 0;            // MailEvent bits (mail_type.h); 0: no mail
    std::string mail_user;             // empty: the job's user
    std::vector<std::string> exclude;  // -x/--exclude, expanded: nodes the job may not use
    NodeSharing sharing = NodeSharing::kDefault;
    bool mem_whole_node = false;        // --mem=0: all of each node's memory
    int64_t mem_per_cpu_mib = 0;        // --mem-per-cpu; 0: not given
    std::string constraint;             // -C/--constraint as given (node_features.h)
    std::string prefer;                 // --prefer as given: nodes with these go first
    std::vector<std::string> nodelist;  // -w/--nodelist, expanded: nodes the job must have
    std::string licenses;               // -L/--licenses as given (licenses.h)
    // --gres other than GPUs, per node, as given ("nvme:20,fpga"; generic_gres.h); GPUs: `gpu`.
    std::string gres;
    bool overcommit = false;      // -O: CPUs for one task per node
    uint32_t mincpus = 0;         // --mincpus: at least this many CPUs per node
    std::string hint;             // --hint as given
    int64_t time_min_s = 0;       // --time-min; 0: not given
    bool wait_all_nodes = false;  // --wait-all-nodes=1
    // Options accepted for compatibility that change nothing on this cluster (--wckey,
    // --profile, ...): the option and its value as given, shown by `show job`.
    std::vector<std::pair<std::string, std::string>> kept_options;

    // Version 1 added requeue, open_mode and signal; version 2 comment, mail and exclude;
    // version 3 sharing through kept_options; version 4 gres. Stored specs of an earlier version
    // read without them.
    template <class Archive>
    void serialize(Archive& ar, unsigned version) {
        serialize_fields(ar, name, partition, nodes_min, nodes_max, ntasks, ntasks_per_node,
                         cpus_per_task, cpus_per_task_set, mem_mib, time_limit_s, script,
                         script_args, output, error, cwd, env, export_spec, hold, nice, submit_host,
                         command_line, dependency, kill_on_invalid_dep, array, begin_time, account,
                         qos, reservation, gpu, switches, switches_wait_s, segment, distribution);
        if (version >= 1) {
            serialize_fields(ar, requeue, open_mode, signal);
        }
        if (version >= 2) {
            serialize_fields(ar, comment, mail_type, mail_user, exclude);
        }
        if (version >= 3) {
            serialize_fields(ar, sharing, mem_whole_node, mem_per_cpu_mib, constraint, prefer,
                             nodelist, licenses, overcommit, mincpus, hint, time_min_s,
                             wait_all_nodes, kept_options);
        }
        if (version >= 4) {
            serialize_fields(ar, gres);
        }
    }
};

// The GPUs (and the CPUs bound to them) a job holds on one node.
struct NodeGpuAlloc {
    std::vector<int32_t> gpus;  // node-local GPU indexes, ascending (PCI bus order)
    std::vector<int32_t> cpus;  // CPU ids local to them; empty: the job's CPUs are not bound
    std::vector<std::string> pci_bus_ids;  // of `gpus`
    std::string vendor;                    // "nvidia", "amd", ...: which *_VISIBLE_DEVICES

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, gpus, cpus, pci_bus_ids, vendor);
    }
};

// What a job does once its processes are gone, when it ends to run again.
enum class RequeueAction : uint8_t {
    kNone,
    kRequeue,      // back to PENDING
    kRequeueHeld,  // back to PENDING, held (requeuehold, requeue_exit_hold)
};

// What a job's processes used, read from its cgroups on each node and summed by the
// controller: CPU time adds up, the peak memory is the highest node's (sacct's MaxRSS).
struct JobUsage {
    uint64_t cpu_user_usec = 0;
    uint64_t cpu_system_usec = 0;
    uint64_t max_rss_kib = 0;
    std::string max_rss_node;
    uint32_t oom_kills = 0;  // processes the kernel killed for the job's memory limit

    void add(const JobUsage& node) {
        cpu_user_usec += node.cpu_user_usec;
        cpu_system_usec += node.cpu_system_usec;
        oom_kills += node.oom_kills;
        if (node.max_rss_kib > max_rss_kib) {
            max_rss_kib = node.max_rss_kib;
            max_rss_node = node.max_rss_node;
        }
    }

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, cpu_user_usec, cpu_system_usec, max_rss_kib, max_rss_node, oom_kills);
    }
};

// The job as the controller keeps it (and stores, and reports).
struct JobRecord {
    uint64_t job_id = 0;
    JobSpec spec;
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::string user_name;
    std::string partition;
    JobState state = JobState::kPending;
    std::string reason = "None";
    bool held = false;
    int64_t priority = 0;
    int64_t submit_time = 0;  // unix seconds
    int64_t start_time = 0;
    int64_t end_time = 0;
    int64_t time_limit_s = -1;  // resolved against the partition
    std::vector<std::string> nodes;
    std::vector<uint32_t> tasks_per_node;
    std::vector<uint32_t> cpus_per_node;
    int64_t mem_per_node_mib = 0;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;
    uint32_t restart_count = 0;
    uint32_t next_step_id = 0;
    bool interactive = false;
    // While COMPLETING: the state it ends in, and the nodes still cleaning up.
    JobState final_state = JobState::kCompleted;
    std::vector<std::string> nodes_cleaning;
    // Array tasks: task ids are consecutive from array_job_id, in index order. Tasks not yet
    // split off stay in one record, the array's remainder, with array_pending non-empty.
    uint64_t array_job_id = 0;  // 0: not an array task
    uint32_t array_task_id = 0;
    uint32_t array_max_running = 0;  // the %N throttle; 0: unlimited
    uint32_t array_count = 0;
    uint32_t array_min = 0;
    uint32_t array_max = 0;
    uint32_t array_step = 1;
    int64_t expected_start = 0;  // a pending job's planned start (cohort queue --start); 0: none
    std::vector<NodeGpuAlloc> gpu_alloc;  // per node of `nodes`; empty: no GPUs
    std::string array_pending;  // a remainder's pending task indexes ("5-99999"); else empty
    // Nodes whose loss ended an earlier attempt; later attempts avoid them when the cluster's
    // requeue_avoid_failed_nodes is on.
    std::vector<std::string> failed_nodes;
    RequeueAction requeue_action = RequeueAction::kNone;  // while COMPLETING
    JobUsage usage;  // of this attempt, as far as its nodes have reported
    // When this attempt could first start: its begin time reached, its dependencies met and
    // not held (Slurm's EligibleTime). 0: not yet.
    int64_t eligible_time = 0;
    // A heterogeneous job's component (Slurm's het_job_id and het_job_offset): the components
    // have consecutive ids from their leader's, which is offset 0 and runs the script.
    // het_size: how many there are; 0: not a heterogeneous job.
    uint64_t het_job_id = 0;
    uint32_t het_job_offset = 0;
    uint32_t het_size = 0;

    bool is_array_task() const { return array_job_id != 0; }

    bool is_het_component() const { return het_size != 0; }

    bool is_array_remainder() const { return !array_pending.empty(); }

    // "123", "120_3", "120_[4-9]" (a remainder) or "130+1" (a hetjob component), as squeue and
    // sacct print job ids.
    std::string display_id() const {
        if (is_het_component()) {
            return std::to_string(het_job_id) + "+" + std::to_string(het_job_offset);
        }
        if (is_array_remainder()) {
            return std::to_string(array_job_id) + "_[" + array_pending
                   + (array_max_running != 0 ? "%" + std::to_string(array_max_running) : "") + "]";
        }
        return is_array_task() ? std::to_string(array_job_id) + "_" + std::to_string(array_task_id)
                               : std::to_string(job_id);
    }

    // Version 1 added array_pending, version 2 failed_nodes and requeue_action, version 3
    // usage, version 4 eligible_time, version 5 the hetjob fields; stored records of older
    // versions read without them.
    template <class Archive>
    void serialize(Archive& ar, unsigned version) {
        serialize_fields(ar, job_id, spec, uid, gid, user_name, partition, state, reason, held,
                         priority, submit_time, start_time, end_time, time_limit_s, nodes,
                         tasks_per_node, cpus_per_node, mem_per_node_mib, exit_code, exit_signal,
                         restart_count, next_step_id, interactive, final_state, nodes_cleaning,
                         array_job_id, array_task_id, array_max_running, array_count, array_min,
                         array_max, array_step, expected_start, gpu_alloc);
        if (version >= 1) {
            ar& array_pending;
        }
        if (version >= 2) {
            serialize_fields(ar, failed_nodes, requeue_action);
        }
        if (version >= 3) {
            ar& usage;
        }
        if (version >= 4) {
            ar& eligible_time;
        }
        if (version >= 5) {
            serialize_fields(ar, het_job_id, het_job_offset, het_size);
        }
    }

    // The fields squeue's columns show (all but the working directory), for listings that
    // only print columns: about a fifth of a full record's bytes, and of its decoding time.
    template <class Archive>
    void serialize_columns(Archive& ar) {
        serialize_fields(ar, job_id, spec.name, spec.account, spec.qos, spec.mem_mib,
                         spec.nodes_min, spec.ntasks, spec.ntasks_per_node, spec.cpus_per_task, uid,
                         user_name, partition, state, reason, priority, submit_time, start_time,
                         end_time, time_limit_s, nodes, cpus_per_node, mem_per_node_mib,
                         array_job_id, array_task_id, array_max_running, array_pending,
                         expected_start, het_job_id, het_job_offset, het_size);
    }
};

struct StepRecord {
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    std::string name;
    std::vector<std::string> nodes;
    uint32_t ntasks = 0;
    int64_t start_time = 0;
    int64_t end_time = 0;
    JobState state = JobState::kRunning;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;
    std::vector<uint32_t> cpus_per_node;  // per node of `nodes`: CPUs the step holds there
    bool overlap = false;                 // --overlap: shares CPUs, holds none
    JobUsage usage;                       // from its cgroups, once it ended
    // Per node of `nodes`: the GPUs it holds, which later steps do not get, when it asked for
    // GPUs (srun --gpus, --gpus-per-node, --gres=gpu, --gpus-per-task); empty when it shares
    // the job's GPUs without asking.
    std::vector<std::vector<int32_t>> gpus_per_node;
    // Its own --gres besides GPUs, per node ("nvme:5"), which later steps do not get; empty
    // when it shares the job's without asking.
    std::string gres;

    // Version 1 added usage, version 2 gpus_per_node and gres; older records read without
    // them.
    template <class Archive>
    void serialize(Archive& ar, unsigned version) {
        serialize_fields(ar, job_id, step_id, name, nodes, ntasks, start_time, end_time, state,
                         exit_code, exit_signal, cpus_per_node, overlap);
        if (version >= 1) {
            ar& usage;
        }
        if (version >= 2) {
            ar& gpus_per_node;
            ar& gres;
        }
    }
};

// An advance reservation: its nodes are kept for its users and accounts in [start, end).
struct ReservationRecord {
    std::string name;
    int64_t start_time = 0;  // unix seconds
    int64_t end_time = 0;
    std::vector<std::string> nodes;
    std::vector<std::string> users;  // who may run in it (with accounts: either)
    std::vector<std::string> accounts;
    bool maintenance = false;  // no job may run into it, not even its own users'
    bool ignore_jobs = false;  // created over running jobs without checking them

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, name, start_time, end_time, nodes, users, accounts, maintenance,
                         ignore_jobs);
    }
};

// What a node agent registers: its resources as discovered (or loaded from XML).
struct NodeResources {
    int32_t cpus = 0;
    int32_t sockets = 0;
    int32_t cores = 0;
    int32_t numa_nodes = 0;
    int64_t memory_mib = 0;
    int32_t gpus = 0;
    std::string gpu_type;  // node feature derived from the GPU model, e.g. "h100"; "" unknown
    // The node as discovered: GPU locality (cliques, switches, NUMA, local CPUs, closest
    // NIC, bus ids) and the link matrix, for GPU-set selection and `cohort nodes --topology`.
    topology::NodeTopology topology;

    // Hardware threads (SMT) per core: what --hint=nomultithread leaves idle.
    int32_t threads_per_core() const { return cores > 0 && cpus > cores ? cpus / cores : 1; }

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, cpus, sockets, cores, numa_nodes, memory_mib, gpus, gpu_type,
                         topology);
    }
};

struct NodeInfo {
    std::string name;
    std::string address;
    uint16_t port = 0;
    NodeState state = NodeState::kUnknown;
    std::string reason;
    NodeResources resources;
    int32_t cpus_alloc = 0;
    int64_t memory_alloc_mib = 0;
    std::vector<std::string> partitions;
    std::vector<uint64_t> jobs;
    int64_t boot_time = 0;
    int64_t last_heartbeat = 0;
    bool drain = false;       // an operator drains it: running jobs finish, nothing new starts
    std::string reason_user;  // who set `reason` (sinfo -R's USER)
    int64_t reason_time = 0;  // when, unix seconds
    std::string gres;         // generic resources the config declares ("nvme:20"); GPUs: above

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, name, address, port, state, reason, resources, cpus_alloc,
                         memory_alloc_mib, partitions, jobs, boot_time, last_heartbeat, drain,
                         reason_user, reason_time, gres);
    }
};

// What operators and failures set on a node that must outlive a controller restart: a drain,
// a DOWN that holds until resumed, and the reason for either.
struct NodeAdminRecord {
    std::string name;
    bool drain = false;
    bool held_down = false;  // DOWN, and registering again does not return it to service
    std::string reason;
    std::string reason_user;
    int64_t reason_time = 0;

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, name, drain, held_down, reason, reason_user, reason_time);
    }
};

// One task's GPUs, CPUs and NIC on its node.
struct TaskGpuBinding {
    std::vector<int32_t> gpus;  // node-local GPU indexes
    std::vector<int32_t> cpus;  // CPU ids to bind to; empty: not bound
    std::string nic;            // closest compute NIC of its first GPU ("mlx5_0"); "" none

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, gpus, cpus, nic);
    }
};

// A step's GPUs on one node and how its local tasks share them.
struct NodeGpuBinding {
    NodeGpuAlloc alloc;                 // the job's GPUs on the node
    std::vector<TaskGpuBinding> tasks;  // by local rank
    bool per_task = false;  // each task sees only its own GPUs (--gpu-bind, --gpus-per-task)

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, alloc, tasks, per_task);
    }
};

// Where a step's tasks run: what the client needs to contact the agents, and what every
// rank's environment is built from.
struct StepLayout {
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    std::string job_name;
    std::string partition;
    std::string cluster_name;
    std::vector<std::string> nodes;
    std::vector<std::string> addresses;
    std::vector<uint16_t> ports;
    std::vector<uint32_t> tasks_per_node;
    uint32_t cpus_per_task = 1;
    bool cpus_per_task_set = false;
    int64_t job_end_time = 0;  // 0: no limit
    std::string job_signal;    // the job's --signal, sent to the step's tasks before the limit
    uint32_t restart_count = 0;
    std::vector<std::string> job_nodes;
    std::vector<uint32_t> job_cpus_per_node;
    std::vector<NodeGpuBinding> gpu_nodes;  // per node of `nodes`; empty: no GPUs
    TaskDistribution distribution;          // how ranks are dealt over `nodes`
    uint64_t het_job_id = 0;  // a hetjob component's leader, which SLURM_JOB_ID names; 0: none
    // A step across a hetjob's components (one MPI_COMM_WORLD): the job, a component, each
    // node of `nodes` belongs to. The step is named by job_id (the leader) and step_id on
    // every node. Empty: job_id on all.
    std::vector<uint64_t> node_jobs;
    // Such a step's CPUs per task on each node, where components differ; empty: cpus_per_task.
    std::vector<uint32_t> node_cpus_per_task;

    // The job whose allocation holds node `node_index` of the step.
    uint64_t job_on(size_t node_index) const {
        return node_index < node_jobs.size() ? node_jobs[node_index] : job_id;
    }

    uint32_t cpus_per_task_on(size_t node_index) const {
        return node_index < node_cpus_per_task.size() ? node_cpus_per_task[node_index]
                                                      : cpus_per_task;
    }

    // Which ranks run on which node, by `distribution`.
    RankMap rank_map() const { return map_ranks(tasks_per_node, distribution); }

    uint32_t ntasks() const {
        uint32_t total = 0;
        for (uint32_t n : tasks_per_node) {
            total += n;
        }
        return total;
    }

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, job_id, step_id, job_name, partition, cluster_name, nodes, addresses,
                         ports, tasks_per_node, cpus_per_task, cpus_per_task_set, job_end_time,
                         job_signal, restart_count, job_nodes, job_cpus_per_node, gpu_nodes,
                         distribution, het_job_id, node_jobs, node_cpus_per_task);
    }
};

}  // namespace cohort::protocol

BOOST_CLASS_VERSION(cohort::protocol::JobSpec, 4)
BOOST_CLASS_VERSION(cohort::protocol::JobRecord, 5)
BOOST_CLASS_VERSION(cohort::protocol::StepRecord, 2)
