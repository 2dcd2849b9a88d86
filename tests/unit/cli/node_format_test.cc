// sinfo's rows and columns, against what Debian's sinfo 22.05 prints for the same cluster:
// node[1-8] in partition debug (the default), node[1-4] also in gpu, node2 drained, the
// others not yet registered.
#include "cli/node_format.h"

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

ClusterConfig cluster() {
    ClusterConfig config;
    PartitionConfig debug;
    debug.name = "debug";
    debug.is_default = true;
    PartitionConfig gpu;
    gpu.name = "gpu";
    for (int i = 1; i <= 8; ++i) {
        config.nodes.push_back("node" + std::to_string(i));
        debug.nodes.push_back(config.nodes.back());
        if (i <= 4) {
            gpu.nodes.push_back(config.nodes.back());
        }
    }
    config.partitions = {debug, gpu};
    config.node_features["node1"] = {"gpu", "V100"};
    return config;
}

std::vector<protocol::NodeInfo> nodes() {
    std::vector<protocol::NodeInfo> out;
    for (int i = 1; i <= 8; ++i) {
        protocol::NodeInfo node;
        node.name = "node" + std::to_string(i);
        node.state = NodeState::kUnknown;
        node.resources.cpus = 128;
        node.resources.memory_mib = 1000000;
        node.resources.gpus = 16;
        node.resources.gpu_type = "v100";
        out.push_back(node);
    }
    out[1].drain = true;
    return out;
}

std::vector<std::string> lines(const std::string& format, bool node_oriented, bool header) {
    auto fields = format.empty() ? default_node_format(node_oriented) : *parse_node_format(format);
    return node_lines(fields, nodes(), cluster(), node_oriented, header);
}

TEST(NodeFormat, DefaultRowsAreAPartitionsNodesInTheSameState) {
    EXPECT_EQ(lines("", false, true),
              (std::vector<std::string>{"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
                                        "debug*       up   infinite      1  drain node2",
                                        "debug*       up   infinite      7    unk node[1,3-8]",
                                        "gpu          up   infinite      1  drain node2",
                                        "gpu          up   infinite      3    unk node[1,3-4]"}));
}

TEST(NodeFormat, NodeOrientedRowsAreOneANodeAndPartition) {
    const std::vector<std::string> out = lines("", true, true);
    ASSERT_EQ(out.size(), 13u);
    // As sinfo 22.05 printed it for these nodes.
    EXPECT_EQ(out[0], "NODELIST   NODES PARTITION STATE ");
    EXPECT_EQ(out[1], "node1          1    debug* unk   ");
    EXPECT_EQ(out[2], "node1          1       gpu unk   ");
    EXPECT_EQ(out[3], "node2          1    debug* drain ");
}

// Without a partition's field, every node counts once: what `sinfo -h -o %D` polls.
TEST(NodeFormat, FieldsWithoutAPartitionCountEachNodeOnce) {
    EXPECT_EQ(lines("%D", false, false), std::vector<std::string>{"8"});
    EXPECT_EQ(lines("%P|%c|%G|%f|%C", false, true)[1],
              "debug*|128|gpu:v100:16|gpu,V100,v100|0/128/0/128");
}

// sinfo -s: one line per partition, its nodes counted as allocated/idle/other/total (drained
// and not yet registered nodes are "other").
TEST(NodeFormat, SummaryIsOneLinePerPartitionWithNodeCountsByState) {
    auto rows = node_lines(default_node_format(false, NodeListing::kSummary), nodes(), cluster(),
                           false, true);
    EXPECT_EQ(rows,
              (std::vector<std::string>{"PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T)  NODELIST",
                                        "debug*       up   infinite          0/0/8/8  node[1-8]",
                                        "gpu          up   infinite          0/0/4/4  node[1-4]"}));
    std::vector<protocol::NodeInfo> busy = nodes();
    busy[0].state = NodeState::kMixed;
    busy[2].state = NodeState::kIdle;
    busy[3].state = NodeState::kAllocated;
    EXPECT_EQ(node_lines(*parse_node_format("%R %F"), busy, cluster(), false, false),
              (std::vector<std::string>{"debug 2/1/5/8", "gpu 2/1/1/4"}));
}

// sinfo -l's columns, and -N -l's, as sinfo 22.05 heads them (OVERSUBSCRIBE cut to 8).
TEST(NodeFormat, LongListingsHaveSlurmsColumns) {
    auto rows = node_lines(default_node_format(false, NodeListing::kLong), nodes(), cluster(),
                           false, true);
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[0],
              "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
              "NODELIST");
    EXPECT_EQ(rows[1],
              "debug*       up   infinite 1-infinite   no       NO        all      1     DRAINED "
              "node2");
    EXPECT_EQ(rows[2],
              "debug*       up   infinite 1-infinite   no       NO        all      7     UNKNOWN "
              "node[1,3-8]");
    rows = node_lines(default_node_format(true, NodeListing::kLong), nodes(), cluster(), true,
                      true);
    EXPECT_EQ(
            rows[0],
            "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE "
            "REASON              ");
}

TEST(NodeFormat, BadCodesAreRefusedNamingThem) {
    auto parsed = parse_node_format("%P %Q");
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.status().message().find("--format: invalid field in '%P %Q' at '%Q'"),
              std::string::npos)
            << parsed.status().message();
}

}  // namespace
}  // namespace cohort::cli
