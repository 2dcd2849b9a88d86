// A trace job as the simulators use it, after a compatibility mode's filter.
#pragma once

#include <cstdint>

namespace cohort::sim {

struct SimJob {
    int64_t id = 0;
    int64_t submit = 0;
    int64_t run = 0;  // actual run time, seconds
    int64_t procs = 0;
    int64_t estimate = 0;  // the time limit the scheduler plans with
    int64_t user = 0;      // SWF field 12
};

}  // namespace cohort::sim
