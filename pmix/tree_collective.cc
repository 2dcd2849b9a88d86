// The tree collective's state machine.
#include "pmix/tree_collective.h"

#include <algorithm>

namespace cohort::pmix {

TreeShape TreeShape::over(const std::vector<uint32_t>& nodes, uint32_t self, uint32_t fanout) {
    TreeShape shape;
    const auto found = std::find(nodes.begin(), nodes.end(), self);
    const size_t position = found == nodes.end() ? 0 : static_cast<size_t>(found - nodes.begin());
    const size_t k = std::max<uint32_t>(fanout, 1);
    shape.is_root = position == 0;
    if (!shape.is_root) {
        shape.parent = nodes[(position - 1) / k];
    }
    for (size_t child = position * k + 1; child <= position * k + k && child < nodes.size();
         ++child) {
        shape.children.push_back(nodes[child]);
    }
    return shape;
}

TreeCollectives::TreeCollectives(uint32_t self, uint32_t fanout) : self_(self), fanout_(fanout) {}

TreeCollectives::Actions TreeCollectives::contribute(const std::string& collective,
                                                     const std::vector<uint32_t>& nodes,
                                                     std::string data) {
    const RoundKey key{collective, next_sequence_[collective]++};
    Round& round = rounds_[key];
    round.joined = true;
    round.nodes = nodes;
    round.local = std::move(data);
    Actions actions;
    advance(key, actions);
    return actions;
}

TreeCollectives::Actions TreeCollectives::receive(const protocol::CollectiveMessage& message) {
    const RoundKey key{message.collective, message.sequence};
    Actions actions;
    if (!message.up) {
        finish(key, message.status, message.data, actions);
        return actions;
    }
    rounds_[key].from_children[message.from_node] = message.data;
    advance(key, actions);
    return actions;
}

TreeCollectives::Actions TreeCollectives::fail(const std::string& collective,
                                               uint64_t sequence,
                                               int32_t status) {
    Actions actions;
    if (!finished(collective, sequence)) {
        finish({collective, sequence}, status, "", actions);
    }
    return actions;
}

uint64_t TreeCollectives::next_sequence(const std::string& collective) const {
    auto it = next_sequence_.find(collective);
    return it == next_sequence_.end() ? 0 : it->second;
}

std::vector<uint32_t> TreeCollectives::waiting_for(const std::string& collective,
                                                   uint64_t sequence) const {
    auto it = rounds_.find({collective, sequence});
    if (it == rounds_.end() || !it->second.joined) {
        return {};
    }
    std::vector<uint32_t> missing;
    for (uint32_t child : TreeShape::over(it->second.nodes, self_, fanout_).children) {
        if (it->second.from_children.count(child) == 0) {
            missing.push_back(child);
        }
    }
    return missing;
}

bool TreeCollectives::finished(const std::string& collective, uint64_t sequence) const {
    auto next = next_sequence_.find(collective);
    const bool started = next != next_sequence_.end() && sequence < next->second;
    return started && rounds_.count({collective, sequence}) == 0;
}

void TreeCollectives::advance(const RoundKey& key, Actions& actions) {
    Round& round = rounds_[key];
    if (!round.joined || round.sent_up) {
        return;
    }
    const TreeShape shape = TreeShape::over(round.nodes, self_, fanout_);
    for (uint32_t child : shape.children) {
        if (round.from_children.count(child) == 0) {
            return;
        }
    }
    std::string gathered = round.local;
    for (uint32_t child : shape.children) {
        gathered += round.from_children[child];
    }
    if (shape.is_root) {
        finish(key, 0, gathered, actions);
        return;
    }
    round.sent_up = true;
    protocol::CollectiveMessage up;
    up.collective = key.first;
    up.sequence = key.second;
    up.from_node = self_;
    up.up = true;
    up.data = std::move(gathered);
    actions.sends.push_back({shape.parent, std::move(up)});
}

void TreeCollectives::finish(const RoundKey& key,
                             int32_t status,
                             const std::string& data,
                             Actions& actions) {
    auto it = rounds_.find(key);
    if (it != rounds_.end() && it->second.joined) {
        for (uint32_t child : TreeShape::over(it->second.nodes, self_, fanout_).children) {
            protocol::CollectiveMessage down;
            down.collective = key.first;
            down.sequence = key.second;
            down.from_node = self_;
            down.up = false;
            down.status = status;
            down.data = data;
            actions.sends.push_back({child, std::move(down)});
        }
    }
    if (it != rounds_.end()) {
        rounds_.erase(it);
    }
    actions.completions.push_back({key.first, key.second, status, data});
}

}  // namespace cohort::pmix
