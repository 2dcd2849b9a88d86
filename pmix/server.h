// The embedded OpenPMIx server of one step on one node. OpenPMIx allows one server per
// process, so this is a process-wide object: the step manager creates it once.
//
// Every module upcall arrives on PMIx's progress thread. The upcall copies what it needs,
// posts the work to the host's executor and returns; the host completes the request later,
// from its own thread, through the Completion it was handed (never from inside an upcall:
// Open MPI's log call hangs when its callback runs there).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/asio.h"
#include "common/status.h"

namespace cohort::pmix {

// What register_nspace needs to know about the step (the whole job, not only this node).
struct NamespaceLayout {
    std::string nspace;                                // unique per step, e.g. "cohort.12.0"
    std::string job_id;                                // "12.0"
    std::vector<std::string> nodes;                    // node names, node index order
    std::vector<std::vector<uint32_t>> ranks_on_node;  // per node: its global ranks, ascending
    uint32_t this_node = 0;
    std::string job_tmpdir;   // PMIX_TMPDIR
    std::string step_tmpdir;  // PMIX_NSDIR: Open MPI makes its session dirs under it
};

struct ServerOptions {
    std::string tmpdir;  // the server's rendezvous files; short (AF_UNIX path limit)
    std::string node_name;
    uint32_t node_index = 0;
    bool set_user = false;  // the ranks run as another user than the server
    uint32_t uid = 0;
    uint32_t gid = 0;
};

// Completion statuses the host hands back (0: success).
constexpr int kCompletionError = 1;
constexpr int kCompletionTimeout = 2;
constexpr int kCompletionNotFound = 3;

using Completion = std::function<void(int status, std::string data)>;

// A direct-modex request: a client asked for data of a rank this node does not host. PMIx
// names the key the client is waiting for (PMIX_REQUIRED_KEY) and may bound the wait
// (PMIX_TIMEOUT). The key matters: a rank may commit more than once (PMIx allows a put and
// commit at any time), and the PMIx library on the hosting node answers as soon as the
// *first* commit arrived. Answering then would hand the asker a blob without the key it
// needs, and its PMIx_Get would fail "not found" (openpmix/openpmix#1586).
struct ModexQuery {
    std::string nspace;
    uint32_t rank = 0;
    std::string required_key;  // empty: whatever the rank has committed
    uint32_t timeout_s = 0;    // 0: no bound from the client
};

// The host side: called on the host's executor, in the order the upcalls came.
class ServerHost {
public:
    virtual ~ServerHost() = default;
    virtual void on_connected(uint32_t rank) = 0;
    virtual void on_finalized(uint32_t rank) = 0;
    virtual void on_abort(uint32_t rank, int status, const std::string& message) = 0;
    // `ranks` empty: the whole namespace. `done` takes every node's data, concatenated.
    virtual void on_fence(const std::string& nspace,
                          std::vector<uint32_t> ranks,
                          bool collect,
                          std::string data,
                          Completion done) = 0;
    virtual void on_direct_modex(const ModexQuery& query, Completion done) = 0;
    virtual void on_log(uint32_t rank, const std::string& text) = 0;
};

class Server {
public:
    // Initializes OpenPMIx; work is posted to `executor`.
    static Result<std::unique_ptr<Server>> start(const ServerOptions& options,
                                                 boost::asio::any_io_executor executor,
                                                 ServerHost& host);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    Status register_namespace(const NamespaceLayout& layout);
    // Registers a local rank and returns the variables it must be started with.
    Result<std::vector<std::pair<std::string, std::string>>> prepare_rank(const std::string& nspace,
                                                                          uint32_t rank,
                                                                          uint32_t uid,
                                                                          uint32_t gid);
    // Asks the library for a local rank's modex data on behalf of a remote node. When the
    // query names a required key, the answer waits until the rank has committed that key
    // (checked with a backing-off poll, as the library has no commit notification for
    // hosts); past `deadline` it completes with kCompletionTimeout.
    void request_modex(const ModexQuery& query,
                       std::chrono::steady_clock::time_point deadline,
                       Completion done);
    void deregister_namespace(const std::string& nspace);

private:
    struct KeyWait;
    Server(boost::asio::any_io_executor executor, ServerHost& host);
    void check_required_key(std::shared_ptr<KeyWait> wait);
    void fetch_modex(const ModexQuery& query, Completion done);

    friend struct Upcalls;
    boost::asio::any_io_executor executor_;
    ServerHost& host_;
    std::vector<std::string> namespaces_;
};

}  // namespace cohort::pmix
