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

}  // namespace cohort
