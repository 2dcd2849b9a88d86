// The PMI-1 "simple" wire protocol (what MPICH's built-in PMI client speaks), as a pure state
// machine: lines from the local ranks in, reply lines out. Identity, KVS and barrier live in
// the PmiCore it shares with the PMI-2 server; PmiService feeds it a connection's lines.
#pragma once

#include <map>
#include <string>

#include "pmix/pmi_core.h"

namespace cohort::pmix {

class PmiSimpleServer {
public:
    explicit PmiSimpleServer(PmiCore& core) : core_(core) {}

    // One line, without its newline.
    PmiOutput on_line(PmiClient client, const std::string& line);
    // The reply that releases a client from barrier_in.
    static std::string barrier_reply(bool ok);

private:
    PmiOutput handle(PmiClient client,
                     const std::string& command,
                     const std::map<std::string, std::string>& args);

    PmiCore& core_;
};

}  // namespace cohort::pmix
