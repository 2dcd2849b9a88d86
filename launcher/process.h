// Starting one process the way a workload manager must: in its own process group, as the
// job's user, with its environment, directory and files, reporting exec failures precisely.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include "common/status.h"

namespace cohort::agent {

struct UserIdentity {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string name;
    std::vector<gid_t> groups;
};

// Looks up the name and supplementary groups of `uid` (for initgroups-like switching).
Result<UserIdentity> lookup_user(uid_t uid, gid_t gid);

struct SpawnSpec {
    std::vector<std::string> argv;  // argv[0] is searched in PATH from `env` when it has no '/'
    std::vector<std::string> env;   // "NAME=value"
    std::string cwd;
    UserIdentity user;
    bool switch_user = false;  // true when the agent is root and the job's user is not
    // Either a file to open (after switching user, so it is created as the user) or a fd.
    std::string stdout_path;
    std::string stderr_path;  // empty with stdout_path set: stderr joins stdout
    bool append = false;
    std::string output_banner;  // written to stdout_path once it is open (a requeued attempt)
    int stdout_fd = -1;
    int stderr_fd = -1;
    int stdin_fd = -1;  // -1: /dev/null
    // CPU ids to bind to (sched_setaffinity in the child); empty: inherit the agent's. Ids
    // this machine does not offer the agent are dropped; with none left the process runs
    // unbound and a warning is logged (a recorded topology may name more CPUs than exist).
    std::vector<int> cpus;
    // Descriptors the process keeps, under the same numbers (a shepherd's status file and
    // held pipe ends, a rank's PMI_FD). Every other descriptor of the agent's is closed in the
    // child.
    std::vector<int> inherit_fds;
    // cgroup.procs files of the job's cgroups, joined before exec (JobCgroups::procs_files),
    // so the process and all it starts stay countable and killable; empty: none.
    std::vector<std::string> cgroup_procs;
};

struct Spawned {
    pid_t pid = -1;  // also its process group id
};

// Closes each descriptor and empties the list.
void close_all(std::vector<int>& fds);

// In a child after fork: closes every descriptor from 3 up except `keep` (ascending, at
// most a few), and clears close-on-exec on those in `inherit`. Async-signal-safe.
void close_all_but(const int* keep, size_t keep_count, const int* inherit, size_t inherit_count);

// Forks and execs. Returns only after the exec succeeded or failed; on failure the error
// says which step failed (chdir, open of an output file, setuid, exec) and why.
Result<Spawned> spawn_process(const SpawnSpec& spec);

}  // namespace cohort::agent
