// Choosing preemptees: only as many as the waiting job needs, lowest priority first, and none
// when it could not start anyway.
#include "scheduler/preemption/preemption.h"

#include <gtest/gtest.h>

namespace cohort::sched {
namespace {

std::vector<NodeCapacity> preemption_nodes(int count, int32_t cpus) {
    std::vector<NodeCapacity> out(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
        NodeCapacity& node = out[static_cast<size_t>(i)];
        node.name = "n" + std::to_string(i + 1);
        node.cpus = cpus;
        node.memory_mib = 1024;
        node.up = true;
    }
    return out;
}

PreemptionCandidate running(uint64_t id, int64_t priority, int node, int32_t cpus) {
    return {id, priority, {RunningAllocation{{node}, {cpus}, 0, 0, 0, {}}}};
}

ResourceRequest tasks_over(uint32_t nodes_min, uint32_t ntasks) {
    ResourceRequest request;
    request.nodes_min = nodes_min;
    request.ntasks = ntasks;
    return request;
}

// A waiting job of one part over `eligible`.
std::vector<WaitingPart> waiting(ResourceRequest request, std::vector<int> eligible) {
    return {{std::move(request), std::move(eligible)}};
}

std::vector<RunningAllocation> held(const std::vector<PreemptionCandidate>& jobs,
                                    std::vector<RunningAllocation> others = {}) {
    for (const auto& job : jobs) {
        others.insert(others.end(), job.allocations.begin(), job.allocations.end());
    }
    return others;
}

TEST(Preemption, TakesTheLowestPriorityJobsAndNoMoreThanNeeded) {
    // Two 4-CPU nodes, each full with two 2-CPU jobs; the waiting job needs 4 CPUs on a node.
    const std::vector<PreemptionCandidate> jobs = {running(1, 50, 0, 2), running(2, 10, 0, 2),
                                                   running(3, 20, 1, 2), running(4, 5, 1, 2)};
    auto chosen = choose_preemptees(preemption_nodes(2, 4), waiting(tasks_over(1, 4), {0, 1}),
                                    held(jobs), jobs);
    // Lowest first: 4 (n2), 2 (n1), 3 (n2) fits; then 2 is not needed.
    EXPECT_EQ(chosen, (std::vector<uint64_t>{4, 3}));
}

TEST(Preemption, NoneWhenTheJobFitsAlready) {
    const std::vector<PreemptionCandidate> jobs = {running(1, 1, 0, 2)};
    EXPECT_TRUE(choose_preemptees(preemption_nodes(2, 4), waiting(tasks_over(1, 4), {0, 1}),
                                  held(jobs), jobs)
                        .empty());
}

TEST(Preemption, NeverForAJobThatStillCouldNotStart) {
    // n2 is held by a job that may not be preempted: a two-node job cannot start even if the
    // candidate on n1 ends, so the candidate is left alone.
    const std::vector<PreemptionCandidate> jobs = {running(1, 1, 0, 4)};
    const RunningAllocation protected_job{{1}, {4}, 0, 0, 0, {}};
    EXPECT_TRUE(choose_preemptees(preemption_nodes(2, 4), waiting(tasks_over(2, 8), {0, 1}),
                                  held(jobs, {protected_job}), jobs)
                        .empty());
    // Nor on nodes outside the job's partition, or down.
    std::vector<NodeCapacity> down = preemption_nodes(2, 4);
    down[0].up = false;
    EXPECT_TRUE(choose_preemptees(down, waiting(tasks_over(1, 4), {0, 1}),
                                  held(jobs, {protected_job}), jobs)
                        .empty());
    EXPECT_TRUE(choose_preemptees(preemption_nodes(2, 4), waiting(tasks_over(1, 4), {1}),
                                  held(jobs, {protected_job}), jobs)
                        .empty());
}

TEST(Preemption, GpusAndMemoryCountWhenAsked) {
    std::vector<NodeCapacity> gpu_nodes = preemption_nodes(1, 8);
    gpu_nodes[0].gpus = 4;
    PreemptionCandidate gpu_job = running(1, 1, 0, 1);
    gpu_job.allocations.front().gpus_per_node = 4;
    PreemptionCandidate cpu_job = running(2, 0, 0, 1);
    ResourceRequest request = tasks_over(1, 1);
    request.gpus_per_node = 2;
    // The CPU job has the lower priority but frees no GPU: only the GPU job is taken.
    EXPECT_EQ(choose_preemptees(gpu_nodes, waiting(request, {0}), held({gpu_job, cpu_job}),
                                {gpu_job, cpu_job}),
              std::vector<uint64_t>{1});
}

// A heterogeneous job's components end together: preempting it frees them all, and it is
// worth it only as a whole.
TEST(Preemption, AHeterogeneousJobFreesEveryComponent) {
    // Two 4-CPU nodes: a hetjob holds 3 CPUs of n1 and 3 of n2, a job of its own 1 CPU of
    // each. A job of 4 tasks on each of the two nodes needs them all.
    PreemptionCandidate het = running(10, 5, 0, 3);
    het.allocations.push_back(RunningAllocation{{1}, {3}, 0, 0, 0, {}});
    const std::vector<PreemptionCandidate> jobs = {het, running(20, 1, 0, 1), running(21, 1, 1, 1)};
    EXPECT_EQ(choose_preemptees(preemption_nodes(2, 4), waiting(tasks_over(2, 8), {0, 1}),
                                held(jobs), jobs),
              (std::vector<uint64_t>{20, 21, 10}));
    // One node's 4 CPUs: the small jobs alone free one CPU per node; with the hetjob, n1
    // needs only job 20 gone, so job 21 on n2 is left alone.
    EXPECT_EQ(choose_preemptees(preemption_nodes(2, 4), waiting(tasks_over(1, 4), {0, 1}),
                                held(jobs), jobs),
              (std::vector<uint64_t>{20, 10}));
}

// A waiting heterogeneous job is preempted for only when every component fits at once, each on
// nodes of its own: two 1-node components on two full nodes need both nodes' jobs gone, not
// only the cheaper one.
TEST(Preemption, AWaitingHeterogeneousJobNeedsRoomForEveryComponent) {
    const std::vector<PreemptionCandidate> jobs = {running(1, 1, 0, 4), running(2, 9, 1, 4)};
    std::vector<WaitingPart> het = waiting(tasks_over(1, 1), {0, 1});
    het.push_back({tasks_over(1, 1), {0, 1}});
    EXPECT_EQ(choose_preemptees(preemption_nodes(2, 4), het, held(jobs), jobs),
              (std::vector<uint64_t>{1, 2}));
    // Only one node in the partition of component 1: they can never both start.
    het[1].eligible = {0};
    het[0].eligible = {0};
    EXPECT_TRUE(choose_preemptees(preemption_nodes(2, 4), het, held(jobs), jobs).empty());
}

}  // namespace
}  // namespace cohort::sched
