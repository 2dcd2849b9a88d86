// The embedded OpenPMIx server of one step on one node. OpenPMIx allows one server per
// process, so this is a process-wide object: the step manager creates it once.
//
// Every module upcall arrives on PMIx's progress thread. The upcall copies what it needs,
// posts the work to the host's executor and returns; the host completes the request later,
// from its own thread, through the Completion it was handed (never from inside an upcall:
// Open MPI's log call hangs when its callback runs there).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/asio.h"
#include "common/status.h"

namespace cohort::pmix {

// What register_nspace needs to know about the step (the whole job, not only this node).
struct NamespaceLayout {
    std::string nspace;    // unique per step, e.g. "cohort.12.0"
    std::string job_id;    // "12.0"
    std::vector<std::string> nodes;          // node names, node index order
    std::vector<uint32_t> tasks_per_node;    // ranks are numbered block-wise over nodes
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

using Completion = std::function<void(int status, std::string data)>;

// The host side: called on the host's executor, in the order the upcalls came.
class ServerHost {
public:
    virtual ~ServerHost() = default;
    virtual void on_connected(uint32_t rank) = 0;
    virtual void on_finalized(uint32_t rank) = 0;
    virtual void on_abort(uint32_t rank, int status, const std::string& message) = 0;
    // `ranks` empty: the whole namespace. `done` takes every node's data, concatenated.
    virtual void on_fence(const std::string& nspace, std::vector<uint32_t> ranks, bool collect,
            std::string data, Completion done) = 0;
    virtual void on_direct_modex(const std::string& nspace, uint32_t rank, Completion done) = 0;
    virtual void on_log(uint32_t rank, const std::string& text) = 0;
};

class Server {
public:
    // Initializes OpenPMIx; work is posted to `executor`.
    static Result<std::unique_ptr<Server>> start(const ServerOptions& options,
            boost::asio::any_io_executor executor, ServerHost& host);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    Status register_namespace(const NamespaceLayout& layout);
    // Registers a local rank and returns the variables it must be started with.
    Result<std::vector<std::pair<std::string, std::string>>> prepare_rank(
            const std::string& nspace, uint32_t rank, uint32_t uid, uint32_t gid);
    // Asks the library for a local rank's modex data on behalf of a remote node.
    void request_modex(const std::string& nspace, uint32_t rank, Completion done);
    void deregister_namespace(const std::string& nspace);

private:
    Server(boost::asio::any_io_executor executor, ServerHost& host);

    friend struct Upcalls;
    boost::asio::any_io_executor executor_;
    ServerHost& host_;
    std::vector<std::string> namespaces_;
};

}  // namespace cohort::pmix
