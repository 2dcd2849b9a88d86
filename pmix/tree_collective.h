// Tree collectives among a step's step managers (PMIx fence, PMI barrier): each node adds its
// own contribution to its children's, sends the sum to its parent, and the root sends the
// whole result back down. Pure: messages in, messages to send and completions out, so the
// protocol is tested without sockets. A contribution may arrive before the local one (a
// fast peer); it is kept until the local side joins the same round.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/protocol/step_messages.h"

namespace cohort::pmix {

// Where `self` sits in a k-ary tree laid over `nodes` (sorted node indexes, root first).
struct TreeShape {
    bool is_root = true;
    uint32_t parent = 0;
    std::vector<uint32_t> children;

    static TreeShape over(const std::vector<uint32_t>& nodes, uint32_t self, uint32_t fanout);
};

class TreeCollectives {
public:
    struct Send {
        uint32_t to = 0;
        protocol::CollectiveMessage message;
    };

    struct Completion {
        std::string collective;
        uint64_t sequence = 0;
        int32_t status = 0;
        std::string data;  // every participant's contribution, concatenated
    };

    struct Actions {
        std::vector<Send> sends;
        std::vector<Completion> completions;
    };

    TreeCollectives(uint32_t self, uint32_t fanout);

    // This node joins the next round of `collective` over `nodes` (which must hold self).
    Actions contribute(const std::string& collective,
                       const std::vector<uint32_t>& nodes,
                       std::string data);
    // A message from a peer.
    Actions receive(const protocol::CollectiveMessage& message);
    // Ends an unfinished round with `status` here and below (a timeout, a lost peer).
    Actions fail(const std::string& collective, uint64_t sequence, int32_t status);

    // The sequence number the next contribute() to `collective` will get.
    uint64_t next_sequence(const std::string& collective) const;
    // The children whose contribution an unfinished round still waits for.
    std::vector<uint32_t> waiting_for(const std::string& collective, uint64_t sequence) const;
    bool finished(const std::string& collective, uint64_t sequence) const;

private:
    struct Round {
        bool joined = false;  // the local contribution is in
        std::vector<uint32_t> nodes;
        std::string local;
        std::map<uint32_t, std::string> from_children;
        bool sent_up = false;
    };

    using RoundKey = std::pair<std::string, uint64_t>;

    void advance(const RoundKey& key, Actions& actions);
    void finish(const RoundKey& key, int32_t status, const std::string& data, Actions& actions);

    uint32_t self_;
    uint32_t fanout_;
    std::map<RoundKey, Round> rounds_;
    std::map<std::string, uint64_t> next_sequence_;
};

}  // namespace cohort::pmix
