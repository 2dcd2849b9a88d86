// The planning pass places GPU jobs that start now by the GPU layout: where the job's GPUs
// share one NVLink clique before the best fit by count, as choose_node() does.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/topology/discover.h"
#include "scheduler/placement/node_fit.h"
#include "scheduler/backfill/plan.h"

namespace cohort::sched {
namespace {

// IBM Minsky (tests/data/topologies/SOURCES.md): GPUs 0-1 and 2-3 are two NVLink pairs.
std::shared_ptr<const NodeGpuLayout> minsky() {
    auto t = topology::load_topology_xml("tests/data/topologies/hwloc-power8gpudistances.xml");
    EXPECT_TRUE(t) << t.status().message();
    return std::make_shared<const NodeGpuLayout>(t ? gpu_layout_of(*t) : NodeGpuLayout{});
}

// Minsky nodes with the given GPUs free; the others are held by a running job.
Snapshot minsky_cluster(const std::vector<std::vector<int>>& free_gpus) {
    Snapshot snapshot;
    const auto layout = minsky();
    snapshot.partitions.resize(1);
    for (size_t i = 0; i < free_gpus.size(); ++i) {
        NodeCapacity node;
        node.name = "minsky" + std::to_string(i + 1);
        node.cpus = 128;
        node.memory_mib = 1 << 18;
        node.up = true;
        node.gpus = 4;
        node.gpu_layout = layout;
        node.free_gpus = free_gpus[i];
        snapshot.nodes.push_back(node);
        snapshot.partitions[0].push_back(static_cast<int>(i));
        RunningAllocation busy;
        busy.nodes = {static_cast<int>(i)};
        busy.cpus_per_node = {8};
        busy.gpus_per_node = 4 - static_cast<int32_t>(free_gpus[i].size());
        busy.expected_end = kForever;
        snapshot.running.push_back(busy);
    }
    return snapshot;
}

PendingJob gpu_job(uint64_t id, int32_t gpus) {
    PendingJob job;
    job.id = id;
    job.submit_time = static_cast<int64_t>(id);
    job.request.ntasks = 1;
    job.request.gpus_per_node = gpus;
    return job;
}

std::vector<int> nodes_started(const Decisions& decisions) {
    std::vector<int> out;
    for (const StartJob& start : decisions.starts) {
        out.push_back(start.placement.nodes.front());
    }
    return out;
}

TEST(PlanGpu, OneNvLinkCliqueOutranksTheBestFit) {
    // minsky1 has 2 free GPUs, one of each pair; minsky2 has 3, a whole pair among them.
    // Best fit by count alone takes minsky1, where the 2 GPUs talk across sockets.
    Snapshot snapshot = minsky_cluster({{1, 2}, {0, 1, 2}});
    snapshot.pending = {gpu_job(1, 2)};
    EXPECT_EQ(nodes_started(plan(snapshot, {BackfillPolicy::kNone})), std::vector<int>{1});
}

TEST(PlanGpu, AmongNodesReachingOneCliqueTheFullestWins) {
    Snapshot snapshot = minsky_cluster({{0, 1, 2, 3}, {2, 3}, {0, 1, 3}});
    snapshot.pending = {gpu_job(1, 2)};
    EXPECT_EQ(nodes_started(plan(snapshot, {BackfillPolicy::kNone})), std::vector<int>{1});
}

TEST(PlanGpu, JobsStartedInOnePassSeeTheGpusTheEarlierOnesTook) {
    // Three 2-GPU jobs: the first completes minsky2 (its pair 2-3), the next two take
    // minsky1's pairs one after the other.
    Snapshot snapshot = minsky_cluster({{0, 1, 2, 3}, {0, 2, 3}});
    snapshot.pending = {gpu_job(1, 2), gpu_job(2, 2), gpu_job(3, 2)};
    EXPECT_EQ(nodes_started(plan(snapshot, {BackfillPolicy::kNone})),
            (std::vector<int>{1, 0, 0}));
    // A 2-GPU job after a 1-GPU one on a node with one pair: the 1-GPU job took GPU 0 of
    // the broken pair, so the 2-GPU job still finds the whole pair there.
    snapshot = minsky_cluster({{0, 2, 3}, {0, 1, 2, 3}});
    snapshot.pending = {gpu_job(1, 1), gpu_job(2, 2)};
    EXPECT_EQ(nodes_started(plan(snapshot, {BackfillPolicy::kNone})),
            (std::vector<int>{0, 0}));
}

TEST(PlanGpu, NodesWithoutALayoutAreRankedByCountAlone) {
    Snapshot snapshot = minsky_cluster({{1, 2}, {0, 1, 2}});
    for (NodeCapacity& node : snapshot.nodes) {
        node.gpu_layout = nullptr;
    }
    snapshot.pending = {gpu_job(1, 2)};
    EXPECT_EQ(nodes_started(plan(snapshot, {BackfillPolicy::kNone})), std::vector<int>{0});
}

TEST(PlanGpu, FitOrderKeepsTheGivenOrderOnTies) {
    const std::vector<int64_t> free = {4, 2, 4, 2};
    const auto count = [&](int i) { return free[static_cast<size_t>(i)]; };
    const auto unknown = [](int) { return GpuSetLocality{}; };
    EXPECT_EQ(gpu_fit_order({0, 1, 2, 3}, count, unknown), (std::vector<int>{1, 3, 0, 2}));
    const auto clique_on_2 = [](int i) { return GpuSetLocality{i == 2, false, false, false}; };
    EXPECT_EQ(gpu_fit_order({0, 1, 2, 3}, count, clique_on_2), (std::vector<int>{2, 1, 3, 0}));
}

}  // namespace
}  // namespace cohort::sched
