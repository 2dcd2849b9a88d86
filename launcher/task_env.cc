// Building the batch and task environments.
#include "launcher/task_env.h"

#include "common/hostlist.h"

namespace cohort::agent {
namespace {

void set_both(EnvMap& env, const std::string& suffix, const std::string& value) {
    env["SLURM_" + suffix] = value;
    env["COHORT_" + suffix] = value;
}

}  // namespace

std::string compact_counts(const std::vector<uint32_t>& counts) {
    std::string out;
    for (size_t i = 0; i < counts.size();) {
        size_t run = 1;
        while (i + run < counts.size() && counts[i + run] == counts[i]) {
            ++run;
        }
        out += (out.empty() ? "" : ",") + std::to_string(counts[i]);
        if (run > 1) {
            out += "(x" + std::to_string(run) + ")";
        }
        i += run;
    }
    return out;
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

uint32_t first_rank_on(const protocol::StepLayout& layout, uint32_t node_index) {
    uint32_t rank = 0;
    for (uint32_t i = 0; i < node_index && i < layout.tasks_per_node.size(); ++i) {
        rank += layout.tasks_per_node[i];
    }
    return rank;
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
    set_both(env, "JOB_START_TIME", std::to_string(job.start_time));
    if (job.time_limit_s >= 0) {
        set_both(env, "JOB_END_TIME", std::to_string(job.start_time + job.time_limit_s));
    }
    set_both(env, "JOB_UID", std::to_string(job.uid));
    set_both(env, "JOB_GID", std::to_string(job.gid));
    set_both(env, "JOB_USER", job.user_name);
    set_both(env, "RESTART_COUNT", std::to_string(job.restart_count));
    env["ENVIRONMENT"] = "BATCH";
    uint32_t ntasks = job.spec.ntasks;
    if (ntasks == 0 && job.spec.ntasks_per_node != 0) {
        ntasks = job.spec.ntasks_per_node * static_cast<uint32_t>(job.nodes.size());
    }
    if (ntasks != 0) {
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
    }
    if (job.is_array_task()) {
        set_both(env, "ARRAY_JOB_ID", std::to_string(job.array_job_id));
        set_both(env, "ARRAY_TASK_ID", std::to_string(job.array_task_id));
        set_both(env, "ARRAY_TASK_COUNT", std::to_string(job.array_count));
        set_both(env, "ARRAY_TASK_MIN", std::to_string(job.array_min));
        set_both(env, "ARRAY_TASK_MAX", std::to_string(job.array_max));
        set_both(env, "ARRAY_TASK_STEP", std::to_string(job.array_step));
    }
    env.erase("SLURM_STEP_ID");
    env.erase("SLURM_STEPID");
    return env;
}

EnvMap task_environment(const protocol::StepLayout& layout, const TaskContext& context,
        const EnvMap& base) {
    EnvMap env = base;
    const std::string nodelist = compress_hostlist(layout.nodes);
    const uint32_t ntasks = layout.ntasks();
    const uint32_t local_size = layout.tasks_per_node.at(context.node_index);
    const std::string job_id = std::to_string(layout.job_id);

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
    set_both(env, "CPUS_ON_NODE",
            std::to_string(local_size * layout.cpus_per_task));
    if (layout.cpus_per_task_set) {
        set_both(env, "CPUS_PER_TASK", std::to_string(layout.cpus_per_task));
    }
    env["SLURMD_NODENAME"] = context.node_name;
    env["COHORTD_NODENAME"] = context.node_name;
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
    env.erase("ENVIRONMENT");
    return env;
}

}  // namespace cohort::agent
