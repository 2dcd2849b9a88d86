// The variables every rank and batch script sees.
#include "launcher/task_env.h"

#include <gtest/gtest.h>

namespace cohort::agent {
namespace {

protocol::StepLayout two_by_two() {
    protocol::StepLayout layout;
    layout.job_id = 12;
    layout.step_id = 0;
    layout.job_name = "train";
    layout.nodes = {"node1", "node2"};
    layout.addresses = {"10.0.0.1", "10.0.0.2"};
    layout.tasks_per_node = {2, 2};
    layout.job_nodes = layout.nodes;
    layout.job_cpus_per_node = {2, 2};
    return layout;
}

TEST(TaskEnv, CompactCounts) {
    EXPECT_EQ(compact_counts({2, 2, 2, 1}), "2(x3),1");
    EXPECT_EQ(compact_counts({4}), "4");
    EXPECT_EQ(compact_counts({1, 2}), "1,2");
}

TEST(TaskEnv, RankVariablesOnTheSecondNode) {
    auto layout = two_by_two();
    TaskContext context{1, 1, 3, 29500, "node2", true, {}};
    EnvMap env = task_environment(layout, context, {{"HOME", "/root"}});
    EXPECT_EQ(env.at("RANK"), "3");
    EXPECT_EQ(env.at("WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("LOCAL_RANK"), "1");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("GROUP_RANK"), "1");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), "29500");
    EXPECT_EQ(env.at("SLURM_PROCID"), "3");
    EXPECT_EQ(env.at("SLURM_LOCALID"), "1");
    EXPECT_EQ(env.at("SLURM_NODEID"), "1");
    EXPECT_EQ(env.at("SLURM_NTASKS"), "4");
    EXPECT_EQ(env.at("SLURM_NNODES"), "2");
    EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "node[1-2]");
    EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2(x2)");
    EXPECT_EQ(env.at("SLURM_STEP_ID"), "0");
    EXPECT_EQ(env.at("COHORT_PROCID"), "3");
    EXPECT_EQ(env.at("COHORT_JOB_HOSTS"), "node1 node2");
    EXPECT_EQ(env.at("COHORT_STEP_HOSTS"), "node1 node2");
    EXPECT_EQ(env.at("HOME"), "/root");
}

TEST(TaskEnv, TorchVariablesCanBeSwitchedOff) {
    TaskContext context{0, 0, 0, 29500, "node1", false, {}};
    EnvMap env = task_environment(two_by_two(), context, {});
    EXPECT_EQ(env.count("RANK"), 0u);
    EXPECT_EQ(env.count("MASTER_ADDR"), 0u);
    EXPECT_EQ(env.at("SLURM_PROCID"), "0");
}

TEST(TaskEnv, BatchScriptHasNoStepId) {
    protocol::JobRecord job;
    job.job_id = 5;
    job.spec.name = "b";
    job.spec.env = {{"SLURM_STEP_ID", "3"}, {"KEEP", "1"}};
    job.nodes = {"node1", "node2", "node3"};
    job.cpus_per_node = {2, 2, 1};
    job.tasks_per_node = {2, 2, 1};
    job.spec.ntasks = 5;
    EnvMap env = batch_environment(job, {"cohort", "node1", 2, "login", {}, "", 0});
    EXPECT_EQ(env.count("SLURM_STEP_ID"), 0u);
    EXPECT_EQ(env.at("KEEP"), "1");
    EXPECT_EQ(env.at("SLURM_JOB_ID"), "5");
    EXPECT_EQ(env.at("SLURM_NTASKS"), "5");
    EXPECT_EQ(env.at("SLURM_JOB_CPUS_PER_NODE"), "2(x2),1");
    EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "node[1-3]");
    EXPECT_EQ(env.at("ENVIRONMENT"), "BATCH");
    EXPECT_EQ(env.count("SLURM_CPUS_PER_TASK"), 0u);  // only when -c was given
    EXPECT_EQ(env.count("SLURM_DISTRIBUTION"), 0u);   // only when -m was given
}

// Beyond Slurm: the hosts in order and a rendezvous on the first node, so a launcher needs
// no `scontrol show hostnames | head -n1`; a job's own MASTER_ADDR/PORT win.
TEST(TaskEnv, BatchScriptGetsItsHostsAndARendezvousOnTheFirstNode) {
    protocol::JobRecord job;
    job.job_id = 6;
    job.nodes = {"gpu7", "gpu2", "gpu3"};
    job.cpus_per_node = {1, 1, 1};
    job.tasks_per_node = {1, 1, 1};
    EnvMap env = batch_environment(job, {"c", "gpu7", 8, "login", {}, "10.0.0.7", 29411});
    EXPECT_EQ(env.at("COHORT_JOB_HOSTS"), "gpu7 gpu2 gpu3");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.7");
    EXPECT_EQ(env.at("MASTER_PORT"), "29411");

    job.spec.env = {{"MASTER_ADDR", "head"}, {"MASTER_PORT", "6000"}};
    env = batch_environment(job, {"c", "gpu7", 8, "login", {}, "10.0.0.7", 29411});
    EXPECT_EQ(env.at("MASTER_ADDR"), "head");
    EXPECT_EQ(env.at("MASTER_PORT"), "6000");
}

TEST(TaskEnv, TheDistributionReachesScriptsAndTasksForSrunToReadBack) {
    protocol::JobRecord job;
    job.spec.distribution = "plane=2";
    EnvMap batch = batch_environment(job, {"cohort", "node1", 2, "login", {}, "", 0});
    EXPECT_EQ(batch.at("SLURM_DISTRIBUTION"), "plane");
    EXPECT_EQ(batch.at("SLURM_DIST_PLANESIZE"), "2");

    auto layout = two_by_two();
    layout.distribution.kind = TaskDistribution::Kind::kCyclic;
    EnvMap task = task_environment(layout, {0, 1, 2, 29500, "node1", true, {}}, {});
    EXPECT_EQ(task.at("SLURM_DISTRIBUTION"), "cyclic");
    EXPECT_EQ(task.count("SLURM_DIST_PLANESIZE"), 0u);
}

TEST(TaskEnv, ArrayTasksSeeTheirIndexAndTheArray) {
    protocol::JobRecord job;
    job.job_id = 12;
    job.array_job_id = 10;
    job.array_task_id = 4;
    job.array_count = 3;
    job.array_min = 0;
    job.array_max = 4;
    job.array_step = 2;
    job.nodes = {"node1"};
    job.cpus_per_node = {1};
    job.tasks_per_node = {1};
    EnvMap env = batch_environment(job, {"cohort", "node1", 2, "login", {}, "", 0});
    EXPECT_EQ(env.at("SLURM_JOB_ID"), "12");
    EXPECT_EQ(env.at("SLURM_ARRAY_JOB_ID"), "10");
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), "4");
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_COUNT"), "3");
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MAX"), "4");
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_STEP"), "2");
}

// Two tasks on node2, each with its own GPU of the job's pair, its own cores and NIC.
protocol::StepLayout with_gpus(bool per_task, const std::string& vendor) {
    auto layout = two_by_two();
    protocol::NodeGpuAlloc alloc{{2, 3}, {4, 5}, {"0000:39:00.0", "0000:3b:00.0"}, vendor};
    for (int node = 0; node < 2; ++node) {
        protocol::NodeGpuBinding binding;
        binding.alloc = alloc;
        binding.per_task = per_task;
        binding.tasks = {{per_task ? std::vector<int32_t>{2} : alloc.gpus, {4}, "mlx5_1"},
                         {per_task ? std::vector<int32_t>{3} : alloc.gpus, {5}, "mlx5_10"}};
        layout.gpu_nodes.push_back(binding);
    }
    return layout;
}

TEST(TaskEnv, EachTaskSeesItsOwnGpuAndClosestNic) {
    TaskContext context{1, 1, 3, 29500, "node2", true, {}};
    EnvMap env = task_environment(with_gpus(true, "nvidia"), context,
                                  {{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}});
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "3");
    EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
    EXPECT_EQ(env.at("COHORT_GPU_PCI_BUS_IDS"), "0000:3b:00.0");
    EXPECT_EQ(env.at("SLURM_GPUS_ON_NODE"), "2");
    EXPECT_EQ(env.at("SLURM_STEP_GPUS"), "2,3");
    EXPECT_EQ(env.at("SLURM_JOB_GPUS"), "2,3");
    EXPECT_EQ(env.at("UCX_NET_DEVICES"), "mlx5_10:1");
    EXPECT_EQ(env.at("NCCL_IB_HCA"), "=mlx5_10");
    EXPECT_EQ(env.count("ROCR_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(task_cpus(with_gpus(true, "nvidia"), 1, 1), std::vector<int>{5});
}

TEST(TaskEnv, WithoutPerTaskBindingEveryTaskSeesTheNodesGpus) {
    TaskContext context{0, 0, 0, 29500, "node1", true, {}};
    EnvMap env = task_environment(with_gpus(false, "nvidia"), context, {});
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3");
    EXPECT_EQ(env.at("COHORT_GPU_PCI_BUS_IDS"), "0000:39:00.0,0000:3b:00.0");
    EXPECT_EQ(env.at("UCX_NET_DEVICES"), "mlx5_1:1");
}

TEST(TaskEnv, AmdGpusUseRocrAndGpuDeviceOrdinal) {
    TaskContext context{0, 1, 1, 29500, "node1", true, {}};
    EnvMap env = task_environment(with_gpus(true, "amd"), context, {});
    EXPECT_EQ(env.at("ROCR_VISIBLE_DEVICES"), "3");
    EXPECT_EQ(env.at("GPU_DEVICE_ORDINAL"), "3");
    EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(TaskEnv, NoGpusNoGpuVariables) {
    TaskContext context{0, 0, 0, 29500, "node1", true, {}};
    EnvMap env = task_environment(two_by_two(), context, {});
    EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(env.count("UCX_NET_DEVICES"), 0u);
    EXPECT_TRUE(task_cpus(two_by_two(), 0, 0).empty());
}

TEST(TaskEnv, NetdevNicsGoToUcxAsTheyAre) {
    EXPECT_EQ(ucx_device("mlx5_0"), "mlx5_0:1");
    EXPECT_EQ(ucx_device("hsi0"), "hsi0");
}

TEST(TaskEnv, BatchScriptSeesTheJobsGpusOnItsNode) {
    protocol::JobRecord job;
    job.job_id = 7;
    job.nodes = {"node1"};
    job.tasks_per_node = {1};
    job.cpus_per_node = {2};
    job.spec.gpu.per_node = 2;
    job.spec.gpu.type = "h100";
    job.gpu_alloc = {{{0, 1}, {0, 1}, {"0000:1b:00.0", "0000:43:00.0"}, "nvidia"}};
    EnvMap env = batch_environment(job, {"c", "node1", 8, "login", {}, "", 0});
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0,1");
    EXPECT_EQ(env.at("SLURM_JOB_GPUS"), "0,1");
    EXPECT_EQ(env.at("SLURM_GPUS_ON_NODE"), "2");
    EXPECT_EQ(env.at("SLURM_GPUS_PER_NODE"), "h100:2");
    EXPECT_EQ(batch_cpus(job), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace cohort::agent
