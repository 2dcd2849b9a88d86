// Heartbeats as they arrive on the I/O thread, kept for the controller's next tick. A
// heartbeat only says "still here" (and which jobs run), so a tick's delay costs nothing,
// while waking the controller's thread for each would cost a context switch per heartbeat:
// thousands a second at 10,000 nodes.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "common/protocol/messages.h"

namespace cohort::ctld {

class HeartbeatInbox {
public:
    void add(protocol::HeartbeatMessage message) {
        std::lock_guard lock(mutex_);
        arrived_.push_back(std::move(message));
    }

    // Every heartbeat added since the last call, oldest first.
    std::vector<protocol::HeartbeatMessage> take() {
        std::lock_guard lock(mutex_);
        return std::exchange(arrived_, {});
    }

private:
    std::mutex mutex_;
    std::vector<protocol::HeartbeatMessage> arrived_;
};

}  // namespace cohort::ctld
