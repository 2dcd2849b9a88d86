// The first-fit pass and the never/not-now checks of the pure core.
#include "scheduler/backfill/plan.h"

#include <gtest/gtest.h>

#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

std::vector<NodeCapacity> nodes(int count, int cpus) {
    std::vector<NodeCapacity> out;
    for (int i = 0; i < count; ++i) {
        NodeCapacity node;
        node.name = "node" + std::to_string(i + 1);
        node.cpus = cpus;
        node.memory_mib = 8192;
        node.up = true;
        out.push_back(std::move(node));
    }
    return out;
}

std::vector<int> all(int count) {
    std::vector<int> out;
    for (int i = 0; i < count; ++i) {
        out.push_back(i);
    }
    return out;
}

PendingJob job(uint64_t id,
               ResourceRequest request,
               int64_t submit = 0,
               int64_t time_limit_s = -1) {
    PendingJob pending;
    pending.id = id;
    pending.submit_time = submit;
    pending.time_limit_s = time_limit_s;
    pending.request = request;
    return pending;
}

ResourceRequest tasks(uint32_t ntasks, uint32_t nodes = 0) {
    ResourceRequest request;
    request.ntasks = ntasks;
    request.nodes_min = nodes;
    return request;
}

// First fit on nodes as they are now: `busy` CPUs are taken on each node.
std::optional<Placement> fit_now(const ResourceRequest& request,
                                 const std::vector<NodeCapacity>& cluster,
                                 const std::vector<int>& eligible,
                                 const std::vector<int32_t>& busy = {}) {
    return place_tasks(request, eligible, [&](int index) {
        const NodeCapacity& node = cluster[static_cast<size_t>(index)];
        const int32_t used = busy.empty() ? 0 : busy[static_cast<size_t>(index)];
        return tasks_that_fit(request, node.cpus - used, node.memory_mib, node.gpus);
    });
}

Snapshot cluster_of(int count, int cpus) {
    Snapshot snapshot;
    snapshot.nodes = nodes(count, cpus);
    snapshot.partitions = {all(count)};
    return snapshot;
}

TEST(NodeFit, FixedNodeCountSpreadsTasksEvenly) {
    ResourceRequest request;
    request.nodes_min = 2;
    request.ntasks = 3;
    auto placement = fit_now(request, nodes(4, 4), all(4));
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->tasks_per_node, (std::vector<uint32_t>{2, 1}));
}

TEST(NodeFit, WithoutNodeCountTasksFillNodesInOrder) {
    ResourceRequest request;
    request.ntasks = 6;
    auto placement = fit_now(request, nodes(4, 4), all(4));
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->nodes, (std::vector<int>{0, 1}));
    EXPECT_EQ(placement->tasks_per_node, (std::vector<uint32_t>{4, 2}));
}

TEST(NodeFit, BusyNodesAreSkipped) {
    ResourceRequest request;
    auto placement = fit_now(request, nodes(4, 2), all(4), {2, 0, 0, 0});
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->nodes, (std::vector<int>{1}));
}

TEST(NodeFit, InfeasibleNamesWhatWasAskedAndWhatExists) {
    ResourceRequest request;
    request.nodes_min = 9;
    Status status = check_feasible(request, nodes(4, 2), all(4));
    EXPECT_EQ(status.code(), StatusCode::kInfeasible);
    EXPECT_NE(status.message().find("9 node(s)"), std::string::npos);
    EXPECT_NE(status.message().find("4 node(s) of at most 2 CPUs"), std::string::npos);
    request.nodes_min = 0;
    request.cpus_per_task = 3;
    EXPECT_FALSE(check_feasible(request, nodes(4, 2), all(4)));
    request.cpus_per_task = 2;
    EXPECT_TRUE(check_feasible(request, nodes(4, 2), all(4)));
}

// --hint=nomultithread on nodes of 4 cores x 2 threads: each CPU a task asks for takes a
// core, both its threads, and --mem-per-cpu counts each of them.
TEST(Plan, WholeCoreJobsHoldEveryThreadOfTheirCores) {
    Snapshot snapshot = cluster_of(2, 8);
    for (NodeCapacity& node : snapshot.nodes) {
        node.threads_per_core = 2;
    }
    snapshot.now = 1000;
    ResourceRequest three_cores = tasks(3, 1);
    three_cores.whole_cores = true;
    ResourceRequest one_core = tasks(1, 1);
    one_core.whole_cores = true;
    one_core.memory_mib_per_cpu = 100;
    ResourceRequest five_cores = tasks(5, 1);
    five_cores.whole_cores = true;
    snapshot.pending = {job(1, three_cores, 100), job(2, tasks(2, 1), 200), job(3, one_core, 300),
                        job(4, five_cores, 400)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 3u);
    EXPECT_EQ(decisions.starts[0].placement.cpus_per_node, (std::vector<int32_t>{6}));
    EXPECT_EQ(decisions.starts[1].placement.nodes, (std::vector<int>{0}));  // the last 2 CPUs
    EXPECT_EQ(decisions.starts[1].placement.cpus_per_node, (std::vector<int32_t>{2}));
    EXPECT_EQ(decisions.starts[2].placement.nodes, (std::vector<int>{1}));
    EXPECT_EQ(decisions.starts[2].placement.cpus_per_node, (std::vector<int32_t>{2}));
    EXPECT_EQ(decisions.starts[2].placement.memory_mib_per_node, 200);
    ASSERT_EQ(decisions.waits.size(), 1u);  // 5 cores: more than any node has left
    EXPECT_EQ(decisions.waits[0].job_id, 4u);
    EXPECT_FALSE(check_feasible(five_cores, snapshot.nodes, all(2))) << "5 cores > 4 per node";
    EXPECT_TRUE(check_feasible(tasks(5, 1), snapshot.nodes, all(2)));
}

TEST(Plan, StartsInPriorityOrderAndReportsWhyOthersWait) {
    Snapshot snapshot = cluster_of(1, 2);
    snapshot.now = 1000;
    snapshot.pending = {job(2, tasks(2), 500), job(1, tasks(2), 100), job(3, tasks(1), 900)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].job_id, 1u);  // equal priority: oldest first
    ASSERT_EQ(decisions.waits.size(), 2u);
    EXPECT_EQ(decisions.waits[0].job_id, 2u);
    EXPECT_EQ(decisions.waits[0].reason, WaitReason::kResources);
    EXPECT_EQ(decisions.waits[1].reason, WaitReason::kPriority);
}

TEST(Plan, HigherPriorityFirst) {
    Snapshot snapshot = cluster_of(1, 2);
    snapshot.pending = {job(1, tasks(2), 0), job(2, tasks(2), 50)};
    snapshot.pending[1].priority = 10;
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].job_id, 2u);
}

TEST(Plan, DoesNotOverCommitANode) {
    Snapshot snapshot = cluster_of(2, 2);
    for (uint64_t id = 1; id <= 6; ++id) {
        snapshot.pending.push_back(job(id, tasks(1)));
    }
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_EQ(decisions.starts.size(), 4u);
    EXPECT_EQ(decisions.waits.size(), 2u);
}

// Four 4-CPU nodes; a 4-node job runs on nodes 0-1 until t=100 (running), so the top job,
// which needs all four nodes, can start only at 100.
Snapshot busy_cluster() {
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.running.push_back({{0, 1}, {4, 4}, 0, 100, 0, {}});
    snapshot.pending.push_back(job(1, tasks(16, 4), 0, 100));  // top: all 4 nodes for 100 s
    return snapshot;
}

TEST(Backfill, EasyStartsAShortJobInAHoleStrictOrderLeavesIdle) {
    Snapshot snapshot = busy_cluster();
    snapshot.pending.push_back(job(2, tasks(8, 2), 1, 50));  // 2 free nodes, ends before 100
    EXPECT_TRUE(plan(snapshot, {BackfillPolicy::kNone}).starts.empty());
    Decisions easy = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(easy.starts.size(), 1u);
    EXPECT_EQ(easy.starts[0].job_id, 2u);
    ASSERT_EQ(easy.reservations.size(), 1u);
    EXPECT_EQ(easy.reservations[0].job_id, 1u);
    EXPECT_EQ(easy.reservations[0].start, 100);
}

TEST(Backfill, NeverDelaysTheTopReservation) {
    Snapshot snapshot = busy_cluster();
    snapshot.pending.push_back(job(2, tasks(8, 2), 1, 500));  // fits now, would run past 100
    Decisions easy = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_TRUE(easy.starts.empty());
    ASSERT_EQ(easy.reservations.size(), 1u);
    EXPECT_EQ(easy.reservations[0].start, 100);
}

TEST(Backfill, ConservativeNeverDelaysAnyReservation) {
    // Behind the top job (all nodes at 100-200): job 2 (2 nodes, 101 s) cannot finish in the
    // hole before 100 and is planned at 200 on nodes 0-1; job 3 (1 node, 150 s) neither, and
    // is planned beside job 2 at 200, never before it.
    Snapshot snapshot = busy_cluster();
    snapshot.pending.push_back(job(2, tasks(8, 2), 1, 101));
    snapshot.pending.push_back(job(3, tasks(4, 1), 2, 150));
    Decisions conservative = plan(snapshot, {BackfillPolicy::kConservative});
    EXPECT_TRUE(conservative.starts.empty());
    ASSERT_EQ(conservative.reservations.size(), 3u);
    EXPECT_EQ(conservative.reservations[0].start, 100);
    EXPECT_EQ(conservative.reservations[1].start, 200);
    EXPECT_EQ(conservative.reservations[2].start, 200);
    // EASY promises a start to the top job only.
    Decisions easy = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_TRUE(easy.starts.empty());
    EXPECT_EQ(easy.reservations.size(), 1u);
}

TEST(Backfill, AJobThatEndsExactlyAtAReservationFillsTheHole) {
    Snapshot snapshot = busy_cluster();
    snapshot.pending.push_back(job(2, tasks(8, 2), 1, 100));  // [0, 100) on nodes 2-3
    Decisions easy = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(easy.starts.size(), 1u);
    EXPECT_EQ(easy.starts[0].placement.nodes, (std::vector<int>{2, 3}));
}

TEST(Backfill, TimeMinLowersALimitToTheLongestThatStartsNow) {
    // Two nodes are busy until 1000, when the top job is planned on all four. A job of two
    // nodes asking two hours would delay it; with --time-min=5:00 it starts now, its limit
    // lowered to the longest whole minute from there that ends by 1000: 300 + 11 * 60.
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.running.push_back({{0, 1}, {4, 4}, 0, 1000, 0, {}});
    snapshot.pending.push_back(job(1, tasks(16, 4), 0, 100));
    PendingJob flexible = job(2, tasks(8, 2), 1, 7200);
    flexible.time_min_s = 300;
    snapshot.pending.push_back(flexible);
    PendingJob too_long = job(3, tasks(8, 2), 2, 7200);
    too_long.time_min_s = 1200;  // even its least runs past 1000
    snapshot.pending.push_back(too_long);

    Decisions easy = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(easy.starts.size(), 1u);
    EXPECT_EQ(easy.starts[0].job_id, 2u);
    EXPECT_EQ(easy.starts[0].time_limit_s, 960);
    EXPECT_EQ(easy.starts[0].placement.nodes, (std::vector<int>{2, 3}));
    ASSERT_EQ(easy.reservations.size(), 1u);
    EXPECT_EQ(easy.reservations[0].start, 1000);  // the top job is not delayed
    // A job that starts with its own limit keeps it.
    Snapshot idle = cluster_of(4, 4);
    idle.pending.push_back(flexible);
    Decisions now = plan(idle, {BackfillPolicy::kEasy});
    ASSERT_EQ(now.starts.size(), 1u);
    EXPECT_EQ(now.starts[0].time_limit_s, 0);
}

TEST(Backfill, JobsOnDownNodesNeverStart) {
    Snapshot snapshot = cluster_of(2, 2);
    snapshot.nodes[0].up = false;
    snapshot.pending.push_back(job(1, tasks(2, 2), 0, 10));
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_TRUE(decisions.starts.empty());
    EXPECT_TRUE(decisions.reservations.empty());  // no time makes a down node free
}

// Best fit by free GPUs: a 2-GPU job goes to the node with 2 GPUs free, not the empty one.
TEST(Plan, GpuJobTakesTheFullestNodeItFits) {
    Snapshot snapshot = cluster_of(3, 16);
    for (NodeCapacity& node : snapshot.nodes) {
        node.gpus = 8;
        node.gpu_type = "h100";
    }
    RunningAllocation busy;
    busy.nodes = {2};
    busy.cpus_per_node = {6};
    busy.gpus_per_node = 6;
    busy.expected_end = kForever;
    snapshot.running = {busy};
    ResourceRequest request = tasks(1);
    request.gpus_per_node = 2;
    snapshot.pending = {job(1, request)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{2});
}

TEST(Plan, GpuTypeLimitsTheNodes) {
    Snapshot snapshot = cluster_of(2, 16);
    snapshot.nodes[0].gpus = 4;
    snapshot.nodes[0].gpu_type = "a100";
    snapshot.nodes[1].gpus = 4;
    snapshot.nodes[1].gpu_type = "h100";
    ResourceRequest request = tasks(1);
    request.gpus_per_node = 1;
    request.gpu_type = "h100";
    snapshot.pending = {job(1, request)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{1});
    request.gpu_type = "v100";
    Status never = check_feasible(request, snapshot.nodes, all(2));
    EXPECT_EQ(never.code(), StatusCode::kInfeasible);
    EXPECT_NE(never.message().find("v100"), std::string::npos) << never.message();
}

// --exclusive: a node with one CPU taken is not whole, and the job holds every CPU and GPU
// of the node it gets, so nothing else starts there.
TEST(Plan, AWholeNodeJobTakesOnlyEmptyNodesAndHoldsAllOfThem) {
    Snapshot snapshot = cluster_of(3, 8);
    snapshot.nodes[1].gpus = 2;
    snapshot.running.push_back({{0}, {1}, 0, 1000, 0, {}});
    snapshot.running.push_back({{2}, {8}, 0, 1000, 0, {}});
    ResourceRequest whole = tasks(1);
    whole.whole_node = true;
    snapshot.pending = {job(1, whole), job(2, tasks(8), 1)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{1});
    EXPECT_EQ(decisions.starts[0].placement.cpus_per_node, std::vector<int32_t>{8});
    EXPECT_EQ(decisions.starts[0].placement.gpus_per_node, 2);
    ASSERT_EQ(decisions.waits.size(), 1u);  // no node has 8 CPUs free beside it
    EXPECT_EQ(decisions.waits[0].job_id, 2u);
}

// --mem-per-cpu: memory bounds the tasks a node takes, and the job holds it per CPU.
TEST(Plan, MemoryPerCpuFollowsTheCpusPlaced) {
    Snapshot snapshot = cluster_of(2, 8);  // 8192 MiB each
    ResourceRequest request = tasks(6);
    request.memory_mib_per_cpu = 2048;
    snapshot.pending = {job(1, request)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].placement.tasks_per_node, (std::vector<uint32_t>{4, 2}));
    EXPECT_EQ(decisions.starts[0].placement.memory_mib_per_node, 4 * 2048);
}

// --mem=0 asks for all of a node's memory: a node where another job holds some is not used.
TEST(Plan, AllOfANodesMemoryNeedsANodeWithNoneHeld) {
    Snapshot snapshot = cluster_of(2, 8);
    snapshot.running.push_back({{0}, {1}, 100, 1000, 0, {}});
    ResourceRequest request = tasks(1);
    request.whole_node_memory = true;
    snapshot.pending = {job(1, request)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{1});
    EXPECT_EQ(decisions.starts[0].placement.memory_mib_per_node, 8192);
}

// -O: more tasks than CPUs, each node giving the CPUs of one task; --mincpus raises that.
TEST(Plan, OvercommitPlacesMoreTasksThanCpus) {
    Snapshot snapshot = cluster_of(1, 4);
    ResourceRequest request = tasks(16);
    request.overcommit = true;
    request.min_cpus_per_node = 2;
    snapshot.pending = {job(1, request)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kNone});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].placement.tasks_per_node, std::vector<uint32_t>{16});
    EXPECT_EQ(decisions.starts[0].placement.cpus_per_node, std::vector<int32_t>{2});
}

// -L: a job waits, with Slurm's reason, while others hold the licenses it needs.
TEST(Plan, LicensesInUseMakeAJobWait) {
    Snapshot snapshot = cluster_of(2, 8);
    snapshot.limits.push_back({"Licenses", LimitedResource::kLicense, 3, 2});
    PendingJob first = job(1, tasks(1));
    first.licenses = {{0, 1}};
    PendingJob second = job(2, tasks(1), 1);
    second.licenses = {{0, 1}};
    snapshot.pending = {first, second};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].job_id, 1u);
    ASSERT_EQ(decisions.waits.size(), 1u);
    EXPECT_EQ(wait_reason_name(decisions.waits[0], snapshot.limits), "Licenses");
}

// --gres=nvme:N: only node 0 has any (20). A running job holds 15 until 1000, so a job
// needing 10 is planned for 1000 there; one needing 5 starts now beside it, since 5 are
// still free at 1000 too; a second one finds none left and waits.
TEST(Plan, GenericResourcesBoundWhatANodeTakesOverTime) {
    Snapshot snapshot = cluster_of(2, 8);
    snapshot.nodes[0].gres = {20};
    snapshot.running.push_back({{0}, {1}, 0, 1000, 0, {{0, 15}}});
    const auto asking = [](int64_t nvme) {
        ResourceRequest request = tasks(1);
        request.gres_per_node = {{0, nvme}};
        return request;
    };
    snapshot.pending = {job(1, asking(10), 0, 100), job(2, asking(5), 1), job(3, asking(5), 2)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].job_id, 2u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{0});
    ASSERT_EQ(decisions.reservations.size(), 1u);
    EXPECT_EQ(decisions.reservations[0].job_id, 1u);
    EXPECT_EQ(decisions.reservations[0].start, 1000);
    EXPECT_EQ(decisions.reservations[0].placement.nodes, std::vector<int>{0});
    ASSERT_EQ(decisions.waits.size(), 2u);
    EXPECT_EQ(decisions.waits[1].job_id, 3u);

    EXPECT_TRUE(check_feasible(asking(20), snapshot.nodes, all(2)));
    EXPECT_EQ(check_feasible(asking(21), snapshot.nodes, all(2)).code(), StatusCode::kInfeasible);
}

// Heterogeneous jobs: components of one job (het_leader) start together or not at all.
PendingJob component(uint64_t id, uint64_t leader, ResourceRequest request, int64_t limit) {
    PendingJob pending = job(id, request, 0, limit);
    pending.het_leader = leader;
    return pending;
}

TEST(HetJob, ComponentsThatAllFitStartTogether) {
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.pending = {component(10, 10, tasks(4, 1), 100), component(11, 10, tasks(8, 2), 100)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(decisions.starts.size(), 2u);
    EXPECT_EQ(decisions.starts[0].job_id, 10u);
    EXPECT_EQ(decisions.starts[1].job_id, 11u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{0});
    EXPECT_EQ(decisions.starts[1].placement.nodes, (std::vector<int>{1, 2}));
}

// Components never share a node, as in Slurm: component 11 could fit beside component 10
// on node 0 but takes node 1; with every other node busy until 100 it waits for one, and
// both are reserved then, on two nodes.
TEST(HetJob, ComponentsNeverShareANode) {
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.pending = {component(10, 10, tasks(1, 1), 100), component(11, 10, tasks(1, 1), 100)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(decisions.starts.size(), 2u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, std::vector<int>{0});
    EXPECT_EQ(decisions.starts[1].placement.nodes, std::vector<int>{1});

    snapshot.running.push_back({{1, 2, 3}, {4, 4, 4}, 0, 100, 0, {}});
    decisions = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_TRUE(decisions.starts.empty());
    ASSERT_EQ(decisions.reservations.size(), 2u);
    EXPECT_EQ(decisions.reservations[0].start, 100);
    EXPECT_EQ(decisions.reservations[1].start, 100);
    EXPECT_NE(decisions.reservations[0].placement.nodes, decisions.reservations[1].placement.nodes);
}

TEST(HetJob, NoComponentStartsAloneAndWaitingHoldsNothingIdle) {
    // Node 0 is busy until 100. Alone, either component would start now on nodes 1-3; together
    // they need all four nodes, so both are reserved at 100 and start nothing now. Job 20,
    // of component 11's shape and ending by 100, backfills the nodes they would have idled:
    // the pass forgot that this shape failed while component 10 was tentatively held.
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.running.push_back({{0}, {4}, 0, 100, 0, {}});
    snapshot.pending = {component(10, 10, tasks(4, 1), 100), component(11, 10, tasks(3, 3), 100),
                        job(20, tasks(3, 3), 5, 100)};
    snapshot.pending[0].priority = snapshot.pending[1].priority = 10;
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    ASSERT_EQ(decisions.starts.size(), 1u);
    EXPECT_EQ(decisions.starts[0].job_id, 20u);
    EXPECT_EQ(decisions.starts[0].placement.nodes, (std::vector<int>{1, 2, 3}));
    ASSERT_EQ(decisions.reservations.size(), 2u);
    EXPECT_EQ(decisions.reservations[0].job_id, 10u);
    EXPECT_EQ(decisions.reservations[1].job_id, 11u);
    EXPECT_EQ(decisions.reservations[0].start, 100);
    EXPECT_EQ(decisions.reservations[1].start, 100);
    ASSERT_EQ(decisions.waits.size(), 2u);
    EXPECT_EQ(decisions.waits[0].reason, WaitReason::kResources);
    EXPECT_EQ(decisions.waits[1].reason, WaitReason::kResources);
}

TEST(HetJob, ComponentsAreReservedAtOneCommonStart) {
    // Nodes 0-1 free at 100, node 2 at 300, node 3 now. Alone, component 10 could start now
    // and component 11 (three nodes) at 100; at 100 the two do not fit side by side, so both
    // are reserved at 300, the next change of what they ask for at which both fit.
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.running.push_back({{0, 1}, {4, 4}, 0, 100, 0, {}});
    snapshot.running.push_back({{2}, {4}, 0, 300, 0, {}});
    snapshot.pending = {component(10, 10, tasks(4, 1), 1000),
                        component(11, 10, tasks(12, 3), 1000)};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_TRUE(decisions.starts.empty());
    ASSERT_EQ(decisions.reservations.size(), 2u);
    EXPECT_EQ(decisions.reservations[0].start, 300);
    EXPECT_EQ(decisions.reservations[1].start, 300);
    std::vector<int> nodes = decisions.reservations[0].placement.nodes;
    const auto& more = decisions.reservations[1].placement.nodes;
    nodes.insert(nodes.end(), more.begin(), more.end());
    std::sort(nodes.begin(), nodes.end());
    EXPECT_EQ(nodes, (std::vector<int>{0, 1, 2, 3}));
}

TEST(HetJob, ALimitOnAnyComponentHoldsTheWholeJob) {
    Snapshot snapshot = cluster_of(4, 4);
    snapshot.limits.push_back({"QOSMaxJobsPerUserLimit", LimitedResource::kJobs, 1, 0});
    snapshot.pending = {component(10, 10, tasks(4, 1), 100), component(11, 10, tasks(4, 1), 100)};
    snapshot.pending[0].limits = {0};
    snapshot.pending[1].limits = {0};
    Decisions decisions = plan(snapshot, {BackfillPolicy::kEasy});
    EXPECT_TRUE(decisions.starts.empty());
    ASSERT_EQ(decisions.waits.size(), 2u);
    EXPECT_EQ(decisions.waits[0].reason, WaitReason::kLimit);
    EXPECT_EQ(decisions.waits[1].reason, WaitReason::kLimit);
}

}  // namespace
}  // namespace cohort::sched
