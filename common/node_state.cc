// Names of node states.
#include "common/node_state.h"

#include <array>

namespace cohort {

std::string_view node_state_name(NodeState state) {
    static constexpr std::array<std::string_view, 5> kNames = {"UNKNOWN", "IDLE", "MIXED",
                                                               "ALLOCATED", "DOWN"};
    return kNames.at(static_cast<size_t>(state));
}

std::string_view node_state_label(NodeState state, bool drain, bool has_jobs) {
    if (!drain || state == NodeState::kDown) {
        return node_state_name(state);
    }
    return has_jobs ? "DRAINING" : "DRAINED";
}

}  // namespace cohort
