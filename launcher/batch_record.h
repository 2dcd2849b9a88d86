// What a node keeps on disk about each batch script it runs: the script, the status its
// shepherd writes when the script ends, and a record naming the shepherd. With them a
// restarted agent adopts the jobs still running and reports the ones that ended while it
// was away, and a stopping local instance ends the jobs it leaves behind.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/status.h"

namespace cohort::agent {

struct BatchRecord {
    uint64_t job_id = 0;
    uint32_t attempt = 0;  // the job's restart count
    pid_t shepherd = -1;   // also the job's process group
    // The shepherd's start time (clock ticks since boot), so a reused pid is not taken for it.
    uint64_t shepherd_start = 0;
    int64_t end_time = -1;  // when the time limit ends the job; -1: no limit
    std::string signal;     // the job's --signal
    bool warned = false;    // its --signal was sent
};

struct BatchFiles {
    std::string script;
    std::string status;
    std::string record;
};

BatchFiles batch_files(const std::string& spool_dir, uint64_t job_id);

// Written to a temporary file and renamed, so a reader never sees half a record.
Status write_batch_record(const std::string& path, const BatchRecord& record);
Result<BatchRecord> read_batch_record(const std::string& path);
// The record files in `spool_dir`, in no particular order.
std::vector<std::string> batch_record_paths(const std::string& spool_dir);

// How the script ended, as its shepherd wrote it; nullopt while it runs (or when the
// shepherd was killed before it could write).
struct BatchExit {
    int exit_code = 0;
    int signal = 0;
    std::string error;  // why the script could not start, if so
};

std::optional<BatchExit> read_batch_exit(const std::string& status_path);

// The start time of `pid` in clock ticks since boot (/proc/PID/stat); 0 when it is gone.
uint64_t process_start_ticks(pid_t pid);

// Is the record's shepherd still running (the same process, not a reuse of its pid)?
bool shepherd_running(const BatchRecord& record);

}  // namespace cohort::agent
