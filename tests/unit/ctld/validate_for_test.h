// Submit validation as the controller runs it, on a config with no registered nodes.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "scheduler/ctld/submit_validation.h"

namespace cohort::ctld {

inline Result<ValidatedJob> validate(const protocol::JobSpec& spec,
                                     const ClusterConfig& config,
                                     const std::string& user = "alice",
                                     const Reservations& reservations = {}) {
    const std::vector<sched::NodeCapacity> nodes;
    const PartitionNodes partitions = index_partitions(config);
    return validate_submission(spec, {config, nodes, partitions, reservations, user});
}

}  // namespace cohort::ctld
