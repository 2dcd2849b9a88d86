// Tests GPU set selection, CPU/NIC binding and node choice on recorded node layouts.
#include "scheduler/placement/gpu_select.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/topology/discover.h"

namespace cohort::sched {
namespace {

// Checked-in copies of recorded topologies (tests/data/topologies/SOURCES.md).
const std::string kLocalDir = "tests/data/topologies";

NodeGpuLayout layout_from(const std::string& file) {
    Result<topology::NodeTopology> t = topology::load_topology_xml(kLocalDir + "/" + file);
    EXPECT_TRUE(t) << t.status().message();
    return t ? gpu_layout_of(*t) : NodeGpuLayout{};
}

std::vector<int> all_cpus(int n) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
        out.push_back(i);
    }
    return out;
}

std::vector<int> without(std::vector<int> from, const std::vector<int>& taken) {
    from.erase(
            std::remove_if(from.begin(), from.end(),
                           [&](int x) { return std::count(taken.begin(), taken.end(), x) != 0; }),
            from.end());
    return from;
}

std::vector<int> pick(const NodeGpuLayout& layout, const std::vector<int>& free_gpus, int k) {
    Result<GpuSelection> s = select_gpus(layout, {free_gpus, all_cpus(256)}, {k, 0, 0});
    EXPECT_TRUE(s) << s.status().message();
    return s ? s->gpus : std::vector<int>{};
}

TEST(GpuSelect, NvLinkMeshBoxNeverSplitsASocketPairWhenAWholePairIsFree) {
    // XE8640: 4 H100 in one NVLink mesh, GPUs 0-1 on socket 0 and 2-3 on socket 1.
    const NodeGpuLayout xe = layout_from("fluxcore-ipa20.xml");
    ASSERT_EQ(xe.gpus.size(), 4U);
    for (int first = 0; first < 4; ++first) {
        SCOPED_TRACE("1-GPU job on GPU " + std::to_string(first));
        const std::vector<int> left = without({0, 1, 2, 3}, {first});
        const std::vector<int> pair = pick(xe, left, 2);
        const int other_socket_pair = first < 2 ? 2 : 0;
        EXPECT_EQ(pair, (std::vector<int>{other_socket_pair, other_socket_pair + 1}));
    }
    // A second 1-GPU job completes the broken pair instead of breaking the whole one.
    EXPECT_EQ(pick(xe, {1, 2, 3}, 1), (std::vector<int>{1}));
    EXPECT_EQ(pick(xe, {0, 1, 3}, 1), (std::vector<int>{3}));
}

TEST(GpuSelect, Dgx2EightGpuRequestTakesOneBaseboard) {
    const NodeGpuLayout dgx2 = layout_from("hwloc-nvidiaDGX2.xml");
    ASSERT_EQ(dgx2.gpus.size(), 16U);
    const std::vector<int> all = all_cpus(16);
    Result<GpuSelection> s = select_gpus(dgx2, {all, all_cpus(4)}, {8, 0, 0});
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->gpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(s->locality, (GpuSetLocality{true, false, true, true}));
    // With one GPU of the first baseboard busy, the whole second one is taken.
    EXPECT_EQ(pick(dgx2, without(all, {3}), 8), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(GpuSelect, Dgx2SmallRequestsStayInsideTheDeepestSwitchAndFillBrokenOnesFirst) {
    const NodeGpuLayout dgx2 = layout_from("hwloc-nvidiaDGX2.xml");
    const std::vector<int> all = all_cpus(16);
    EXPECT_EQ(pick(dgx2, all, 2), (std::vector<int>{0, 1}));  // PIX pair, not 0 and 2 (PXB)
    EXPECT_EQ(pick(dgx2, all, 4), (std::vector<int>{0, 1, 2, 3}));
    // GPU 0 busy: the next single GPU is its pair mate, keeping other pairs whole.
    EXPECT_EQ(pick(dgx2, without(all, {0}), 1), (std::vector<int>{1}));
    // GPUs 0 and 2 busy: 1 and 3 only share the quad's outer switch, so a whole pair of the
    // next quad (one switch deeper) wins.
    EXPECT_EQ(pick(dgx2, without(all, {0, 2}), 2), (std::vector<int>{4, 5}));
    // A 4-GPU request with GPU 0 busy takes a whole quad rather than three of the broken one.
    EXPECT_EQ(pick(dgx2, without(all, {0}), 4), (std::vector<int>{4, 5, 6, 7}));
}

TEST(GpuSelect, AMultiNodeJobGetsTheSameLocalGpusOnEveryNodeWhenAsLocal) {
    const NodeGpuLayout dgx2 = layout_from("hwloc-nvidiaDGX2.xml");
    const std::vector<int> all = all_cpus(16);
    const GpuRequest four{4, 0, 0};
    // The first node gave GPUs 4-7 (0-3 were busy there); on an empty node the selector
    // alone would take 0-3, but 4-7 are as local: the rails stay aligned.
    Result<GpuSelection> s = select_gpus_aligned(dgx2, {all, all_cpus(4)}, four, {4, 5, 6, 7});
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->gpus, (std::vector<int>{4, 5, 6, 7}));
    // A set less local than the best free one is not worth aligning to: 0-1 + 8-9 span both
    // baseboards.
    s = select_gpus_aligned(dgx2, {all, all_cpus(4)}, four, {0, 1, 8, 9});
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->gpus, (std::vector<int>{0, 1, 2, 3}));
    // A busy GPU of the set: the best free choice instead.
    s = select_gpus_aligned(dgx2, {without(all, {5}), all_cpus(4)}, four, {4, 5, 6, 7});
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->gpus, (std::vector<int>{0, 1, 2, 3}));
}

TEST(GpuSelect, SingleRootBoxBindsEachTaskToItsSwitchHcaAndNumaCores) {
    const NodeGpuLayout box = layout_from("hwloc-linux-32intel64-2p8co2t+8ve.xml");
    ASSERT_EQ(box.gpus.size(), 8U);
    ASSERT_EQ(box.nics.size(), 2U);
    Result<GpuSelection> s = select_gpus(box, {{1, 4, 5, 6, 7}, all_cpus(32)}, {4, 2, 0});
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->gpus, (std::vector<int>{4, 5, 6, 7}));  // the whole second switch
    EXPECT_TRUE(s->locality.one_switch);
    ASSERT_EQ(s->tasks.size(), 4U);
    const std::set<int> numa0(box.gpus[4].local_cpus.begin(), box.gpus[4].local_cpus.end());
    for (const TaskBinding& t : s->tasks) {
        EXPECT_EQ(t.gpus.size(), 1U);
        EXPECT_EQ(box.nics[static_cast<size_t>(t.nic)], "0000:3e:00.0");
        EXPECT_EQ(t.cpus.size(), 2U);
        for (int cpu : t.cpus) {
            EXPECT_EQ(numa0.count(cpu), 1U) << "CPU " << cpu << " not local to the GPUs";
        }
    }
    EXPECT_EQ(s->cpus.size(), 8U);
}

TEST(GpuSelect, CoresComeFromTheGpusNumaNodeFirstThenAnywhere) {
    const NodeGpuLayout xe = layout_from("fluxcore-ipa20.xml");
    const std::vector<int>& local = xe.gpus[0].local_cpus;  // 28 CPUs of NUMA node 3
    ASSERT_EQ(local.size(), 28U);
    // Only 4 local CPUs are free: they are used, and the rest come from elsewhere.
    std::vector<int> free_cpus = without(all_cpus(224), local);
    free_cpus.insert(free_cpus.end(), local.begin(), local.begin() + 4);
    Result<GpuSelection> s = select_gpus(xe, {{0}, free_cpus}, {1, 6, 0});
    ASSERT_TRUE(s) << s.status().message();
    ASSERT_EQ(s->tasks.size(), 1U);
    const std::vector<int>& cpus = s->tasks[0].cpus;
    ASSERT_EQ(cpus.size(), 6U);
    EXPECT_EQ(std::count_if(cpus.begin(), cpus.end(),
                            [&](int c) { return std::count(local.begin(), local.end(), c) != 0; }),
              4);
}

TEST(GpuSelect, TasksShareOrSplitTheChosenGpus) {
    const NodeGpuLayout xe = layout_from("fluxcore-ipa20.xml");
    Result<GpuSelection> two_per_gpu = select_gpus(xe, {{0, 1, 2, 3}, all_cpus(224)}, {2, 4, 4});
    ASSERT_TRUE(two_per_gpu) << two_per_gpu.status().message();
    ASSERT_EQ(two_per_gpu->tasks.size(), 4U);
    EXPECT_EQ(two_per_gpu->tasks[0].gpus, two_per_gpu->tasks[1].gpus);
    EXPECT_NE(two_per_gpu->tasks[1].gpus, two_per_gpu->tasks[2].gpus);
    EXPECT_EQ(two_per_gpu->tasks[0].cpus.size(), 2U);

    Result<GpuSelection> one_task = select_gpus(xe, {{0, 1, 2, 3}, all_cpus(224)}, {4, 1, 1});
    ASSERT_TRUE(one_task) << one_task.status().message();
    ASSERT_EQ(one_task->tasks.size(), 1U);
    EXPECT_EQ(one_task->tasks[0].gpus, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(one_task->tasks[0].cpus.size(), 4U);
}

TEST(GpuSelect, ErrorsSayNeverOrNotNow) {
    const NodeGpuLayout xe = layout_from("fluxcore-ipa20.xml");
    Result<GpuSelection> too_many = select_gpus(xe, {{0, 1, 2, 3}, all_cpus(224)}, {5, 0, 0});
    ASSERT_FALSE(too_many);
    EXPECT_EQ(too_many.status().code(), StatusCode::kInfeasible);
    EXPECT_EQ(too_many.status().message(), "asked for 5 GPUs; the node has 4");

    Result<GpuSelection> busy = select_gpus(xe, {{1, 2}, all_cpus(224)}, {3, 0, 0});
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(busy.status().message(), "asked for 3 GPUs; 2 are free");

    Result<GpuSelection> cpus = select_gpus(xe, {{0, 1}, all_cpus(10)}, {2, 8, 0});
    ASSERT_FALSE(cpus);
    EXPECT_EQ(cpus.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(cpus.status().message(),
              "GPU request needs 16 CPUs (--cpus-per-gpu=8 x 2 GPUs); 10 are free");

    Result<GpuSelection> none = select_gpus(xe, {{0}, {}}, {0, 0, 0});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
}

TEST(GpuSelect, BestLocalityIsWhatTheSelectorReaches) {
    const NodeGpuLayout dgx2 = layout_from("hwloc-nvidiaDGX2.xml");
    // GPUs 1, 3, 4 and 9 free: no free pair shares a switch, 1+3 (or 3+4) share a NUMA node.
    const std::vector<int> free = {1, 3, 4, 9};
    EXPECT_EQ(best_locality(dgx2, free, 2), (GpuSetLocality{true, true, true, true}));
    EXPECT_EQ(locality_of(dgx2, {1, 9}), (GpuSetLocality{true, false, false, false}));
    EXPECT_EQ(locality_of(dgx2, {1, 4}), (GpuSetLocality{true, false, true, true}));
    EXPECT_EQ(best_locality(dgx2, free, 5), std::nullopt);
    EXPECT_EQ(pick(dgx2, free, 2), (std::vector<int>{1, 3}));
}

TEST(GpuSelect, NodeChoiceKeepsWholeNodesWhole) {
    const NodeGpuLayout xe = layout_from("fluxcore-ipa20.xml");
    const std::vector<NodeCandidate> nodes = {
            {&xe, {{0, 1, 2, 3}, all_cpus(224)}},  // empty
            {&xe, {{2, 3}, all_cpus(224)}},        // a whole socket pair left
            {&xe, {{1, 2}, all_cpus(224)}},        // two GPUs on different sockets
    };
    Result<NodeChoice> pair = choose_node(nodes, {2, 0, 0});
    ASSERT_TRUE(pair) << pair.status().message();
    EXPECT_EQ(pair->node, 1);
    EXPECT_EQ(pair->selection.gpus, (std::vector<int>{2, 3}));

    Result<NodeChoice> single = choose_node(nodes, {1, 0, 0});
    ASSERT_TRUE(single) << single.status().message();
    EXPECT_NE(single->node, 0);

    Result<NodeChoice> whole = choose_node(nodes, {4, 0, 0});
    ASSERT_TRUE(whole) << whole.status().message();
    EXPECT_EQ(whole->node, 0);

    Result<NodeChoice> never = choose_node(nodes, {8, 0, 0});
    ASSERT_FALSE(never);
    EXPECT_EQ(never.status().code(), StatusCode::kInfeasible);
    Result<NodeChoice> later = choose_node({nodes[1], nodes[2]}, {4, 0, 0});
    ASSERT_FALSE(later);
    EXPECT_EQ(later.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cohort::sched
