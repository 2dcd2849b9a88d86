// Cluster configuration: one JSON file shared by the controller, the node agents and the CLI.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/backfill_policy.h"
#include "common/billing_weights.h"
#include "common/generic_gres.h"
#include "common/network_config.h"
#include "common/policy_config.h"
#include "common/status.h"

namespace cohort {

struct PartitionConfig {
    std::string name;
    std::vector<std::string> nodes;
    bool is_default = false;
    int64_t max_time_s = -1;                    // -1: unlimited
    int64_t default_time_s = -1;                // -1: the partition's max_time_s
    int64_t max_nodes = -1;                     // nodes one job may take; -1: unlimited
    std::vector<std::string> allowed_accounts;  // empty: all
    int64_t priority_tier = 0;                  // the partition factor of multifactor priority
    int64_t def_mem_per_cpu_mib = 0;            // memory of a job that asks none; 0: not tracked
    int64_t max_mem_per_cpu_mib = 0;            // 0: unlimited
};

struct ControllerAddress {
    std::string host;
    uint16_t port = 0;
};

struct ClusterConfig;
// The primary controller, then each backup.
std::vector<ControllerAddress> controller_addresses(const ClusterConfig& config);

struct ClusterConfig {
    std::string path;  // where it was read from
    std::string cluster_name = "cohort";
    std::string controller_host = "127.0.0.1";
    uint16_t controller_port = 6817;
    // Standby controllers (controller.backups), tried in order after the primary by clients
    // and agents; they share the primary's state in PostgreSQL (`state`).
    std::vector<ControllerAddress> controller_backups;
    std::string key_file;  // the cluster key: daemons, and users' commands when auth is cluster_key
    // How users' commands prove who they are: "cluster_key" (they must read key_file: one
    // user's instance) or "munge" (a MUNGE credential from the munged on munge_socket; the
    // key stays root's). Replies to MUNGE clients come from daemon_user (or root).
    std::string auth = "cluster_key";
    std::string munge_socket = "/run/munge/munge.socket.2";
    std::string daemon_user = "root";
    // Users who may act on every job (operators) and also on nodes and reservations
    // (admins), besides root and the controller's own user; as Slurm's AdminLevel.
    std::vector<std::string> operators;
    std::vector<std::string> admins;
    // What users see of others': "jobs" hides other users' jobs from queue, show and acct
    // (operators see all), as Slurm's PrivateData=jobs.
    std::vector<std::string> private_data;
    // Per-job cgroups on each node (launcher/job_cgroup.h): "auto" (v1 where mounted, else
    // v2; off where the agent cannot write them, e.g. not root), "v1", "v2" or "none".
    std::string cgroup = "auto";
    // The most processes and threads one job may have on a node (the pids cgroup; a fork
    // bomb stops there). 0: no cap.
    int64_t job_pids_max = 0;
    // Each node's GPU device files by GPU index, as Slurm's gres.conf File= ("/dev/nvidia[0-7]"
    // expands); a job's devices cgroup denies it the GPUs it was not given. Empty: the NVIDIA
    // driver's (/dev/nvidiaN for each GPU's minor number), where it is loaded.
    std::string gpu_device_files;
    // Programs each agent runs as root, with a clean environment, before a job's first process
    // on the node (prolog) and after its last (epilog), as Slurm's Prolog and Epilog. A
    // failure (non-zero exit, or running past prolog_epilog_timeout_s) drains the node; a
    // failed prolog also requeues the job. Empty: none.
    std::string prolog;
    std::string epilog;
    int64_t prolog_epilog_timeout_s = 300;
    std::string state_dir;
    std::vector<std::string> nodes;
    std::vector<PartitionConfig> partitions;
    // Each node's features, as Slurm's Features=, for -C/--constraint and --prefer; a node's
    // GPU type (e.g. "h100") is a feature too, without being listed.
    std::map<std::string, std::vector<std::string>> node_features;
    // Countable resources of each node besides its GPUs ("node_gres"), sorted by name.
    std::map<std::string, std::vector<GresCount>> node_gres;
    // Cluster-wide licenses and how many of each exist, as Slurm's Licenses=, for -L.
    std::map<std::string, int64_t> licenses;
    int64_t heartbeat_interval_ms = 1000;
    int64_t node_timeout_ms = 10000;  // missed heartbeats for this long mark a node DOWN
    // The most heartbeats per second the controller asks of all its nodes together (as
    // Nomad's max_heartbeats_per_second): each one costs it a thread wake-up, so it is the
    // rate it can afford, not the node count. See agent_heartbeat_interval_ms().
    int64_t max_heartbeats_per_s = 2000;
    // Whether a DOWN node serves again once its agent registers, as Slurm's ReturnToService:
    // 0 never (an operator resumes it), 1 when it was DOWN only for not responding, 2 always.
    int64_t return_to_service = 0;
    int64_t kill_wait_s = 30;        // SIGTERM to SIGKILL grace, as Slurm's KillWait
    int64_t launch_fanout = 8;       // children per agent when a step launch fans out
    int64_t collective_fanout = 32;  // children per step manager in fence/barrier trees
    // Array indexes stay below this, as Slurm's MaxArraySize. Slurm's default is 1001 as each
    // task costs a record; here pending tasks share one, so the default is 100 times larger.
    int64_t max_array_size = 100001;
    // Finished jobs (with their steps and payload) are purged this long after they end, as
    // slurmdbd's PurgeJobAfter; 0 keeps them forever.
    int64_t purge_jobs_after_days = 0;
    std::string sqlite_synchronous = "full";
    // Where the controller's state lives: empty for STATE_DIR/cohort.db (SQLite), or a
    // PostgreSQL URI, which two controllers may share (one active, one standby).
    std::string state;
    // Where accounting records go: a PostgreSQL URI (postgresql://...), or an SQLite file;
    // empty: STATE_DIR/accounting.db. See docs/dev/accounting.md.
    std::string accounting;
    // Slurm's TRESBillingWeights, e.g. "CPU=1.0,Mem=0.25G,GRES/gpu=2.0"; empty: billing is
    // the CPU count. Parsed into billing_weights.
    std::string tres_billing_weights;
    BillingWeights billing_weights;
    // Requeue (as Slurm's JobRequeue, on by default): batch jobs that lose a node run again
    // with the same id, unless submitted with --no-requeue; after max_batch_requeue automatic
    // requeues a job ends instead. Later attempts avoid the nodes that failed the job.
    bool job_requeue = true;
    int64_t max_batch_requeue = 5;
    bool requeue_avoid_failed_nodes = true;
    // A batch script that exits with one of these codes is requeued (and held), as Slurm's
    // RequeueExit and RequeueExitHold.
    std::vector<int32_t> requeue_exit;
    std::vector<int32_t> requeue_exit_hold;
    // Run as `mail_program -s SUBJECT USER` at the events a job's --mail-type names, as
    // Slurm's MailProg.
    std::string mail_program = "/usr/bin/mail";
    BackfillPolicy backfill = BackfillPolicy::kEasy;
    int64_t backfill_reservations = -1;  // conservative: waiting jobs planned; -1: all
    PolicyConfig policy;                 // QoS, accounts, priority weights, pass budget
    NetworkConfig network;               // switch tree and blocks; empty: a flat network

    const PartitionConfig* default_partition() const;
    const PartitionConfig* find_partition(const std::string& name) const;
    // Every resource name node_gres declares, sorted: the generic resources' indexes.
    std::vector<std::string> gres_names() const;
    // The interval agents heartbeat at: heartbeat_interval_ms, lengthened where the nodes
    // would together send more than max_heartbeats_per_s (10,000 nodes: 5 s).
    int64_t agent_heartbeat_interval_ms() const;
    // node_timeout_ms, raised to three agent heartbeat intervals where those were lengthened,
    // so that one late heartbeat does not take a node DOWN.
    int64_t effective_node_timeout_ms() const;
    // The node's features as listed, then its GPU type (empty when it has no GPUs).
    std::vector<std::string> features_of(const std::string& node,
                                         const std::string& gpu_type) const;
};

// Reads and validates the file; errors name the file, the key and the value.
Result<ClusterConfig> load_config(const std::string& path);
// The config in `text`, as load_config reads it from `path` (named in messages).
Result<ClusterConfig> parse_config_text(std::string_view text, const std::string& path);

// The file `cohort start` writes; load_config(path) of it gives back `config`.
Status save_config(const ClusterConfig& config, const std::string& path);

// Where clients and daemons look: $COHORT_CONF, else the default local instance's file if
// it exists, else the installed cluster's /etc/cohort/cohort.json if that exists.
std::string default_config_path();
std::string default_state_dir();

// The cluster key that vouches for every frame; refuses a missing or empty file.
Result<std::string> load_key(const std::string& path);

}  // namespace cohort
