// Building the batch and task environments.
#include "launcher/task_env.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/hostlist.h"
#include "launcher/het_environment.h"

namespace cohort::agent {
namespace {

void set_both(EnvMap& env, const std::string& suffix, const std::string& value) {
    env["SLURM_" + suffix] = value;
    env["COHORT_" + suffix] = value;
}

std::string joined(const std::vector<int32_t>& ids) {
    std::string out;
    for (int32_t id : ids) {
        out += (out.empty() ? "" : ",") + std::to_string(id);
    }
    return out;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) {
        out += (out.empty() ? "" : ",") + name;
    }
    return out;
}

// The device variables the GPU's runtime reads. Ids are the node's PCI-bus-order indexes:
// no device cgroup renumbers them, and CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA count the
// same way, so "2,3" are exactly the third and fourth GPUs by bus id.
void set_visible_gpus(EnvMap& env,
                      const protocol::NodeGpuAlloc& alloc,
                      const std::vector<int32_t>& visible) {
    const std::string ids = joined(visible);
    if (alloc.vendor == "amd") {
        env["ROCR_VISIBLE_DEVICES"] = ids;
        env["GPU_DEVICE_ORDINAL"] = ids;
        env.erase("CUDA_VISIBLE_DEVICES");
    } else {
        env["CUDA_VISIBLE_DEVICES"] = ids;
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    }
    std::vector<std::string> bus_ids;
    for (int32_t g : visible) {
        auto at = std::find(alloc.gpus.begin(), alloc.gpus.end(), g);
        if (at != alloc.gpus.end()
            && static_cast<size_t>(at - alloc.gpus.begin()) < alloc.pci_bus_ids.size()) {
            bus_ids.push_back(alloc.pci_bus_ids[static_cast<size_t>(at - alloc.gpus.begin())]);
        }
    }
    set_both(env, "GPU_PCI_BUS_IDS", joined(bus_ids));
    set_both(env, "GPUS_ON_NODE", std::to_string(alloc.gpus.size()));
}

// What the user asked for, as Slurm exports it to the batch script.
void set_gpu_request(EnvMap& env, const GpuOptions& gpu) {
    const std::string type = gpu.type.empty() ? "" : gpu.type + ":";
    const std::pair<int64_t, const char*> counts[] = {
            {gpu.gpus, "GPUS"}, {gpu.per_node, "GPUS_PER_NODE"}, {gpu.per_task, "GPUS_PER_TASK"}};
    for (const auto& [count, name] : counts) {
        if (count > 0) {
            set_both(env, name, type + std::to_string(count));
        }
    }
    if (gpu.cpus_per_gpu > 0) {
        set_both(env, "CPUS_PER_GPU", std::to_string(gpu.cpus_per_gpu));
    }
    if (gpu.mem_per_gpu_mib > 0) {
        set_both(env, "MEM_PER_GPU", std::to_string(gpu.mem_per_gpu_mib));
    }
    if (gpu.ntasks_per_gpu > 0) {
        set_both(env, "NTASKS_PER_GPU", std::to_string(gpu.ntasks_per_gpu));
    }
    if (!gpu.bind.empty()) {
        set_both(env, "GPU_BIND", gpu.bind);
    }
}

// SLURM_DISTRIBUTION (and SLURM_DIST_PLANESIZE for planes), as srun sets them and reads
// them back as its default inside a job.
void set_distribution(EnvMap& env, const TaskDistribution& distribution) {
    set_both(env, "DISTRIBUTION", distribution.slurm_name());
    if (distribution.kind == TaskDistribution::Kind::kPlane) {
        set_both(env, "DIST_PLANESIZE", std::to_string(distribution.plane_size));
    }
}

}  // namespace

std::string ucx_device(const std::string& nic) {
    for (const char* rdma : {"mlx", "irdma", "bnxt_re", "efa_", "hfi1_", "qedr", "rxe"}) {
        if (nic.rfind(rdma, 0) == 0) {
            return nic + ":1";
        }
    }
    return nic;
}

std::vector<int> task_cpus(const protocol::StepLayout& layout,
                           uint32_t node_index,
                           uint32_t local_rank) {
    if (node_index >= layout.gpu_nodes.size()) {
        return {};
    }
    const auto& tasks = layout.gpu_nodes[node_index].tasks;
    if (local_rank >= tasks.size()) {
        return {};
    }
    return {tasks[local_rank].cpus.begin(), tasks[local_rank].cpus.end()};
}

std::vector<int> batch_cpus(const protocol::JobRecord& job) {
    if (job.gpu_alloc.empty()) {
        return {};
    }
    return {job.gpu_alloc.front().cpus.begin(), job.gpu_alloc.front().cpus.end()};
}

EnvMap env_from_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
    return EnvMap(pairs.begin(), pairs.end());
}

std::vector<std::string> env_to_strings(const EnvMap& env) {
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [name, value] : env) {
        out.push_back(name + "=" + value);
    }
    return out;
}

EnvMap batch_environment(const protocol::JobRecord& job, const BatchContext& context) {
    EnvMap env = env_from_pairs(job.spec.env);
    const std::string id = std::to_string(job.job_id);
    const std::string nodelist = compress_hostlist(job.nodes);
    set_both(env, "JOB_ID", id);
    env["SLURM_JOBID"] = id;
    set_both(env, "JOB_NAME", job.spec.name);
    set_both(env, "JOB_NODELIST", nodelist);
    env["SLURM_NODELIST"] = nodelist;
    set_both(env, "JOB_NUM_NODES", std::to_string(job.nodes.size()));
    env["SLURM_NNODES"] = std::to_string(job.nodes.size());
    set_both(env, "JOB_CPUS_PER_NODE", compact_counts(job.cpus_per_node));
    set_both(env, "TASKS_PER_NODE", compact_counts(job.tasks_per_node));
    set_both(env, "JOB_PARTITION", job.partition);
    set_both(env, "CLUSTER_NAME", context.cluster_name);
    set_both(env, "SUBMIT_DIR", job.spec.cwd);
    set_both(env, "SUBMIT_HOST", job.spec.submit_host);
    set_both(env, "CPUS_ON_NODE",
             std::to_string(job.cpus_per_node.empty() ? 0 : job.cpus_per_node.front()));
    set_both(env, "NODEID", "0");
    set_both(env, "PROCID", "0");
    set_both(env, "LOCALID", "0");
    env["SLURMD_NODENAME"] = context.node_name;
    env["COHORTD_NODENAME"] = context.node_name;
    set_both(env, "TOPOLOGY_ADDR", context.topology.address);
    set_both(env, "TOPOLOGY_ADDR_PATTERN", context.topology.pattern);
    set_both(env, "JOB_START_TIME", std::to_string(job.start_time));
    if (job.time_limit_s >= 0) {
        set_both(env, "JOB_END_TIME", std::to_string(job.start_time + job.time_limit_s));
    }
    set_both(env, "JOB_UID", std::to_string(job.uid));
    set_both(env, "JOB_GID", std::to_string(job.gid));
    set_both(env, "JOB_USER", job.user_name);
    set_both(env, "RESTART_COUNT", std::to_string(job.restart_count));
    env["ENVIRONMENT"] = "BATCH";
    if (const uint32_t ntasks = given_ntasks(job); ntasks != 0) {
        set_both(env, "NTASKS", std::to_string(ntasks));
        env["SLURM_NPROCS"] = std::to_string(ntasks);
    }
    if (job.spec.ntasks_per_node != 0) {
        set_both(env, "NTASKS_PER_NODE", std::to_string(job.spec.ntasks_per_node));
    }
    if (job.spec.cpus_per_task_set) {
        set_both(env, "CPUS_PER_TASK", std::to_string(job.spec.cpus_per_task));
    }
    if (job.spec.mem_mib != 0) {
        set_both(env, "MEM_PER_NODE", std::to_string(job.spec.mem_mib));
    } else if (job.spec.mem_whole_node) {
        set_both(env, "MEM_PER_NODE", std::to_string(job.mem_per_node_mib));
    }
    if (job.spec.mem_per_cpu_mib != 0) {
        set_both(env, "MEM_PER_CPU", std::to_string(job.spec.mem_per_cpu_mib));
    }
    if (!job.spec.constraint.empty()) {
        set_both(env, "JOB_CONSTRAINTS", job.spec.constraint);
    }
    if (job.spec.overcommit) {
        set_both(env, "OVERCOMMIT", "1");
    }
    if (!job.spec.hint.empty()) {
        set_both(env, "HINT", job.spec.hint);
    }
    if (protocol::one_thread_per_core(job.spec.hint)) {
        set_both(env, "THREADS_PER_CORE", "1");
    }
    if (job.is_array_task()) {
        set_both(env, "ARRAY_JOB_ID", std::to_string(job.array_job_id));
        set_both(env, "ARRAY_TASK_ID", std::to_string(job.array_task_id));
        set_both(env, "ARRAY_TASK_COUNT", std::to_string(job.array_count));
        set_both(env, "ARRAY_TASK_MIN", std::to_string(job.array_min));
        set_both(env, "ARRAY_TASK_MAX", std::to_string(job.array_max));
        set_both(env, "ARRAY_TASK_STEP", std::to_string(job.array_step));
    }
    set_gpu_request(env, job.spec.gpu);
    if (!job.gpu_alloc.empty()) {
        const protocol::NodeGpuAlloc& alloc = job.gpu_alloc.front();
        set_visible_gpus(env, alloc, alloc.gpus);
        set_both(env, "JOB_GPUS", joined(alloc.gpus));
    }
    if (!job.spec.distribution.empty()) {
        if (auto distribution = parse_distribution("--distribution", job.spec.distribution)) {
            set_distribution(env, *distribution);
        }
    }
    // Beyond Slurm: no hostlist to expand and no first host to find in the script.
    env["COHORT_JOB_HOSTS"] = fmt::format("{}", fmt::join(job.nodes, " "));
    if (!context.master_address.empty()) {
        env.emplace("MASTER_ADDR", context.master_address);
    }
    if (context.master_port != 0) {
        env.emplace("MASTER_PORT", std::to_string(context.master_port));
    }
    env.erase("SLURM_STEP_ID");
    env.erase("SLURM_STEPID");
    return env;
}

void add_het_environment(EnvMap& env, const std::vector<protocol::JobRecord>& components) {
    for (auto& [name, value] : het_job_environment(components)) {
        env[name] = std::move(value);
    }
}

EnvMap task_environment(const protocol::StepLayout& layout,
                        const TaskContext& context,
                        const EnvMap& base) {
    EnvMap env = base;
    const std::string nodelist = compress_hostlist(layout.nodes);
    const uint32_t ntasks = layout.ntasks();
    const uint32_t local_size = layout.tasks_per_node.at(context.node_index);
    // In a hetjob's component, as in Slurm, the leader's id: one job to the ranks.
    const std::string job_id =
            std::to_string(layout.het_job_id != 0 ? layout.het_job_id : layout.job_id);

    set_both(env, "JOB_ID", job_id);
    env["SLURM_JOBID"] = job_id;
    set_both(env, "JOB_NAME", layout.job_name);
    set_both(env, "JOB_NODELIST", compress_hostlist(layout.job_nodes));
    set_both(env, "JOB_NUM_NODES", std::to_string(layout.job_nodes.size()));
    set_both(env, "JOB_CPUS_PER_NODE", compact_counts(layout.job_cpus_per_node));
    set_both(env, "JOB_PARTITION", layout.partition);
    set_both(env, "CLUSTER_NAME", layout.cluster_name);
    set_both(env, "STEP_ID", std::to_string(layout.step_id));
    env["SLURM_STEPID"] = std::to_string(layout.step_id);
    set_both(env, "STEP_NODELIST", nodelist);
    env["COHORT_JOB_HOSTS"] = fmt::format("{}", fmt::join(layout.job_nodes, " "));
    env["COHORT_STEP_HOSTS"] = fmt::format("{}", fmt::join(layout.nodes, " "));
    set_both(env, "STEP_NUM_NODES", std::to_string(layout.nodes.size()));
    set_both(env, "STEP_NUM_TASKS", std::to_string(ntasks));
    set_both(env, "STEP_TASKS_PER_NODE", compact_counts(layout.tasks_per_node));
    // Inside a step these carry the step's values, as Slurm's srun does.
    set_both(env, "NODELIST", nodelist);
    set_both(env, "NNODES", std::to_string(layout.nodes.size()));
    set_both(env, "NTASKS", std::to_string(ntasks));
    env["SLURM_NPROCS"] = std::to_string(ntasks);
    set_both(env, "TASKS_PER_NODE", compact_counts(layout.tasks_per_node));
    set_both(env, "NTASKS_PER_NODE", std::to_string(local_size));
    set_both(env, "PROCID", std::to_string(context.global_rank));
    set_both(env, "LOCALID", std::to_string(context.local_rank));
    set_both(env, "NODEID", std::to_string(context.node_index));
    set_both(env, "RESTART_COUNT", std::to_string(layout.restart_count));
    set_distribution(env, layout.distribution);
    const uint32_t cpus_per_task = layout.cpus_per_task_on(context.node_index);
    set_both(env, "CPUS_ON_NODE", std::to_string(local_size * cpus_per_task));
    if (layout.cpus_per_task_set) {
        set_both(env, "CPUS_PER_TASK", std::to_string(cpus_per_task));
    }
    env["SLURMD_NODENAME"] = context.node_name;
    env["COHORTD_NODENAME"] = context.node_name;
    set_both(env, "TOPOLOGY_ADDR", context.topology.address);
    set_both(env, "TOPOLOGY_ADDR_PATTERN", context.topology.pattern);
    if (layout.job_end_time != 0) {
        set_both(env, "JOB_END_TIME", std::to_string(layout.job_end_time));
    }
    if (context.torch_env) {
        env["RANK"] = std::to_string(context.global_rank);
        env["WORLD_SIZE"] = std::to_string(ntasks);
        env["LOCAL_RANK"] = std::to_string(context.local_rank);
        env["LOCAL_WORLD_SIZE"] = std::to_string(local_size);
        env["GROUP_RANK"] = std::to_string(context.node_index);
        env["NODE_RANK"] = std::to_string(context.node_index);
        env["MASTER_ADDR"] = layout.addresses.empty() ? "127.0.0.1" : layout.addresses.front();
        env["MASTER_PORT"] = std::to_string(context.master_port);
    }
    if (context.node_index < layout.gpu_nodes.size()) {
        const protocol::NodeGpuBinding& gpus = layout.gpu_nodes[context.node_index];
        set_both(env, "JOB_GPUS", joined(gpus.alloc.gpus));
        set_both(env, "STEP_GPUS", joined(gpus.alloc.gpus));
        if (context.local_rank < gpus.tasks.size()) {
            const protocol::TaskGpuBinding& task = gpus.tasks[context.local_rank];
            set_visible_gpus(env, gpus.alloc, task.gpus);
            if (!task.nic.empty()) {
                env["UCX_NET_DEVICES"] = ucx_device(task.nic);
                if (ucx_device(task.nic) != task.nic) {
                    // "=": exactly this HCA; a bare mlx5_1 would also match mlx5_10.
                    env["NCCL_IB_HCA"] = "=" + task.nic;
                }
            }
        }
    }
    env.erase("ENVIRONMENT");
    return env;
}

}  // namespace cohort::agent
