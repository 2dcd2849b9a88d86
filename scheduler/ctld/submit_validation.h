// Checks a submission against the configuration and the nodes before anything is queued.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/protocol/job_types.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

struct ValidatedJob {
    const PartitionConfig* partition = nullptr;
    int64_t time_limit_s = -1;
    sched::ResourceRequest request;
    std::string account;  // as given, or the user's default
    std::string qos;      // as given, or the cluster's default
    int64_t mem_mib = 0;  // per node: as given, or the partition's default per CPU
};

using Reservations = std::map<std::string, protocol::ReservationRecord>;

// Whether `user` (charged to `account`) may run in the reservation.
bool may_use_reservation(const protocol::ReservationRecord& reservation,
                         const std::string& user,
                         const std::string& account);

// The geometry the spec's GPU options imply (see gpu_shape), and the spec with it.
TaskGeometry effective_geometry(const protocol::JobSpec& spec);
protocol::JobSpec effective_spec(const protocol::JobSpec& spec);
int32_t gpus_per_node_of(const protocol::JobSpec& spec);

sched::ResourceRequest request_of(const protocol::JobSpec& spec);

// Indexes into the controller's node table of each partition's nodes.
using PartitionNodes = std::map<std::string, std::vector<int>>;
PartitionNodes index_partitions(const ClusterConfig& config);

// What a submission is checked against besides the spec.
struct SubmitContext {
    const ClusterConfig& config;
    const std::vector<sched::NodeCapacity>& nodes;  // config order; cpus 0: not registered
    const PartitionNodes& partition_nodes;
    const Reservations& reservations;
    const std::string& user;
};

// -p a,b: the partitions named, in order ("" gives none: the default partition).
std::vector<std::string> partition_list(const std::string& text);

// Every error names the field, the value and what is accepted. Feasibility on the nodes is
// judged once every node of the partition has registered.
Result<ValidatedJob> validate_submission(const protocol::JobSpec& spec,
                                         const SubmitContext& context);

}  // namespace cohort::ctld
