// The PMI-1 "simple" wire protocol (what MPICH's built-in PMI client speaks), as a pure state
// machine: lines from the local ranks in, reply lines out, and a barrier that the step
// manager completes across nodes. Clients reach it over TCP (PMI_PORT + PMI_ID).
//
// KVS semantics as in MPICH's PMI: puts become visible everywhere after the next barrier.
// Each node gathers its ranks' puts since the last barrier into one blob; the blobs of all
// nodes, concatenated, come back in barrier_done().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cohort::pmix {

struct PmiJob {
    std::string kvsname;
    uint32_t size = 0;                // ranks in the step
    std::string process_mapping;      // PMI_process_mapping, e.g. "(vector,(0,2,2))"
    std::vector<uint32_t> local_ranks;
};

// "(vector,(0,2,2))" for 2 nodes of 2 ranks each, block-numbered.
std::string pmi_process_mapping(const std::vector<uint32_t>& tasks_per_node);

class PmiSimpleServer {
public:
    using Client = uint64_t;

    struct Reply {
        Client client = 0;
        std::string line;  // with its newline
    };
    struct Output {
        std::vector<Reply> replies;
        std::optional<std::string> barrier;  // every local rank is in: this node's blob
        struct Abort {
            int32_t rank = -1;  // -1 when the client never said which rank it is
            int exit_code = 1;
            std::string message;
        };
        std::optional<Abort> abort;
        std::string error;  // a protocol error: close this client
    };

    explicit PmiSimpleServer(PmiJob job);

    Output on_line(Client client, const std::string& line);
    // The cross-node barrier finished with every node's blob.
    Output barrier_done(const std::string& all_nodes);
    // The cross-node barrier failed (a timeout, a lost node): every waiting rank gets rc=-1.
    Output barrier_failed();
    void forget(Client client);

private:
    Output handle(Client client, const std::string& command,
            const std::map<std::string, std::string>& args);

    PmiJob job_;
    std::map<std::string, std::string> kvs_;      // visible to get
    std::vector<std::pair<std::string, std::string>> pending_;  // puts since the last barrier
    std::set<Client> in_barrier_;
    std::map<Client, int32_t> ranks_;  // from initack (PMI_ID)
};

}  // namespace cohort::pmix
