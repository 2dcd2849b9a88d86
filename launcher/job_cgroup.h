// Per-job cgroups on a node: every process of a job, including those that leave its process
// group (setsid, double fork, daemons), is counted, confined and killed through them.
//   v1 (one hierarchy per controller under the mount, the layout of this project's CI
//   machine): freezer to track and kill, memory for the job's memory, cpuset for its CPUs;
//   v2 (one unified hierarchy, most new clusters): cgroup.procs to track, cgroup.kill (or
//   cgroup.freeze) to kill, memory.max and cpuset.cpus where the parent enables them.
// They also count what the job used (CPU time, peak memory, out-of-memory kills).
// A job's cgroups sit under the agent's own (from /proc/self/cgroup), in <agent_dir>/
// job_<id>, so a containerised or delegated agent stays inside what it was given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/protocol/job_types.h"
#include "common/status.h"

namespace cohort::agent {

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

    // Creates the job's cgroups (idempotent) with its CPUs (empty: the agent's) and memory
    // in MiB (0: no limit).
    Status create(uint64_t job_id, const std::vector<int>& cpus, int64_t memory_mib) const;
    // The cgroup.procs files a new process of the job writes its pid to before exec.
    std::vector<std::string> procs_files(uint64_t job_id) const;
    // Every process in the job's cgroups.
    std::vector<pid_t> processes(uint64_t job_id) const;
    // SIGKILL to every process, none escaping by forking meanwhile: cgroup.kill where the
    // kernel has it, else frozen, killed, thawed. Returns how many were signalled.
    int kill_all(uint64_t job_id) const;
    // CPU time, peak memory and out-of-memory kills so far, of every process that was in the
    // job's cgroups (max_rss_node left empty). Zero where the controllers are absent.
    protocol::JobUsage usage(uint64_t job_id) const;
    // Removes the job's cgroups; they must be empty (the kernel refuses otherwise).
    void remove(uint64_t job_id) const;

private:
    std::string job_dir(const std::string& base, uint64_t job_id) const;
    std::vector<std::string> bases() const;  // the node's directory in each hierarchy used

    CgroupVersion version_ = CgroupVersion::kNone;
    std::string why_disabled_;
    // v1: the node's directory in the freezer, memory, cpuset, cpuacct and pids hierarchies
    // (all but freezer empty where not mounted or not needed); v2: `unified_` alone.
    std::string freezer_, memory_, cpuset_, cpuacct_, pids_;
    int64_t pids_max_ = 0;
    std::string unified_;
};

}  // namespace cohort::agent
