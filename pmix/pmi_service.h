// One step's PMI service on one node, as a pure state machine over byte streams: the bytes a
// rank's connection delivers in, the bytes to write back out. A connection speaks PMI-1 or
// PMI-2, told apart by its first line as Slurm does (PMI-2 clients open with the PMI-1 line
// "cmd=init pmi_version=2 ..."); both kinds share one PmiCore, so one port serves both.
#pragma once

#include <map>
#include <string>

#include "pmix/pmi2_server.h"
#include "pmix/pmi_core.h"
#include "pmix/pmi_simple.h"

namespace cohort::pmix {

constexpr size_t kPmiMaxLine = 64 * 1024;

class PmiService {
public:
    explicit PmiService(PmiJob job);

    // The client is the channel that only `rank` holds (its inherited PMI_FD): it is that
    // rank, without a PMI_ID, from its first bytes on. Until then the rank may still
    // identify itself over the port instead.
    void attach(PmiClient client, uint32_t rank) { channel_rank_[client] = rank; }

    // Bytes from a client, as they arrive (any split). After an output with an error the
    // client is to be closed; further bytes from it are ignored.
    PmiOutput on_bytes(PmiClient client, const std::string& bytes);
    // The cross-node barrier finished with every node's blob.
    PmiOutput barrier_done(const std::string& all_nodes);
    // The cross-node barrier failed (a timeout, a lost node): every waiting rank gets rc=-1.
    PmiOutput barrier_failed();
    void forget(PmiClient client);

    // Every local rank has identified itself: no further connection is expected.
    bool all_claimed() const { return core_.all_claimed(); }

private:
    enum class Mode {
        kUnknown,
        kPmi1,
        kPmi2,
        kClosed,
    };

    struct Stream {
        Mode mode = Mode::kUnknown;
        std::string buffer;
    };

    PmiOutput next(PmiClient client, Stream& stream, bool& progressed);
    PmiOutput release(const std::vector<PmiClient>& clients, bool ok);

    PmiCore core_;
    PmiSimpleServer pmi1_;
    Pmi2Server pmi2_;
    std::map<PmiClient, Stream> streams_;
    std::map<PmiClient, uint32_t> channel_rank_;  // attached, not yet bound
};

}  // namespace cohort::pmix
