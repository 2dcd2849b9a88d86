// The PMI-2 commands (MPICH's src/pmi/pmi2 simple client, Slurm's --mpi=pmi2) as a pure
// state machine: commands from the local ranks in, reply frames out. Identity, KVS and the
// fence live in the PmiCore it shares with the PMI-1 server; node attributes (the node-local
// key-value space ranks use to set up shared memory) live here.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pmix/pmi2_wire.h"
#include "pmix/pmi_core.h"

namespace cohort::pmix {

class Pmi2Server {
public:
    explicit Pmi2Server(PmiCore& core) : core_(core) {}

    PmiOutput on_command(PmiClient client, const Pmi2Command& command);
    // The reply that releases a client from kvs-fence.
    std::string fence_reply(PmiClient client, bool ok);
    void forget(PmiClient client);

private:
    struct Waiter {
        PmiClient client = 0;
        std::string thrid;  // echoed, so a threaded client can match the reply
    };

    PmiOutput handle(PmiClient client, const Pmi2Command& command, const std::string& thrid);
    PmiOutput fullinit(PmiClient client, const Pmi2Command& command, const std::string& thrid);
    PmiOutput get_node_attr(PmiClient client, const Pmi2Command& command, const std::string& thrid);
    PmiOutput put_node_attr(PmiClient client, const Pmi2Command& command, const std::string& thrid);

    PmiCore& core_;
    std::set<PmiClient> initialized_;  // past fullinit
    std::map<std::string, std::string> node_attrs_;
    std::map<std::string, std::vector<Waiter>> attr_waiters_;  // info-getnodeattr wait=TRUE
    std::map<PmiClient, std::string> fence_thrids_;
};

}  // namespace cohort::pmix
