#include "launcher/het_environment.h"

#include "common/hostlist.h"

namespace cohort {

uint32_t given_ntasks(const protocol::JobRecord& job) {
    if (job.spec.ntasks == 0 && job.spec.ntasks_per_node != 0) {
        return job.spec.ntasks_per_node * static_cast<uint32_t>(job.nodes.size());
    }
    return job.spec.ntasks;
}

std::vector<std::pair<std::string, std::string>> het_job_environment(
        const std::vector<protocol::JobRecord>& components) {
    std::vector<std::pair<std::string, std::string>> env;
    if (components.empty()) {
        return env;
    }
    const auto set_both = [&env](const std::string& suffix, const std::string& value) {
        env.emplace_back("SLURM_" + suffix, value);
        env.emplace_back("COHORT_" + suffix, value);
    };
    set_both("HET_SIZE", std::to_string(components.size()));
    set_both("PACK_SIZE", std::to_string(components.size()));
    for (const protocol::JobRecord& component : components) {
        std::vector<std::pair<std::string, std::string>> values = {
                {"JOB_ID", std::to_string(component.job_id)},
                {"JOB_NAME", component.spec.name},
                {"JOB_NODELIST", compress_hostlist(component.nodes)},
                {"JOB_NUM_NODES", std::to_string(component.nodes.size())},
                {"JOB_CPUS_PER_NODE", compact_counts(component.cpus_per_node)},
                {"TASKS_PER_NODE", compact_counts(component.tasks_per_node)},
                {"JOB_PARTITION", component.partition}};
        if (const uint32_t ntasks = given_ntasks(component); ntasks != 0) {
            values.emplace_back("NTASKS", std::to_string(ntasks));
            values.emplace_back("NPROCS", std::to_string(ntasks));
        }
        if (component.spec.ntasks_per_node != 0) {
            values.emplace_back("NTASKS_PER_NODE", std::to_string(component.spec.ntasks_per_node));
        }
        if (component.spec.cpus_per_task_set) {
            values.emplace_back("CPUS_PER_TASK", std::to_string(component.spec.cpus_per_task));
        }
        const std::string offset = std::to_string(component.het_job_offset);
        for (const auto& [name, value] : values) {
            set_both(name + "_HET_GROUP_" + offset, value);
            set_both(name + "_PACK_GROUP_" + offset, value);
        }
    }
    return env;
}

}  // namespace cohort
