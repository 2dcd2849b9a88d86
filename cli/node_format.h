// sinfo's output: -o/--format codes ("%P %.5a %.10l %.6D %.6t %N"), rows of nodes that print
// alike grouped per partition (or one row per node with -N), and the header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/protocol/job_types.h"
#include "common/status.h"

namespace cohort::cli {

struct NodeField {
    char code = 0;       // sinfo's letter: 'P' partition, 'D' node count, 't' state, ...
    size_t width = 0;    // 0: as wide as the value
    bool right = false;  // "%.6D": right-justified
    bool fit = false;    // "%#P": as wide as the widest value
    std::string literal;
};

enum class NodeListing {
    kDefault,
    kSummary,  // -s: "%#P %.5a %.10l %.16F  %N", one line per partition
    kLong,     // -l: "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N" (-N: its own)
};

// sinfo's formats: the default, "%#P %.5a %.10l %.6D %.6t %N" (-N: "%#N %.6D %#P %6t"),
// and those of -s and -l.
std::vector<NodeField> default_node_format(bool node_oriented,
                                           NodeListing listing = NodeListing::kDefault);
Result<std::vector<NodeField>> parse_node_format(std::string_view format);

// The lines sinfo prints for `nodes` under `config`'s partitions: with the header unless
// `header` is false; one row per node and partition when `node_oriented`, else one per group
// of a partition's nodes whose fields print the same.
std::vector<std::string> node_lines(const std::vector<NodeField>& fields,
                                    const std::vector<protocol::NodeInfo>& nodes,
                                    const ClusterConfig& config,
                                    bool node_oriented,
                                    bool header);

}  // namespace cohort::cli
