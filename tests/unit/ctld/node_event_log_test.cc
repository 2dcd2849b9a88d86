// NodeEventLog: when a node's lost time begins and ends, as the utilization report counts it.
#include "scheduler/ctld/node_event_log.h"

#include <gtest/gtest.h>

namespace cohort::ctld {
namespace {

NodeService down(std::string_view node, std::string_view reason = "Not responding") {
    return {node, kNodeLostDown, reason, 8, 2};
}

NodeService serving(std::string_view node) {
    return {node, "", "", 8, 2};
}

TEST(NodeEventLog, ANodeDownThenBackIsOneEventOpenedThenClosed) {
    NodeEventLog log;
    log.adopt({});
    EXPECT_TRUE(log.observe({serving("node1"), serving("node2")}, 100).empty());

    auto begun = log.observe({down("node1"), serving("node2")}, 110);
    ASSERT_EQ(begun.size(), 1u);
    EXPECT_EQ(begun[0].node, "node1");
    EXPECT_EQ(begun[0].start, 110);
    EXPECT_EQ(begun[0].end, 0);
    EXPECT_EQ(begun[0].state, "DOWN");
    EXPECT_EQ(begun[0].reason, "Not responding");
    EXPECT_EQ(begun[0].cpus, 8);
    // Still down, even with another reason: nothing new.
    EXPECT_TRUE(log.observe({down("node1", "drained"), serving("node2")}, 120).empty());

    auto ended = log.observe({serving("node1"), serving("node2")}, 130);
    ASSERT_EQ(ended.size(), 1u);
    EXPECT_EQ(ended[0].start, 110);
    EXPECT_EQ(ended[0].end, 130);
}

TEST(NodeEventLog, MaintenanceAfterDownEndsOneEventAndBeginsTheNext) {
    NodeEventLog log;
    log.adopt({});
    log.observe({down("node1")}, 100);
    auto changed =
            log.observe({{"node1", kNodeLostMaintenance, "maintenance reservation m", 8, 2}}, 150);
    ASSERT_EQ(changed.size(), 2u);
    EXPECT_EQ(changed[0].state, "DOWN");
    EXPECT_EQ(changed[0].end, 150);
    EXPECT_EQ(changed[1].state, "MAINT");
    EXPECT_EQ(changed[1].start, 150);
    EXPECT_EQ(changed[1].end, 0);
}

TEST(NodeEventLog, AnAdoptedEventGoesOnAndAnUnregisteredNodeChangesNothing) {
    NodeEventLog log;
    EXPECT_FALSE(log.ready());
    log.adopt({{"node1", 50, 0, "DOWN", "Not responding", 8, 2}});
    EXPECT_TRUE(log.ready());
    // Not registered since the restart: its event neither ends nor does one begin.
    NodeService unknown = serving("node1");
    unknown.known = false;
    EXPECT_TRUE(log.observe({unknown}, 60).empty());
    EXPECT_TRUE(log.observe({down("node1")}, 70).empty());  // the same event, from 50
    auto ended = log.observe({serving("node1")}, 80);
    ASSERT_EQ(ended.size(), 1u);
    EXPECT_EQ(ended[0].start, 50);
    EXPECT_EQ(ended[0].end, 80);
}

TEST(NodeEventLog, AnAdoptedEventOfANodeGoneFromTheConfigEndsAtTheFirstLook) {
    NodeEventLog log;
    log.adopt({{"node9", 50, 0, "DOWN", "retired", 8, 0}});
    auto ended = log.observe({serving("node1")}, 90);
    ASSERT_EQ(ended.size(), 1u);
    EXPECT_EQ(ended[0].node, "node9");
    EXPECT_EQ(ended[0].end, 90);
    EXPECT_TRUE(log.observe({serving("node1")}, 100).empty());
}

}  // namespace
}  // namespace cohort::ctld
