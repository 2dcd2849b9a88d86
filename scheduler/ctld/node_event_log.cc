#include "scheduler/ctld/node_event_log.h"

#include <unordered_set>

namespace cohort::ctld {

void NodeEventLog::adopt(std::vector<accounting::NodeEvent> open) {
    for (accounting::NodeEvent& event : open) {
        std::string node = event.node;
        open_[std::move(node)] = std::move(event);
    }
    ready_ = true;
}

std::vector<accounting::NodeEvent> NodeEventLog::observe(const std::vector<NodeService>& nodes,
                                                         int64_t now) {
    std::vector<accounting::NodeEvent> changed;
    if (first_look_) {
        first_look_ = false;
        std::unordered_set<std::string_view> configured;
        for (const NodeService& service : nodes) {
            configured.insert(service.node);
        }
        for (auto it = open_.begin(); it != open_.end();) {
            if (configured.contains(it->first)) {
                ++it;
                continue;
            }
            it->second.end = now;
            changed.push_back(std::move(it->second));
            it = open_.erase(it);
        }
    }
    for (const NodeService& service : nodes) {
        if (!service.known) {
            continue;
        }
        auto open = open_.find(std::string(service.node));
        const bool was_lost = open != open_.end();
        if (was_lost && open->second.state == service.lost_as) {
            continue;
        }
        if (was_lost) {
            open->second.end = now;
            changed.push_back(std::move(open->second));
            open_.erase(open);
        }
        if (!service.lost_as.empty()) {
            accounting::NodeEvent begun{std::string(service.node),
                                        now,
                                        0,
                                        std::string(service.lost_as),
                                        std::string(service.reason),
                                        service.cpus,
                                        service.gpus};
            changed.push_back(begun);
            open_.emplace(begun.node, std::move(begun));
        }
    }
    return changed;
}

}  // namespace cohort::ctld
