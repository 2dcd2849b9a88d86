// The environment a batch script and each step task see (DESIGN.md "What a rank sees").
// Pure functions, so the variable table is unit-tested without starting anything.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/hostlist.h"
#include "common/network_config.h"
#include "common/protocol/job_types.h"

namespace cohort::agent {

using EnvMap = std::map<std::string, std::string>;

EnvMap env_from_pairs(const std::vector<std::pair<std::string, std::string>>& pairs);
std::vector<std::string> env_to_strings(const EnvMap& env);

struct BatchContext {
    std::string cluster_name;
    std::string node_name;
    int32_t node_cpus = 0;
    std::string submit_host;
    TopologyAddress topology;  // SLURM_TOPOLOGY_ADDR[_PATTERN]
    // Where the job's processes can rendezvous (torchrun, DeepSpeed, JAX): this node, the
    // job's first, and a free port on it. Given to the script unless its job brings its own.
    std::string master_address;
    uint16_t master_port = 0;
};

// The batch script's variables, over the job's exported environment. No SLURM_STEP_ID:
// Open MPI would take the script for a direct-launched rank.
EnvMap batch_environment(const protocol::JobRecord& job, const BatchContext& context);

// A heterogeneous job's script also sees, for each component n (`components`, in offset
// order), SLURM_JOB_ID_HET_GROUP_<n>, _JOB_NODELIST_, _NTASKS_, ... and Slurm's older
// _PACK_GROUP_<n> names, with SLURM_HET_SIZE; the unsuffixed variables are component 0's.
void add_het_environment(EnvMap& env, const std::vector<protocol::JobRecord>& components);

struct TaskContext {
    uint32_t node_index = 0;
    uint32_t local_rank = 0;
    uint32_t global_rank = 0;
    uint16_t master_port = 0;
    std::string node_name;
    bool torch_env = true;  // RANK, WORLD_SIZE, MASTER_ADDR, ... (off for tools that refuse them)
    TopologyAddress topology;  // SLURM_TOPOLOGY_ADDR[_PATTERN]
};

// One step task's variables, over the client's environment.
EnvMap task_environment(const protocol::StepLayout& layout,
                        const TaskContext& context,
                        const EnvMap& base);

// The CPU ids a step task is bound to (empty: not bound), from the step's GPU binding.
std::vector<int> task_cpus(const protocol::StepLayout& layout,
                           uint32_t node_index,
                           uint32_t local_rank);

// The CPU ids the batch script is bound to: the job's GPU-local CPUs on its first node.
std::vector<int> batch_cpus(const protocol::JobRecord& job);

// A NIC as UCX_NET_DEVICES names it: RDMA devices with their port ("mlx5_0:1"), netdevs as is.
std::string ucx_device(const std::string& nic);

}  // namespace cohort::agent
