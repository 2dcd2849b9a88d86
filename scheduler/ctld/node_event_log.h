// The spans of time each node gives no service, as `cohort report cluster utilization` counts
// them (sreport's Down and PLND Down): DOWN while the node is down or drained with no job left,
// MAINT while a maintenance reservation holds it. The controller shows it every node once a
// tick; it answers with the events that began or ended, for the accounting store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accounting/accounting_store.h"

namespace cohort::ctld {

inline constexpr std::string_view kNodeLostDown = "DOWN";
inline constexpr std::string_view kNodeLostMaintenance = "MAINT";

// One node as the controller sees it now.
struct NodeService {
    std::string_view node;
    std::string_view lost_as;  // "" in service, else kNodeLostDown or kNodeLostMaintenance
    std::string_view reason;
    int64_t cpus = 0;
    int64_t gpus = 0;
    bool known = true;  // false: not registered since this controller started, so unchanged
};

class NodeEventLog {
public:
    // Whether it has the events a previous controller left open (adopt()).
    bool ready() const { return ready_; }

    // The open events the store holds: they go on from their start, or end at the next look.
    void adopt(std::vector<accounting::NodeEvent> open);
    // The events that begin or end with the nodes as they are `now`. A node whose kind of lost
    // time changes ends one event and begins the next. At the first look after adopt(), an
    // adopted event of a node no longer among `nodes` (gone from the config) ends.
    std::vector<accounting::NodeEvent> observe(const std::vector<NodeService>& nodes, int64_t now);

private:
    bool ready_ = false;
    bool first_look_ = true;
    std::unordered_map<std::string, accounting::NodeEvent> open_;  // by node
};

}  // namespace cohort::ctld
