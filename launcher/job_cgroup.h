// Per-job cgroups on a node: every process of a job, including those that leave its process
// group (setsid, double fork, daemons), is counted, confined and killed through them.
//   v1 (one hierarchy per controller under the mount, the layout of this project's CI
//   machine): freezer to track and kill, memory for the job's memory, cpuset for its CPUs,
//   devices for the GPUs it was not given;
//   v2 (one unified hierarchy, most new clusters): cgroup.procs to track, cgroup.kill (or
//   cgroup.freeze) to kill, memory.max and cpuset.cpus where the parent enables them, and a
//   BPF device program for the GPUs it was not given (device_filter.h).
// They also count what the job used (CPU time, peak memory, out-of-memory kills).
// A job's cgroups sit under the agent's own (from /proc/self/cgroup), in <agent_dir>/
// job_<id>, so a containerised or delegated agent stays inside what it was given. Its
// processes live in one cgroup per step below that, job_<id>/step_<id> (step_batch for the
// batch script), as in Slurm: each step's usage is its own, and an out-of-memory kill in a
// step is counted in the step's cgroup.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/protocol/job_types.h"
#include "common/status.h"

namespace cohort::agent {

// In an agent's spool directory: its directory in each cgroup hierarchy, one per line.
inline constexpr const char* kCgroupDirsFile = "cgroup_dirs";

enum class CgroupVersion {
    kNone,
    kV1,
    kV2
};

class JobCgroups {
public:
    // `mode` is the config's `cgroup`: "auto" (v1 where a v1 freezer hierarchy is mounted,
    // else v2), "v1", "v2" or "none". `mount` is where cgroups are mounted (/sys/fs/cgroup;
    // for v2 also its "unified" subdirectory on hybrid hosts). `agent_dir` names this
    // agent's directory, unique among the agents of the host. `pids_max` caps the
    // processes and threads of each job (0: no cap) where the pids controller is there.
    // Disabled, with the reason in why_disabled(), where the chosen layout is absent or
    // cannot be written (not root).
    JobCgroups(const std::string& mode,
               const std::string& mount,
               const std::string& agent_dir,
               int64_t pids_max = 0);
    // Removes the agent's directories where no job's remain (batch jobs outlive a restart).
    ~JobCgroups();
    JobCgroups(const JobCgroups&) = delete;
    JobCgroups& operator=(const JobCgroups&) = delete;

    CgroupVersion version() const { return version_; }

    bool enabled() const { return version_ != CgroupVersion::kNone; }

    const std::string& why_disabled() const { return why_disabled_; }

    // The node's directory in each hierarchy used (none when disabled).
    std::vector<std::string> bases() const;

    // Creates the job's cgroups (idempotent) with its CPUs (empty: the agent's), memory in
    // MiB (0: no limit) and the devices it may not open ("c MAJOR:MINOR rwm" rules: the v1
    // devices controller's, and a BPF program's under v2).
    Status create(uint64_t job_id,
                  const std::vector<int>& cpus,
                  int64_t memory_mib,
                  const std::vector<std::string>& denied_devices = {}) const;
    // The step's cgroups inside the job's (idempotent; `step` is "batch" or the step id),
    // with the job's memory limit, so that a step that alone goes past it is the one the
    // kernel's out-of-memory kill is counted in.
    Status create_step(uint64_t job_id, const std::string& step) const;
    // The cgroup.procs files a new process of the step writes its pid to before exec.
    std::vector<std::string> procs_files(uint64_t job_id, const std::string& step) const;
    // What the step's processes used, as usage() for the job.
    protocol::JobUsage step_usage(uint64_t job_id, const std::string& step) const;
    // Removes the step's cgroups if empty (one try: remove() sweeps what remains); the job's
    // usage() still counts its out-of-memory kills.
    void remove_step(uint64_t job_id, const std::string& step) const;
    // Every process in the job's cgroups, its steps' included.
    std::vector<pid_t> processes(uint64_t job_id) const;
    // SIGKILL to every process, none escaping by forking meanwhile: cgroup.kill where the
    // kernel has it, else frozen, killed, thawed. Returns how many were signalled.
    int kill_all(uint64_t job_id) const;
    // CPU time, peak memory and out-of-memory kills so far, of every process that was in the
    // job's cgroups (max_rss_node left empty). Zero where the controllers are absent.
    protocol::JobUsage usage(uint64_t job_id) const;
    // Removes the job's cgroups and its steps'; they must be empty (the kernel refuses
    // otherwise).
    void remove(uint64_t job_id) const;

private:
    std::string job_dir(const std::string& base, uint64_t job_id) const;
    std::string step_dir(const std::string& base, uint64_t job_id, const std::string& step) const;
    // The job's directory and its steps' in the hierarchy that tracks processes.
    std::vector<std::string> tracking_dirs(uint64_t job_id) const;
    protocol::JobUsage usage_in(const std::string& cpu_dir, const std::string& memory_dir) const;

    CgroupVersion version_ = CgroupVersion::kNone;
    std::string why_disabled_;
    // v1: the node's directory in the freezer, memory, cpuset, cpuacct, pids and devices
    // hierarchies (all but freezer empty where not mounted or not needed); v2: `unified_`.
    std::string freezer_, memory_, cpuset_, cpuacct_, pids_, devices_;
    int64_t pids_max_ = 0;
    std::string unified_;
    // v1 counts an out-of-memory kill only in the cgroup that hit its limit: those of the
    // steps whose cgroups are gone, per job.
    mutable std::map<uint64_t, uint32_t> removed_steps_oom_kills_;
};

}  // namespace cohort::agent
