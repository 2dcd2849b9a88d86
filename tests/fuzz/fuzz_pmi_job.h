// The step both PMI fuzz targets serve: 4 ranks on 2 nodes, ranks 0 and 1 local.
#pragma once

#include "pmix/pmi_core.h"

namespace cohort::pmix {

inline PmiJob fuzzed_step() {
    PmiJob job;
    job.kvsname = "kvs_1_0";
    job.size = 4;
    job.process_mapping = pmi_process_mapping({0, 0, 1, 1});
    job.local_ranks = {0, 1};
    return job;
}

}  // namespace cohort::pmix
