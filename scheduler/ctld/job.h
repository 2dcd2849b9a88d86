// The controller's in-memory form of a job: what scheduling and queries need, compactly.
// protocol::JobRecord is the form that travels and is stored; this one differs on purpose:
// - no payload: the script, its arguments and the environment stay in the state store
//   (state/job_payload.h) and are read when the job launches;
// - strings that many jobs share are interned (interned_string.h);
// - what the planner asks of the job (its ResourceRequest, with the GPU options applied) is
//   derived once, when the job enters the table, not on every pass;
// - lists that stay empty while the job is pending cost one pointer (lazy_vector.h).
// to_record() and job_from_record() convert at those borders; a field added to the record
// and not here fails the round-trip test (tests/unit/ctld/job_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/gpu_options.h"
#include "common/job_state.h"
#include "common/protocol/job_types.h"
#include "common/protocol/messages.h"
#include "scheduler/ctld/interned_string.h"
#include "scheduler/ctld/lazy_vector.h"
#include "scheduler/job_array.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

// GpuOptions with its two texts interned: half its size, in every job.
struct JobGpuRequest {
    InternedString type;
    InternedString bind;
    int32_t gpus = 0;
    int32_t per_node = 0;
    int32_t per_task = 0;
    int32_t cpus_per_gpu = 0;
    int32_t ntasks_per_gpu = 0;
    int64_t mem_per_gpu_mib = 0;

    JobGpuRequest() = default;
    explicit JobGpuRequest(const GpuOptions& options);
    GpuOptions options() const;
};

// protocol::JobUsage with the node's name interned.
struct JobUsageSum {
    uint64_t cpu_user_usec = 0;
    uint64_t cpu_system_usec = 0;
    uint64_t max_rss_kib = 0;
    InternedString max_rss_node;
    uint32_t oom_kills = 0;

    JobUsageSum() = default;
    explicit JobUsageSum(const protocol::JobUsage& usage);
    protocol::JobUsage record() const;
    // One node's report: CPU times and kills add up, the largest memory is kept.
    void add(const protocol::JobUsage& node);
};

// protocol::JobSpec without the payload (script, script_args, env, command_line,
// submit_host); the fields keep their names and meaning.
struct JobRequest {
    InternedString name;
    InternedString partition;  // as given; empty: the default partition
    uint32_t nodes_min = 0;
    uint32_t nodes_max = 0;
    uint32_t ntasks = 0;
    uint32_t ntasks_per_node = 0;
    uint32_t cpus_per_task = 1;
    bool cpus_per_task_set = false;
    bool hold = false;
    bool kill_on_invalid_dep = true;
    int32_t nice = 0;
    int64_t mem_mib = 0;
    int64_t time_limit_s = -2;
    InternedString output;
    InternedString error;
    InternedString cwd;
    InternedString export_spec;
    InternedString dependency;
    InternedString array;
    int64_t begin_time = 0;
    InternedString account;
    InternedString qos;
    InternedString reservation;
    JobGpuRequest gpu;
    uint32_t switches = 0;
    uint32_t segment = 0;
    int64_t switches_wait_s = -1;
    InternedString distribution;
    int32_t requeue = -1;
    InternedString open_mode;
    InternedString signal;
    InternedString comment;
    uint32_t mail_type = 0;
    InternedString mail_user;
    LazyVector<std::string> exclude;
    protocol::NodeSharing sharing = protocol::NodeSharing::kDefault;
    bool mem_whole_node = false;
    bool overcommit = false;
    bool wait_all_nodes = false;
    uint32_t mincpus = 0;
    int64_t mem_per_cpu_mib = 0;
    int64_t time_min_s = 0;
    InternedString constraint;
    InternedString prefer;
    InternedString licenses;
    InternedString gres;  // generic resources per node, as given ("nvme:20,fpga")
    InternedString hint;
    LazyVector<std::string> nodelist;
    LazyVector<std::pair<std::string, std::string>> kept_options;
};

// protocol::JobRecord in memory; see the top of this file for how it differs.
struct Job {
    uint64_t job_id = 0;
    JobRequest spec;
    uint32_t uid = 0;
    uint32_t gid = 0;
    InternedString user_name;
    InternedString partition;
    JobState state = JobState::kPending;
    JobState final_state = JobState::kCompleted;  // while COMPLETING: the state it ends in
    bool held = false;
    bool interactive = false;
    InternedString reason = "None";
    int64_t priority = 0;
    int64_t submit_time = 0;
    int64_t eligible_time = 0;  // set by the first pass that offers it; 0: not yet
    int64_t start_time = 0;
    int64_t end_time = 0;
    int64_t time_limit_s = -1;
    int64_t mem_per_node_mib = 0;
    int64_t expected_start = 0;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;
    uint32_t restart_count = 0;
    uint32_t next_step_id = 0;
    LazyVector<std::string> nodes;
    LazyVector<uint32_t> tasks_per_node;
    LazyVector<uint32_t> cpus_per_node;
    LazyVector<std::string> nodes_cleaning;
    LazyVector<protocol::NodeGpuAlloc> gpu_alloc;
    uint64_t array_job_id = 0;  // 0: not an array task
    uint32_t array_task_id = 0;
    uint32_t array_max_running = 0;
    uint32_t array_count = 0;
    uint32_t array_min = 0;
    uint32_t array_max = 0;
    uint32_t array_step = 1;
    LazyVector<std::string> failed_nodes;
    protocol::RequeueAction requeue_action = protocol::RequeueAction::kNone;
    JobUsageSum usage;        // of the current attempt, summed as its nodes report
    uint64_t het_job_id = 0;  // a hetjob component's leader; 0: not heterogeneous
    uint32_t het_job_offset = 0;
    uint32_t het_size = 0;

    // Derived from `spec` when the job enters the table: what the planner places.
    sched::ResourceRequest resources;

    // Tasks and CPUs with the GPU options applied; asked only as a step starts, so not kept.
    TaskGeometry geometry() const;

    bool is_array_task() const { return array_job_id != 0; }

    bool is_het_component() const { return het_size != 0; }

    bool is_het_leader() const { return het_size != 0 && het_job_offset == 0; }

    // "123", "120_3" or "130+1", as squeue and sacct print job ids.
    std::string display_id() const;
};

// An array's tasks that have not been split off to start, as one record (Slurm's meta job
// record): `job` holds what they share, with job_id = array_job_id, and `pending` their
// indexes. A task is split off as a job of its own (id array_job_id + its position in the
// array) when the scheduler may start it or a request names it.
struct ArrayRemainder {
    Job job;
    sched::ArrayIndexes pending;
    sched::ArrayIndexes all;  // every index of the array (job.spec.array), for task ids

    // The id task `index` has, or will have once split off.
    uint64_t task_id(uint32_t index) const { return job.job_id + all.position_of(index).value(); }

    // "120_[4-9]" or "120_[4-9%2]", as squeue prints it.
    std::string display_id() const;
};

// The job as it travels and is stored; the payload fields are left empty.
protocol::JobRecord to_record(const Job& job);
protocol::JobRecord to_record(const ArrayRemainder& remainder);
// Only what JobRecord::serialize_columns sends, for `queue`: no copy of the whole request.
// to_record() adds the rest to it.
protocol::JobRecord to_columns_record(const Job& job);
protocol::JobRecord to_columns_record(const ArrayRemainder& remainder);
// From a submission (its payload already taken) or the store.
Job job_from_record(const protocol::JobRecord& record);

// When a running job's time limit ends it, as its agents are told.
protocol::JobEndTimeMessage end_time_of(const Job& job);
// Fails (naming the array) when its index lists do not parse.
Result<ArrayRemainder> remainder_from_record(const protocol::JobRecord& record);

}  // namespace cohort::ctld
