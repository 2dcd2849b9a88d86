// GPU request options: value syntax, Slurm's combination rules and the per-node shape.
#include "common/gpu_options.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

std::string error_of(const GpuOptions& gpu, const TaskGeometry& geometry) {
    auto shape = resolve_gpus(gpu, geometry);
    EXPECT_FALSE(shape.is_ok());
    return shape.is_ok() ? "" : shape.status().message();
}

TEST(GpuOptions, CountsWithAndWithoutType) {
    auto plain = parse_gpu_count("--gpus", "4");
    ASSERT_TRUE(plain.is_ok());
    EXPECT_EQ(plain->count, 4);
    EXPECT_EQ(plain->type, "");
    auto typed = parse_gpu_count("--gpus-per-node", "A100:2");
    ASSERT_TRUE(typed.is_ok());
    EXPECT_EQ(typed->type, "a100");
    EXPECT_EQ(typed->count, 2);
}

TEST(GpuOptions, BadCountsNameTheOptionAndValue) {
    for (const char* bad : {"0", "-1", "two", "a100:", "a100:1,h100:1", ":2", "a b:2"}) {
        auto count = parse_gpu_count("--gpus-per-task", bad);
        ASSERT_FALSE(count.is_ok()) << bad;
        EXPECT_NE(count.status().message().find("--gpus-per-task"), std::string::npos);
        EXPECT_NE(count.status().message().find("accepted"), std::string::npos);
    }
}

TEST(GpuOptions, Gres) {
    auto bare = parse_gres("gpu");
    ASSERT_TRUE(bare.is_ok());
    EXPECT_EQ(bare->count, 1);
    auto counted = parse_gres("gpu:8");
    ASSERT_TRUE(counted.is_ok());
    EXPECT_EQ(counted->count, 8);
    auto typed = parse_gres("gpu:h100:4");
    ASSERT_TRUE(typed.is_ok());
    EXPECT_EQ(typed->type, "h100");
    EXPECT_EQ(typed->count, 4);
    auto type_only = parse_gres("gpu:a100");
    ASSERT_TRUE(type_only.is_ok());
    EXPECT_EQ(type_only->type, "a100");
    EXPECT_EQ(type_only->count, 1);
    for (const char* bad : {"nvme:20", "gpu:a100:0", "gpu:a:b:1", "gpu:2,nvme:1", ""}) {
        auto gres = parse_gres(bad);
        ASSERT_FALSE(gres.is_ok()) << bad;
        EXPECT_NE(gres.status().message().find("--gres"), std::string::npos);
    }
}

TEST(GpuOptions, GpuBind) {
    EXPECT_EQ(*parse_gpu_bind("closest"), "closest");
    EXPECT_EQ(*parse_gpu_bind("verbose,none"), "none");
    EXPECT_EQ(*parse_gpu_bind("map_gpu:1,0"), "map_gpu:1,0");
    EXPECT_EQ(*parse_gpu_bind("map:3"), "map_gpu:3");
    EXPECT_EQ(gpu_bind_map("map_gpu:1,0,12"), (std::vector<int>{1, 0, 12}));
    EXPECT_TRUE(gpu_bind_map("closest").empty());
    for (const char* bad : {"nearest", "map_gpu:", "map_gpu:1,,2", "map_gpu:a", "single:1"}) {
        auto bind = parse_gpu_bind(bad);
        ASSERT_FALSE(bind.is_ok()) << bad;
        EXPECT_NE(bind.status().message().find("closest, none or map_gpu"), std::string::npos);
    }
}

TEST(GpuOptions, SlurmCombinationRules) {
    GpuOptions per_task;
    per_task.per_task = 1;
    per_task.ntasks_per_gpu = 2;
    EXPECT_NE(error_of(per_task, {0, 0, 4})
                      .find("--ntasks-per-gpu: cannot be combined with "
                            "--gpus-per-task"),
              std::string::npos);

    GpuOptions per_node;
    per_node.per_node = 2;
    per_node.ntasks_per_gpu = 2;
    EXPECT_NE(error_of(per_node, {1, 0, 0, 4}).find("--ntasks-per-node"), std::string::npos);

    GpuOptions no_tasks;
    no_tasks.per_task = 1;
    EXPECT_NE(error_of(no_tasks, {2}).find("--gpus-per-task: needs a task count"),
              std::string::npos);

    GpuOptions cpus;
    cpus.per_node = 1;
    cpus.cpus_per_gpu = 4;
    EXPECT_NE(error_of(cpus, {1, 0, 0, 0, 2, true}).find("--cpus-per-task"), std::string::npos);

    GpuOptions mem;
    mem.per_node = 1;
    mem.mem_per_gpu_mib = 1024;
    EXPECT_NE(error_of(mem, {1, 0, 0, 0, 1, false, 4096}).find("mutually exclusive"),
              std::string::npos);

    GpuOptions two_counts;
    two_counts.gpus = 4;
    two_counts.per_node = 2;
    EXPECT_NE(error_of(two_counts, {2}).find("another GPU count"), std::string::npos);

    GpuOptions orphan;
    orphan.cpus_per_gpu = 4;
    EXPECT_NE(error_of(orphan, {}).find("--cpus-per-gpu: needs a GPU count"), std::string::npos);

    GpuOptions uneven;
    uneven.gpus = 3;
    EXPECT_NE(error_of(uneven, {2}).find("do not split evenly over 2 nodes"), std::string::npos);
}

TEST(GpuOptions, ShapeOfEachCountOption) {
    GpuOptions total;
    total.gpus = 8;
    auto s = resolve_gpus(total, {2});
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->gpus_per_node, 4);

    GpuOptions alone;
    alone.gpus = 2;
    s = resolve_gpus(alone, {});
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->gpus_per_node, 2);
    EXPECT_EQ(s->geometry.nodes_min, 1u);  // without -N: one node

    GpuOptions per_task;
    per_task.per_task = 2;
    s = resolve_gpus(per_task, {2, 0, 8});
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->geometry.ntasks_per_node, 4u);
    EXPECT_EQ(s->gpus_per_node, 8);

    GpuOptions tasks_per_gpu;
    tasks_per_gpu.per_node = 2;
    tasks_per_gpu.ntasks_per_gpu = 3;
    s = resolve_gpus(tasks_per_gpu, {2});
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->geometry.ntasks_per_node, 6u);
    EXPECT_EQ(s->geometry.ntasks, 12u);

    GpuOptions cpus_mem;
    cpus_mem.per_node = 4;
    cpus_mem.cpus_per_gpu = 6;
    cpus_mem.mem_per_gpu_mib = 1000;
    s = resolve_gpus(cpus_mem, {1, 0, 0, 2});
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->geometry.cpus_per_task, 12u);  // 4 GPUs x 6 CPUs over 2 tasks
    EXPECT_EQ(s->geometry.mem_mib, 4000);
    // The controller stores the memory it derived; the shape stays the same.
    EXPECT_EQ(gpu_shape(cpus_mem, s->geometry).geometry.mem_mib, 4000);
}

TEST(GpuOptions, NoGpusLeavesTheGeometryAlone) {
    auto s = resolve_gpus({}, {3, 0, 6, 2, 4, true, 100});
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->gpus_per_node, 0);
    EXPECT_EQ(s->geometry.ntasks, 6u);
    EXPECT_EQ(s->geometry.cpus_per_task, 4u);
}

TEST(GpuOptions, TypeFromModelName) {
    EXPECT_EQ(gpu_type_of("NVIDIA H100 80GB HBM3"), "h100");
    EXPECT_EQ(gpu_type_of("Tesla V100-SXM3-32GB-H"), "v100");
    EXPECT_EQ(gpu_type_of("NVIDIA A100-SXM4-40GB"), "a100");
    EXPECT_EQ(gpu_type_of("AMD Instinct MI250X"), "mi250x");
    EXPECT_EQ(gpu_type_of("Tesla T4"), "t4");
    EXPECT_EQ(gpu_type_of("10de:20b0"), "");
    EXPECT_EQ(gpu_type_of(""), "");
}

}  // namespace
}  // namespace cohort
