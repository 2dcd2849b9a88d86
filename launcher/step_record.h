// What a node keeps on disk about each step part it runs: the shepherd of each task (with
// the output pipe ends it holds), the step manager, the client to call back and the job's
// limits. With it a restarted agent adopts the tasks still running, reports the ones that
// ended while it was away, and goes on streaming their output to the client.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/status.h"

namespace cohort::agent {

struct StepTaskRecord {
    uint32_t rank = 0;
    pid_t shepherd = -1;  // also the task's process group
    uint64_t shepherd_start = 0;
    // The shepherd's own descriptors for the read ends of the task's stdout and stderr pipes
    // (reopened through /proc/PID/fd); -1: that stream goes to a file.
    int out_fd = -1;
    int err_fd = -1;
};

struct StepRecord {
    uint64_t job_id = 0;  // the step's name: its job (a hetjob's leader) and step id
    uint32_t step_id = 0;
    uint64_t local_job = 0;  // the job whose allocation this node is
    uint32_t attempt = 0;    // the job's restart count
    uint32_t node_index = 0;
    std::string client_host;  // where the step's client listens for its agents
    uint16_t client_port = 0;
    uint32_t owner_uid = 0;
    int64_t job_end_time = 0;  // 0: no limit
    std::string job_signal;    // the job's --signal
    std::string signal;        // the step's --signal
    bool warned = false;       // the step's --signal was sent
    pid_t step_manager = -1;   // cohort-stepd of an MPI step; -1: none
    uint64_t step_manager_start = 0;
    std::string shm_dir;  // made for the step here, removed at its end
    std::vector<StepTaskRecord> tasks;
};

std::string step_record_path(const std::string& spool_dir, uint64_t job_id, uint32_t step_id);
// Where the shepherd of `rank` writes how the task ended.
std::string step_task_status_path(const std::string& spool_dir,
                                  uint64_t job_id,
                                  uint32_t step_id,
                                  uint32_t rank);

// Written to a temporary file and renamed, so a reader never sees half a record.
Status write_step_record(const std::string& path, const StepRecord& record);
Result<StepRecord> read_step_record(const std::string& path);
// The step record files in `spool_dir`, in no particular order.
std::vector<std::string> step_record_paths(const std::string& spool_dir);

// Is `pid` still the process that started at `start_ticks` (not a reuse of its pid)?
bool same_process_running(pid_t pid, uint64_t start_ticks);

// Every recorded shepherd (batch and step) and step manager of `spool_dir` still running:
// what ends a node's jobs when its agent is gone for good (`cohort stop`, a test's lost node).
std::vector<pid_t> recorded_processes(const std::string& spool_dir);

}  // namespace cohort::agent
