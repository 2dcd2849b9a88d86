// What PMI-1 and PMI-2 clients of one step on one node share: who each connection is (a
// per-rank secret in PMI_ID), the key-value space, and the barrier (PMI-1 barrier_in, PMI-2
// kvs-fence) that the step manager completes across nodes.
//
// KVS semantics as in MPICH's PMI: puts become visible everywhere after the next barrier.
// Each node gathers its ranks' puts since the last barrier into one blob; the blobs of all
// nodes, concatenated, come back in finish_barrier(). Pure: no sockets, no clock, no
// randomness (the secrets come in with the job).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace cohort::pmix {

using PmiClient = uint64_t;

struct PmiJob {
    std::string kvsname;          // also the PMI-2 job id
    uint32_t size = 0;            // ranks in the step
    std::string process_mapping;  // PMI_process_mapping, e.g. "(vector,(0,2,2))"
    std::vector<uint32_t> local_ranks;
    // PMI_ID of each local rank -> its rank. A client proves which rank it is by presenting
    // its PMI_ID (PMI-1 initack pmiid, PMI-2 fullinit pmirank), unless its channel already
    // says (bind). Empty: the id is the rank number itself.
    std::map<std::string, uint32_t> ids;
};

// PMI_process_mapping from each rank's node index: "(vector,(0,2,2))" for ranks 0,1 on node
// 0 and 2,3 on node 1; "(vector,(0,2,1))" for 0,2 | 1,3 (cyclic).
std::string pmi_process_mapping(const std::vector<uint32_t>& node_of_rank);

// What the protocol servers hand back for the step manager to carry out.
struct PmiOutput {
    struct Reply {
        PmiClient client = 0;
        std::string bytes;  // exactly what goes on that client's socket
    };

    struct Abort {
        int32_t rank = -1;  // -1 when the client never said which rank it is
        int exit_code = 1;
        std::string message;
    };

    std::vector<Reply> replies;
    std::optional<std::string> barrier;  // every local rank is in: this node's blob
    std::optional<Abort> abort;
    std::string error;  // a protocol or authentication error: log it, close this client

    // Appends `more` (replies after these; a barrier, abort or error in `more` wins).
    void merge(PmiOutput more);
};

class PmiCore {
public:
    explicit PmiCore(PmiJob job);

    const PmiJob& job() const { return job_; }

    // Whether a client must present a PMI_ID before anything else.
    bool requires_id() const { return !job_.ids.empty(); }

    // The client presents `id`: its rank, or why it is refused. Each id is good once. A
    // client bound to its rank by its channel may present its rank number or PMI_ID again
    // (PMI-2 fullinit always names one).
    Result<uint32_t> claim(PmiClient client, const std::string& id);
    // The client is `rank` by the channel it came on (the socket inherited as PMI_FD, which
    // only that rank holds): no PMI_ID needed. Fails when the rank is taken or not local.
    Status bind(PmiClient client, uint32_t rank);
    std::optional<uint32_t> rank_of(PmiClient client) const;
    // Every local rank has identified itself: no further connection is expected.
    bool all_claimed() const;

    void put(const std::string& key, const std::string& value);
    std::optional<std::string> get(const std::string& key) const;

    // The client waits in the barrier; once every local rank is in: this node's blob.
    std::optional<std::string> enter_barrier(PmiClient client);
    // The cross-node barrier finished with every node's blob: the clients to release.
    std::vector<PmiClient> finish_barrier(const std::string& all_nodes);
    // The cross-node barrier failed (a timeout, a lost node): the clients to release.
    std::vector<PmiClient> fail_barrier();

    void forget(PmiClient client);

private:
    PmiJob job_;
    std::map<std::string, std::string> kvs_;                    // visible to get
    std::vector<std::pair<std::string, std::string>> pending_;  // puts since the last barrier
    std::set<PmiClient> in_barrier_;
    std::map<PmiClient, uint32_t> ranks_;  // identified clients
    std::set<uint32_t> claimed_;           // ranks whose id was presented (good once)
    std::set<PmiClient> bound_;            // identified by their channel
};

}  // namespace cohort::pmix
