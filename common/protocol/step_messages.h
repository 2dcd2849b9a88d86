// Messages of the MPI launch path: the client hands every node the step managers' addresses,
// a node agent and its step manager (cohort-stepd) set a step up, and step managers run
// collectives (fence, direct modex) among themselves.
#pragma once

#include "common/protocol/messages.h"
#include "common/serialize_fields.h"

namespace cohort::protocol {

// Client -> each agent -> its step manager, once every node has launched: how to reach
// each node's step manager ("tcp://host:port" or "ucx:<worker address>"), in node order.
struct StepPeersMessage {
    static constexpr MessageType kType = MessageType::kStepPeers;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    std::vector<std::string> peers;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, peers);
    }
};

// Step manager -> agent -> client: a rank called MPI_Abort/PMIx_Abort (or the step's
// wire-up failed): the step ends everywhere with `status`.
struct StepAbortMessage {
    static constexpr MessageType kType = MessageType::kStepAbort;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    int32_t rank = -1;  // -1: no rank in particular
    int32_t status = 1;
    std::string message;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, rank, status, message);
    }
};

// Agent -> client, first message on the connection an agent opens back to the client.
struct StepAttachMessage {
    static constexpr MessageType kType = MessageType::kStepAttach;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    uint32_t node_index = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, node_index);
    }
};

// Agent -> client: this node's agent is stopping (an upgrade) while the step's tasks run on
// under their shepherds; the next agent calls back with a StepAttachMessage and goes on.
struct StepDetachMessage {
    static constexpr MessageType kType = MessageType::kStepDetach;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    uint32_t node_index = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, node_index);
    }
};

// Agent -> step manager: the agent is stopping, not the step; keep serving the ranks when
// the link closes, until the next agent ends the step with SIGTERM.
struct StepdDetachMessage {
    static constexpr MessageType kType = MessageType::kStepdDetach;

    template <class A>
    void serialize(A&, unsigned) {}
};

// Step manager -> agent, first message on its connection.
struct StepdHelloMessage {
    static constexpr MessageType kType = MessageType::kStepdHello;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    std::string peer_address;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, job_id, step_id, peer_address);
    }
};

// Agent -> step manager: the step as the client asked for it, and whose ranks these are.
struct StepdSetupMessage {
    static constexpr MessageType kType = MessageType::kStepdSetup;
    LaunchStepRequest launch;
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::string node_name;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, launch, uid, gid, node_name);
    }
};

// Step manager -> agent: the variables each local rank needs (PMIx server URI, PMI_*),
// in local rank order; or why the step cannot start.
struct StepdReadyMessage {
    static constexpr MessageType kType = MessageType::kStepdReady;
    std::vector<std::vector<std::pair<std::string, std::string>>> rank_env;
    std::string error;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, rank_env, error);
    }
};

// Step manager -> step manager: one hop of a tree collective. `up` carries a subtree's
// contributions toward the root, `down` the complete result back to the leaves.
struct CollectiveMessage {
    static constexpr MessageType kType = MessageType::kCollective;
    std::string collective;  // names the participants, e.g. "cohort.12.0:*"
    uint64_t sequence = 0;   // the how-many-th collective over those participants
    uint32_t from_node = 0;
    bool up = true;
    int32_t status = 0;  // non-zero on the way down: the collective failed
    std::string data;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, collective, sequence, from_node, up, status, data);
    }
};

// Step manager -> the step manager hosting `rank`: that rank's modex data, please. The
// answer waits until the rank has committed `required_key` (the key the asking client needs;
// empty: whatever it has committed), for at most `timeout_s` (0: the step's PMIx timeout).
struct DirectModexRequestMessage {
    static constexpr MessageType kType = MessageType::kDirectModexRequest;
    uint64_t request_id = 0;
    uint32_t from_node = 0;
    std::string nspace;
    uint32_t rank = 0;
    std::string required_key;
    uint32_t timeout_s = 0;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, request_id, from_node, nspace, rank, required_key, timeout_s);
    }
};

struct DirectModexReplyMessage {
    static constexpr MessageType kType = MessageType::kDirectModexReply;
    uint64_t request_id = 0;
    int32_t status = 0;
    std::string data;

    template <class A>
    void serialize(A& ar, unsigned) {
        serialize_fields(ar, request_id, status, data);
    }
};

}  // namespace cohort::protocol
