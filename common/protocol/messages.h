// Every message of the Cohort protocol. Each struct names its wire type in kType;
// docs/dev/protocol.md lists who sends which and what it answers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/protocol/frame.h"
#include "common/protocol/job_types.h"
#include "common/serialize_fields.h"

namespace cohort::protocol {

enum class MessageType : uint16_t {
    // Replies common to every request.
    kError = 1,
    kAck = 2,
    // Client -> controller.
    kSubmitJob = 10,
    kSubmitReply = 11,
    kQueryJobs = 12,
    kJobList = 13,
    kQueryNodes = 14,
    kNodeList = 15,
    kJobControl = 16,
    kAllocate = 17,
    kAllocation = 18,
    kStepCreate = 19,
    kStepCreated = 20,
    kStepComplete = 21,
    kJobComplete = 22,
    kAcctQuery = 23,
    kPriorityQuery = 24,
    kPriorityList = 25,
    kReservationCreate = 26,
    kReservationDelete = 27,
    kReservationQuery = 28,
    kReservationList = 29,
    kJobControlReply = 30,
    kNodeControl = 31,
    kJobUpdate = 32,
    kUsageReport = 33,
    kUsageTotals = 34,
    kShareQuery = 35,
    kShareList = 36,
    kWillRun = 37,
    // Agent <-> controller.
    kRegisterNode = 40,
    kRegisterReply = 41,
    kHeartbeat = 42,
    kLaunchBatch = 43,
    kTerminateJob = 44,
    kBatchDone = 45,
    kJobCleaned = 46,
    kJobTimedOut = 47,
    kNodeFault = 48,
    kJobEndTime = 49,
    // Client <-> agent.
    kLaunchStep = 60,
    kStepLaunched = 61,
    kTaskOutput = 62,
    kTaskExit = 63,
    kSignalStep = 64,
    kStepDone = 65,
    kStepPeers = 66,
    kStepAbort = 67,
    kStepAttach = 68,
    kTaskInput = 69,
    kStepDetach = 70,
    // Node agent <-> its step managers (cohort-stepd), and step manager <-> step manager.
    kStepdHello = 80,
    kStepdSetup = 81,
    kStepdReady = 82,
    kStepdDetach = 86,
    kCollective = 83,
    kDirectModexRequest = 84,
    kDirectModexReply = 85,
};

struct ErrorReply {
    static constexpr MessageType kType = MessageType::kError;
    int32_t code = 0;  // a cohort::StatusCode
    std::string message;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, code, message);
    }
};

struct AckReply {
    static constexpr MessageType kType = MessageType::kAck;
    std::string message;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, message);
    }
};

// With test_only (sbatch --test-only) nothing is submitted: the answer is a WillRunReply.
struct SubmitJobRequest {
    static constexpr MessageType kType = MessageType::kSubmitJob;
    JobSpec spec;
    bool test_only = false;
    // A heterogeneous job's further components (#SBATCH hetjob), without script or
    // environment: `spec` is the leader's. All are accepted or none.
    std::vector<JobSpec> het_components;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, spec, test_only, het_components);
    }
};

// Where and when a job would start if it were submitted now and no other job waited: the
// running jobs and reservations hold what they hold. `job_id` is the id it would get.
struct WillRunReply {
    static constexpr MessageType kType = MessageType::kWillRun;
    uint64_t job_id = 0;
    int64_t start_time = 0;
    std::vector<std::string> nodes;
    int64_t cpus = 0;
    std::string partition;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, start_time, nodes, cpus, partition);
    }
};

struct SubmitJobReply {
    static constexpr MessageType kType = MessageType::kSubmitReply;
    uint64_t job_id = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id);
    }
};

// squeue's filters, applied by the controller; each list empty: any. A job is listed when
// it matches every list given.
struct QueryJobsRequest {
    static constexpr MessageType kType = MessageType::kQueryJobs;
    std::vector<uint64_t> job_ids;  // an array's id stands for its tasks
    std::vector<std::string> users;
    std::vector<JobState> states;  // empty: the active ones (pending, running, completing)
    std::vector<std::string> partitions;
    std::vector<std::string> names;
    std::vector<std::string> accounts;
    bool columns_only = false;  // jobs as JobRecord::serialize_columns sends them

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_ids, users, states, partitions, names, accounts, columns_only);
    }
};

// A job listing comes in frames of at most kJobsPerFrame jobs, each with the steps of its
// jobs; every frame but the last has `more` set. So no reply grows with the job table and
// the client prints as frames arrive. Frames are small because the client decodes each into
// the same records: a frame of 1,000 had it page-fault 2 MB of records, a sixth of `queue`.
struct JobListReply {
    static constexpr MessageType kType = MessageType::kJobList;
    static constexpr size_t kJobsPerFrame = 256;
    std::vector<JobRecord> jobs;
    std::vector<StepRecord> steps;  // filled by accounting queries
    bool more = false;
    bool columns_only = false;  // each job has only the fields of JobRecord::serialize_columns

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, columns_only);
        if (columns_only) {
            serialize_columns(ar);
        } else {
            serialize_fields(ar, jobs);
        }
        serialize_fields(ar, steps, more);
    }

private:
    template <class A>
    void serialize_columns(A& ar) {
        uint32_t count = static_cast<uint32_t>(jobs.size());
        serialize_fields(ar, count);
        if constexpr (A::is_loading::value) {
            if (count > kJobsPerFrame) {
                throw std::length_error("a job list frame of " + std::to_string(count)
                                        + " jobs, more than " + std::to_string(kJobsPerFrame));
            }
            jobs.resize(count);  // a reused frame keeps its records' buffers
        }
        for (JobRecord& job : jobs) {
            job.serialize_columns(ar);
        }
    }
};

// Every node without its topology, or with `topology_of` set that node alone, with it.
struct QueryNodesRequest {
    static constexpr MessageType kType = MessageType::kQueryNodes;
    std::string topology_of;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, topology_of);
    }
};

struct NodeListReply {
    static constexpr MessageType kType = MessageType::kNodeList;
    std::vector<NodeInfo> nodes;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, nodes);
    }
};

enum class JobAction : uint8_t {
    kCancel,
    kHold,
    kRelease,
    kRequeue,      // a running batch job ends its attempt and waits again, as scontrol requeue
    kRequeueHold,  // and is held, as scontrol requeuehold
};

enum class NodeAction : uint8_t {
    kDrain,   // running jobs finish, nothing new starts
    kDown,    // out of service now: its jobs are requeued or end NODE_FAIL
    kResume,  // back in service from DRAIN or DOWN
};

// cohort node drain|down|resume, scontrol update nodename=... state=...: all or nothing,
// answered with an AckReply or one ErrorReply naming the first node it refuses.
struct NodeControlRequest {
    static constexpr MessageType kType = MessageType::kNodeControl;
    NodeAction action = NodeAction::kDrain;
    std::vector<std::string> nodes;
    std::string reason;  // required for drain and down

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, action, nodes, reason);
    }
};

// scontrol update job / cohort update: changes to one job, all or nothing, answered with an
// AckReply or one ErrorReply naming the first change refused. Keys are Slurm's names in
// lower case (timelimit, partition, qos, nice, jobname, dependency, starttime, comment).
struct JobUpdateRequest {
    static constexpr MessageType kType = MessageType::kJobUpdate;
    uint64_t job_id = 0;
    std::vector<std::pair<std::string, std::string>> changes;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, changes);
    }
};

// scancel's filters: a job is selected when it matches every one given (empty: any).
struct JobFilterSpec {
    std::string user;
    std::string name;
    std::string partition;
    std::string account;
    std::vector<JobState> states;  // empty: pending, running or completing

    bool any() const {
        return !user.empty() || !name.empty() || !partition.empty() || !account.empty()
               || !states.empty();
    }

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, user, name, partition, account, states);
    }
};

// Which of a job's processes a signal goes to, as scancel's default, --batch and --full.
enum class SignalTarget : uint8_t {
    kSteps,       // every step's tasks, not the batch shell
    kBatchShell,  // the batch shell alone, not its children
    kFull,        // the batch shell, its children and every step
};

// Ids and a filter: with both, the named jobs that match it; with a filter alone, every
// matching job. Hold and release are all or nothing; cancel acts on every job it may and
// reports the others in JobControlReply::errors, as scancel does.
struct JobControlRequest {
    static constexpr MessageType kType = MessageType::kJobControl;
    JobAction action = JobAction::kCancel;
    std::vector<uint64_t> job_ids;
    int32_t signal = 0;  // kCancel: 0 = terminate (SIGTERM, grace, SIGKILL)
    SignalTarget signal_target = SignalTarget::kSteps;
    JobFilterSpec filter;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, action, job_ids, signal, signal_target, filter);
    }
};

struct JobControlReply {
    static constexpr MessageType kType = MessageType::kJobControlReply;
    uint64_t acted_on = 0;            // jobs cancelled, held or released
    std::vector<std::string> errors;  // one line per id that could not be

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, acted_on, errors);
    }
};

// cohort run outside an allocation: submit an interactive job, then wait on this
// connection for its Allocation. Closing the connection cancels the job.
struct AllocateRequest {
    static constexpr MessageType kType = MessageType::kAllocate;
    JobSpec spec;
    std::string step_name;
    // salloc A : B: a heterogeneous job's further components; `spec` is the leader's.
    std::vector<JobSpec> het_components;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, spec, step_name, het_components);
    }
};

// Sent once when the job is queued (layout empty), then again when it starts.
struct AllocationReply {
    static constexpr MessageType kType = MessageType::kAllocation;
    uint64_t job_id = 0;
    bool started = false;
    std::string reason;
    StepLayout layout;  // step 0 when started
    // A heterogeneous job's components as started, the leader first, for the command's
    // SLURM_*_HET_GROUP_<n> variables; empty otherwise.
    std::vector<JobRecord> het_components;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, started, reason, layout, het_components);
    }
};

// How a StepCreate refusal begins when the step fits the allocation but not what the job's
// running steps leave (kUnavailable, as Slurm's words): the client retries until they end.
inline constexpr char kStepCreationDisabled[] = "step creation temporarily disabled";

// One component's part of a step across a hetjob's components: its job and the step's shape
// there, each field as in StepCreateRequest (0: the component's own).
struct HetStepPart {
    uint64_t job_id = 0;
    uint32_t nodes = 0;
    uint32_t ntasks = 0;
    uint32_t ntasks_per_node = 0;
    uint32_t cpus_per_task = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, nodes, ntasks, ntasks_per_node, cpus_per_task);
    }
};

struct StepCreateRequest {
    static constexpr MessageType kType = MessageType::kStepCreate;
    uint64_t job_id = 0;
    std::string name;
    uint32_t nodes = 0;            // 0: all the job's nodes (or as the tasks need)
    uint32_t ntasks = 0;           // 0: one per node
    uint32_t ntasks_per_node = 0;  // 0: not given
    uint32_t cpus_per_task = 0;    // 0: the job's
    std::string nodelist;          // hostlist of the job's nodes to use; empty: the first ones
    std::string distribution;      // --distribution as given; empty: the job's
    bool overlap = false;          // --overlap: share CPUs other steps hold
    // srun --het-group=0,1 or srun A : B: one step over these components of the hetjob that
    // job_id leads, each laid out as a step of its own, ranks numbered across them in order.
    std::vector<HetStepPart> het_parts;
    // The step's own --gpus, --gpus-per-node (--gres=gpu:N), --gpus-per-task and --gpu-bind:
    // it gets that many of the job's GPUs that no other step holds. None asked: it shares all
    // of the job's GPUs, bound as the job asked.
    GpuOptions gpu;
    // Its own --gres besides GPUs, per node ("nvme:5"): that much of the job's that no other
    // step holds. Empty: it shares the job's.
    std::string gres;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, name, nodes, ntasks, ntasks_per_node, cpus_per_task, nodelist,
                         distribution, overlap, het_parts, gpu, gres);
    }
};

struct StepCreatedReply {
    static constexpr MessageType kType = MessageType::kStepCreated;
    StepLayout layout;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, layout);
    }
};

struct StepCompleteRequest {
    static constexpr MessageType kType = MessageType::kStepComplete;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;
    JobUsage usage;  // the step's cgroups' on every node, summed (max_rss_kib: the largest)

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, exit_code, exit_signal, usage);
    }
};

// The client that created an allocation ends it.
struct JobCompleteRequest {
    static constexpr MessageType kType = MessageType::kJobComplete;
    uint64_t job_id = 0;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, exit_code, exit_signal);
    }
};

struct AcctQueryRequest {
    static constexpr MessageType kType = MessageType::kAcctQuery;
    std::vector<uint64_t> job_ids;
    std::vector<std::string> users;
    std::vector<std::string> accounts;
    int64_t since = 0;  // jobs unfinished or ended at or after this (unix seconds); 0: any
    std::vector<JobState> states;
    int64_t until = 0;      // jobs submitted at or before this; 0: any
    bool attempts = false;  // also every earlier attempt of requeued jobs (sacct -D)
    // The controller's own full record (scontrol show job of an ended job) rather than the
    // accounting record (sacct).
    bool controller_record = false;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_ids, users, accounts, since, states, until, attempts,
                         controller_record);
    }
};

// cohort report (sreport): what was allocated in [start, end), per account and user.
struct UsageReportRequest {
    static constexpr MessageType kType = MessageType::kUsageReport;
    int64_t start = 0;  // unix seconds
    int64_t end = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, start, end);
    }
};

struct UsageTotalEntry {
    std::string account;
    std::string user;
    double cpu_seconds = 0;
    double gpu_seconds = 0;
    double billing_seconds = 0;
    int64_t jobs = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, account, user, cpu_seconds, gpu_seconds, billing_seconds, jobs);
    }
};

struct UsageTotalsReply {
    static constexpr MessageType kType = MessageType::kUsageTotals;
    int64_t start = 0;
    int64_t end = 0;           // the window's end as counted: no later than the reply's time
    int64_t cluster_cpus = 0;  // CPUs of the configured nodes now: the capacity reported
    int64_t cluster_gpus = 0;
    std::vector<UsageTotalEntry> totals;
    // Time nodes gave no service in the window: down or drained, and in maintenance.
    double down_cpu_seconds = 0;
    double down_gpu_seconds = 0;
    double planned_down_cpu_seconds = 0;
    double planned_down_gpu_seconds = 0;
    // Time eligible jobs waited to start: sreport's Planned, up to what each hour left idle,
    // and OverCommitted beyond it.
    double planned_cpu_seconds = 0;
    double planned_gpu_seconds = 0;
    double overcommitted_cpu_seconds = 0;
    double overcommitted_gpu_seconds = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, start, end, cluster_cpus, cluster_gpus, totals, down_cpu_seconds,
                         down_gpu_seconds, planned_down_cpu_seconds, planned_down_gpu_seconds,
                         planned_cpu_seconds, planned_gpu_seconds, overcommitted_cpu_seconds,
                         overcommitted_gpu_seconds);
    }
};

// Agent -> controller when it (re)connects. `running_jobs` lets a restarted controller
// keep running jobs running; `finished` carries batch results it has not yet acknowledged.
struct BatchDoneReport {
    static constexpr MessageType kType = MessageType::kBatchDone;
    uint64_t job_id = 0;
    std::string node;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;
    bool timed_out = false;
    std::string error;           // why the script could not start, if it could not
    uint32_t restart_count = 0;  // the attempt it reports on: a late report of an earlier
                                 // attempt must not end the job's next one
    JobUsage usage;              // of the job's processes on this node

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, node, exit_code, exit_signal, timed_out, error, restart_count,
                         usage);
    }
};

struct RegisterNodeRequest {
    static constexpr MessageType kType = MessageType::kRegisterNode;
    std::string name;
    std::string address;
    uint16_t port = 0;
    NodeResources resources;
    int64_t boot_time = 0;
    std::vector<uint64_t> running_jobs;
    std::vector<BatchDoneReport> finished;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, name, address, port, resources, boot_time, running_jobs, finished);
    }
};

struct RegisterNodeReply {
    static constexpr MessageType kType = MessageType::kRegisterReply;
    std::vector<uint64_t> acknowledged;  // finished reports the controller has stored
    std::vector<uint64_t> terminate;     // running jobs the controller no longer knows
    // How often to heartbeat: the controller spreads the cluster's heartbeats to a rate it
    // can afford (ClusterConfig::agent_heartbeat_interval_ms).
    int64_t heartbeat_interval_ms = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, acknowledged, terminate, heartbeat_interval_ms);
    }
};

struct HeartbeatMessage {
    static constexpr MessageType kType = MessageType::kHeartbeat;
    std::string node;
    std::vector<uint64_t> running_jobs;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, node, running_jobs);
    }
};

struct LaunchBatchRequest {
    static constexpr MessageType kType = MessageType::kLaunchBatch;
    JobRecord job;
    std::string cluster_name;
    std::string submit_dir;
    // A heterogeneous job's components, the leader (`job`) first, for the script's
    // SLURM_*_HET_GROUP_<n> variables; empty otherwise.
    std::vector<JobRecord> het_components;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job, cluster_name, submit_dir, het_components);
    }
};

struct TerminateJobRequest {
    static constexpr MessageType kType = MessageType::kTerminateJob;
    uint64_t job_id = 0;
    int32_t signal = 0;          // 0: SIGTERM, kill_wait, SIGKILL; else just this signal
    uint32_t restart_count = 0;  // the attempt to end; a later one here is left alone
    SignalTarget target = SignalTarget::kFull;  // for a signal: which processes

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, signal, restart_count, target);
    }
};

// Controller -> agent: when a running job's time limit now ends it (scontrol update job
// TimeLimit=), sent to its nodes at the change and again when their agents register.
struct JobEndTimeMessage {
    static constexpr MessageType kType = MessageType::kJobEndTime;
    uint64_t job_id = 0;
    uint32_t restart_count = 0;  // the attempt it is for
    int64_t end_time = -1;       // unix seconds; -1: no time limit

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, restart_count, end_time);
    }
};

// Agent -> controller: no process of the job is left on this node.
struct JobCleanedReport {
    static constexpr MessageType kType = MessageType::kJobCleaned;
    uint64_t job_id = 0;
    std::string node;
    uint32_t restart_count = 0;  // the attempt whose processes are gone
    JobUsage usage;              // of the job's processes on this node

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, node, restart_count, usage);
    }
};

struct JobTimedOutReport {
    static constexpr MessageType kType = MessageType::kJobTimedOut;
    uint64_t job_id = 0;
    std::string node;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, node);
    }
};

// Agent -> controller: this node failed a job (its prolog or epilog failed): drain it, and
// requeue the job's attempt where one is named (job_id 0: none).
struct NodeFaultReport {
    static constexpr MessageType kType = MessageType::kNodeFault;
    std::string node;
    std::string reason;
    uint64_t job_id = 0;
    uint32_t restart_count = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, node, reason, job_id, restart_count);
    }
};

// Client -> agent: start this node's share of a step's tasks.
// The launch travels down a tree of agents: the client sends it to node 0 with every other
// node in `forward_to`; each agent hands sub-lists to a few children, then calls the
// client back at client_host:client_port for its own part of the step.
struct LaunchStepRequest {
    static constexpr MessageType kType = MessageType::kLaunchStep;
    StepLayout layout;
    uint32_t node_index = 0;
    std::vector<uint32_t> forward_to;  // the nodes below this one in the launch tree
    std::string client_host;
    uint16_t client_port = 0;
    bool forwarded = false;  // from a parent agent: `user` is the client's identity
    Credential user;
    std::vector<std::string> argv;
    std::string cwd;
    std::vector<std::pair<std::string, std::string>> env;
    uint16_t master_port = 0;  // 0 on node 0: the agent picks a free one
    bool label = false;
    std::string mpi = "pmix";            // pmix, pmi1 or pmi2 (a step manager serves it), or none
    std::string pmix_transport = "tcp";  // how step managers reach each other: tcp or ucx
    std::string output;          // per-task file pattern for stdout; empty: stream to the client
    std::string error;           // the same for stderr; empty with `output` set: joins stdout
    bool stdin_to_rank0 = true;  // the client forwards its stdin to rank 0
    // srun --signal=SIG[@SECONDS]: the step's tasks get SIG that long before the job's end.
    std::string signal;
    // srun A : B over a hetjob's components: each node's command (per node of the layout);
    // empty: `argv` on every node.
    std::vector<std::vector<std::string>> node_argv;

    const std::vector<std::string>& argv_on(size_t node) const {
        return node < node_argv.size() ? node_argv[node] : argv;
    }

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, layout, node_index, forward_to, client_host, client_port, forwarded,
                         user.uid, user.gid, argv, cwd, env, master_port, label, mpi,
                         pmix_transport, output, error, stdin_to_rank0, signal, node_argv);
    }
};

struct StepLaunchedReply {
    static constexpr MessageType kType = MessageType::kStepLaunched;
    uint16_t master_port = 0;
    std::vector<uint32_t> ranks;
    std::string peer_address;  // where the step manager's peers reach it; empty without one

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, master_port, ranks, peer_address);
    }
};

struct TaskOutputMessage {
    static constexpr MessageType kType = MessageType::kTaskOutput;
    uint32_t rank = 0;
    uint8_t stream = 1;  // 1 stdout, 2 stderr
    std::string data;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, rank, stream, data);
    }
};

// Client -> rank 0's agent: the client's stdin, in order; `eof` closes the task's stdin.
struct TaskInputMessage {
    static constexpr MessageType kType = MessageType::kTaskInput;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    std::string data;
    bool eof = false;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, data, eof);
    }
};

struct TaskExitMessage {
    static constexpr MessageType kType = MessageType::kTaskExit;
    uint32_t rank = 0;
    int32_t exit_code = 0;
    int32_t exit_signal = 0;
    std::string error;  // set when the task could not be started

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, rank, exit_code, exit_signal, error);
    }
};

struct SignalStepRequest {
    static constexpr MessageType kType = MessageType::kSignalStep;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    int32_t signal = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, signal);
    }
};

struct StepDoneMessage {
    static constexpr MessageType kType = MessageType::kStepDone;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    JobUsage usage;  // of the step's cgroup on this node (max_rss_node: this node)

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, usage);
    }
};

struct PriorityQueryRequest {
    static constexpr MessageType kType = MessageType::kPriorityQuery;
    std::vector<uint64_t> job_ids;  // empty: every pending job

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_ids);
    }
};

// A pending job's priority and each factor in [0, 1] with the weight it is multiplied by.
struct JobPriority {
    uint64_t job_id = 0;
    std::string display_id;
    std::string user;
    std::string account;
    std::string partition;
    std::string qos;
    int64_t priority = 0;
    double age = 0, fairshare = 0, job_size = 0, partition_factor = 0, qos_factor = 0;
    int64_t weight_age = 0, weight_fairshare = 0, weight_job_size = 0, weight_partition = 0,
            weight_qos = 0;
    int32_t nice = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, display_id, user, account, partition, qos, priority, age,
                         fairshare, job_size, partition_factor, qos_factor, weight_age,
                         weight_fairshare, weight_job_size, weight_partition, weight_qos, nice);
    }
};

struct PriorityListReply {
    static constexpr MessageType kType = MessageType::kPriorityList;
    std::vector<JobPriority> jobs;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, jobs);
    }
};

// cohort share (sshare): the fair-share tree as the controller ranks by it now.
struct ShareQueryRequest {
    static constexpr MessageType kType = MessageType::kShareQuery;

    template <class A>
    void serialize(A& /*ar*/, unsigned) {}
};

// One association: an account's row (user "") or a user's under its account. Usage is
// decayed billing-seconds; the normalized values are fractions of the cluster's.
struct ShareEntry {
    std::string account;
    std::string user;
    int32_t depth = 0;  // the root account is 0
    int64_t raw_shares = 0;
    double norm_shares = 0;
    double raw_usage = 0;
    double norm_usage = 0;
    double effective_usage = 0;
    double fairshare = 0;  // users only

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, account, user, depth, raw_shares, norm_shares, raw_usage, norm_usage,
                         effective_usage, fairshare);
    }
};

// Depth first: each account, its users, then its sub-accounts.
struct ShareListReply {
    static constexpr MessageType kType = MessageType::kShareList;
    std::vector<ShareEntry> associations;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, associations);
    }
};

// Nodes are the record's list, or `node_count` nodes the controller picks when it is empty.
struct ReservationCreateRequest {
    static constexpr MessageType kType = MessageType::kReservationCreate;
    ReservationRecord reservation;
    uint32_t node_count = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, reservation, node_count);
    }
};

struct ReservationDeleteRequest {
    static constexpr MessageType kType = MessageType::kReservationDelete;
    std::string name;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, name);
    }
};

struct ReservationQueryRequest {
    static constexpr MessageType kType = MessageType::kReservationQuery;

    template <class A>
    void serialize(A&, unsigned) {}
};

struct ReservationListReply {
    static constexpr MessageType kType = MessageType::kReservationList;
    std::vector<ReservationRecord> reservations;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, reservations);
    }
};

const char* message_type_name(uint16_t type);
bool is_known_message_type(uint16_t type);

}  // namespace cohort::protocol
