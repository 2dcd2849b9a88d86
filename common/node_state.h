// Node states, with the names sinfo prints.
#pragma once

#include <cstdint>
#include <string_view>

namespace cohort {

enum class NodeState : uint8_t {
    kUnknown,    // configured, its agent not yet registered
    kIdle,       // no CPU allocated
    kMixed,      // some CPUs allocated
    kAllocated,  // every CPU allocated
    kDown,       // not responding, or its agent lost its jobs
};

// "UNKNOWN", "IDLE", "MIXED", "ALLOCATED", "DOWN".
std::string_view node_state_name(NodeState state);
// What sinfo prints for a node that may be drained: DOWN stays "DOWN"; a drained node is
// "DRAINING" while it still runs jobs and "DRAINED" once it runs none.
std::string_view node_state_label(NodeState state, bool drain, bool has_jobs);

}  // namespace cohort
