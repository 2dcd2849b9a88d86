// Which nodes of its partition a job may use: -w/--nodelist (only those), -x/--exclude (not
// those), -C/--constraint over node features (a matching OR, `[a|b]`, picks one alternative
// for all the job's nodes) and --prefer (matching nodes are tried first). Submission checks
// and the scheduling pass share it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/node_features.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

struct NodeChoice {
    std::vector<std::string> nodelist;  // empty: any node of the partition
    std::vector<std::string> exclude;
    std::optional<FeatureExpr> constraint;
    std::optional<FeatureExpr> prefer;
    uint32_t nodes_needed = 1;

    bool any_node() const { return nodelist.empty() && exclude.empty() && !constraint && !prefer; }
};

// Parses the job's -C and --prefer; errors name the option.
Result<NodeChoice> node_choice(const std::vector<std::string>& nodelist,
                               const std::vector<std::string>& exclude,
                               const std::string& constraint,
                               const std::string& prefer,
                               uint32_t nodes_needed);

// `members` (indexes into `nodes`) the job may use, in the order to try them. A matching OR
// takes its first alternative with nodes_needed nodes (up ones, unless `count_down_nodes`).
std::vector<int> eligible_nodes(const std::vector<int>& members,
                                const NodeChoice& choice,
                                const ClusterConfig& config,
                                const std::vector<sched::NodeCapacity>& nodes,
                                bool count_down_nodes);

}  // namespace cohort::ctld
