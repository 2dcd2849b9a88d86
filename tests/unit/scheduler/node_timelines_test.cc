// The node timelines a caller keeps between passes, and a pass planned over them.
#include "scheduler/backfill/node_timelines.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "scheduler/backfill/plan.h"

namespace cohort::sched {
namespace {

std::vector<NodeCapacity> timeline_nodes(int count, int cpus) {
    std::vector<NodeCapacity> out;
    for (int i = 0; i < count; ++i) {
        NodeCapacity node;
        node.name = "n" + std::to_string(i);
        node.cpus = cpus;
        node.memory_mib = 4096;
        node.up = true;
        out.push_back(std::move(node));
    }
    return out;
}

TEST(NodeTimelines, JobsTakeTheirNodesUntilTheyEndOrAreExtended) {
    NodeTimelines timelines(timeline_nodes(2, 8), 0);
    timelines.add(7, {{0, 1}, {8, 2}, 1024, 100, 0, {}}, 0);
    EXPECT_EQ(timelines.cpus_unheld(0), 0);
    EXPECT_EQ(timelines.cpus_unheld(1), 6);
    EXPECT_EQ(timelines.node(0).cpus.free_at(99), 0);
    EXPECT_EQ(timelines.node(0).cpus.free_at(100), 8);
    EXPECT_EQ(timelines.node(1).memory.free_at(50), 3072);
    EXPECT_EQ(timelines.cpus_total().free_at(50), 6);

    timelines.extend(7, 150);  // it outlived its expected end
    EXPECT_EQ(timelines.node(0).cpus.free_at(120), 0);
    EXPECT_EQ(timelines.cpus_total().free_at(120), 6);
    timelines.extend(7, 140);  // never shortened
    EXPECT_EQ(timelines.node(0).cpus.free_at(145), 0);

    timelines.forget_before(120);
    timelines.remove(7);
    EXPECT_EQ(timelines.cpus_unheld(0), 8);
    EXPECT_EQ(timelines.node(0).cpus.free_at(120), 8);
    EXPECT_EQ(timelines.node(1).memory.free_at(130), 4096);
    EXPECT_EQ(timelines.cpus_total().free_at(120), 16);
    EXPECT_EQ(timelines.node(0).cpus.breakpoints(), 1u);
    timelines.remove(7);  // not held: nothing changes
    EXPECT_EQ(timelines.cpus_unheld(0), 8);
}

// A pass's holds are subtracted where and when they hold, in every read of the node.
TEST(HeldNode, ReadsTheCommittedProfilesLessThePassHolds) {
    NodeTimelines timelines(timeline_nodes(1, 8), 0);
    timelines.add(1, {{0}, {4}, 0, 100, 0, {}}, 0);  // 4 free until 100, then 8
    const std::vector<PassHold> holds = {{0, 50, 2, 1024, 0, {}}, {150, 200, 6, 0, 0, {}}};
    const HeldNode node(timelines.node(0), holds);
    EXPECT_EQ(node.min_free(NodeResource::kCpus, 0, 10), 2);
    EXPECT_EQ(node.min_free(NodeResource::kCpus, 50, 50), 4);
    EXPECT_EQ(node.min_free(NodeResource::kCpus, 100, 40), 8);
    EXPECT_EQ(node.min_free(NodeResource::kCpus, 120, 40), 2);  // the second hold starts inside
    EXPECT_EQ(node.min_free(NodeResource::kMemory, 10, 10), 3072);
    EXPECT_EQ(node.min_free(NodeResource::kMemory, 60, 10), 4096);

    EXPECT_EQ(node.earliest_start(NodeResource::kCpus, 0, 10, 4), 50);
    EXPECT_EQ(node.earliest_start(NodeResource::kCpus, 0, 40, 8), 100);
    EXPECT_EQ(node.earliest_start(NodeResource::kCpus, 0, 60, 8), 200);  // the hold at 150
    EXPECT_EQ(node.earliest_start(NodeResource::kCpus, 0, 60, 6), 200);  // not across [150,200)
    EXPECT_EQ(node.earliest_start(NodeResource::kCpus, 0, 10, 9), INT64_MAX);

    std::vector<int64_t> changes;
    EXPECT_TRUE(node.append_changes_between(NodeResource::kCpus, 0, 150, changes));
    std::sort(changes.begin(), changes.end());
    EXPECT_EQ(changes, (std::vector<int64_t>{50, 100, 150}));
    changes.clear();
    EXPECT_FALSE(node.append_changes_between(NodeResource::kCpus, 150, 1000, changes));
    EXPECT_EQ(changes, (std::vector<int64_t>{200}));
}

// A pass over timelines kept by the caller decides exactly what a pass that builds them from
// the snapshot's running jobs decides: random clusters, queues and both backfill policies.
TEST(NodeTimelines, APassOverKeptTimelinesDecidesAsOneBuiltFromTheSnapshot) {
    std::mt19937 random(20261204);
    for (int round = 0; round < 40; ++round) {
        const int64_t now = 1000;
        Snapshot snapshot;
        snapshot.now = now;
        snapshot.nodes = timeline_nodes(24, 8);
        snapshot.nodes[5].up = false;
        snapshot.partitions = {{}};
        for (int i = 0; i < 24; ++i) {
            snapshot.partitions[0].push_back(i);
        }
        // Kept timelines start earlier and have seen jobs come and go.
        NodeTimelines kept(snapshot.nodes, 0);
        kept.add(9999, {{3}, {8}, 0, 900, 0, {}}, 100);
        kept.remove(9999);
        std::vector<int32_t> free(24, 8);
        for (uint64_t id = 0; id < 30; ++id) {
            const int node = static_cast<int>(random() % 24);
            const int32_t cpus = static_cast<int32_t>(1 + random() % 4);
            if (free[static_cast<size_t>(node)] < cpus) {
                continue;
            }
            free[static_cast<size_t>(node)] -= cpus;
            RunningAllocation running{
                    {node}, {cpus}, 0, now + 1 + static_cast<int64_t>(random() % 5000), 0, {}};
            snapshot.running.push_back(running);
            kept.add(id, running, now - static_cast<int64_t>(random() % 500));
        }
        for (uint64_t id = 100; id < 160; ++id) {
            PendingJob job;
            job.id = id;
            job.submit_time = static_cast<int64_t>(id);
            job.time_limit_s = 60 + static_cast<int64_t>(random() % 6000);
            job.request.ntasks = 1 + random() % 40;
            job.request.nodes_min = random() % 3 == 0 ? 1 + random() % 4 : 0;
            snapshot.pending.push_back(job);
        }
        for (BackfillOptions options : {BackfillOptions{BackfillPolicy::kEasy},
                                        BackfillOptions{BackfillPolicy::kConservative}}) {
            const Decisions built = plan(snapshot, options);
            PlanPass pass(snapshot, options, &kept);
            const Decisions over_kept = pass.step({});
            ASSERT_EQ(built.starts.size(), over_kept.starts.size()) << "round " << round;
            for (size_t i = 0; i < built.starts.size(); ++i) {
                EXPECT_EQ(built.starts[i].job_id, over_kept.starts[i].job_id);
                EXPECT_EQ(built.starts[i].placement.nodes, over_kept.starts[i].placement.nodes);
                EXPECT_EQ(built.starts[i].placement.cpus_per_node,
                          over_kept.starts[i].placement.cpus_per_node);
            }
            ASSERT_EQ(built.reservations.size(), over_kept.reservations.size());
            for (size_t i = 0; i < built.reservations.size(); ++i) {
                EXPECT_EQ(built.reservations[i].job_id, over_kept.reservations[i].job_id);
                EXPECT_EQ(built.reservations[i].start, over_kept.reservations[i].start);
            }
            EXPECT_EQ(built.waits.size(), over_kept.waits.size());
            EXPECT_EQ(std::move(pass).release_snapshot().pending.size(), snapshot.pending.size());
        }
    }
}

}  // namespace
}  // namespace cohort::sched
