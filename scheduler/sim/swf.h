// Standard Workload Format traces (Parallel Workloads Archive): the 18 fields of each job
// line and the header values the simulator needs. Plain or gzip-compressed files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace cohort::sim {

struct SwfJob {
    int64_t id = 0;               // field 1
    int64_t submit = 0;           // field 2, seconds
    int64_t wait = 0;             // field 3
    int64_t run = 0;              // field 4
    int64_t allocated_procs = 0;  // field 5
    int64_t requested_procs = 0;  // field 8
    int64_t requested_time = 0;   // field 9
    int64_t user = 0;             // field 12
};

struct SwfTrace {
    std::string path;
    int64_t max_procs = 0;  // header "; MaxProcs:", 0 when absent
    int64_t max_nodes = 0;  // header "; MaxNodes:"
    std::vector<SwfJob> jobs;
};

// Reads the whole trace; a line that is not 18 numbers is an error naming the line.
Result<SwfTrace> read_swf(const std::string& path);

}  // namespace cohort::sim
