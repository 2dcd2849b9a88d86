// cohort-stepd's service: the step manager of one step on one node. The node agent starts
// it for every MPI step; it embeds the step's OpenPMIx server, hands the agent the variables
// each local rank is started with, and runs the step's collectives (fence, direct modex)
// with the other nodes' step managers over TCP. The agent keeps forking, watching and
// signalling the ranks; a rank's PMIx calls come here.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/asio.h"
#include "common/protocol/step_messages.h"
#include "common/transport/connection.h"
#include "common/transport/dispatcher.h"
#include "pmix/peer_transport.h"
#include "pmix/pmi_service.h"
#include "pmix/server.h"
#include "pmix/tree_collective.h"

namespace cohort::stepd {

namespace asio = boost::asio;
using ConnectionPtr = std::shared_ptr<transport::Connection>;

struct StepManagerOptions {
    std::string agent_host;
    uint16_t agent_port = 0;
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    uint32_t fanout = 32;
    std::string transport = "tcp";
    std::chrono::seconds fence_timeout{300};
    std::vector<int> pmi_fds;  // per local rank, the step manager's end of its PMI_FD
};

class StepManager : public pmix::ServerHost {
public:
    StepManager(asio::io_context& io, std::string key, StepManagerOptions options);
    ~StepManager() override;

    // Listens for peers and starts dialling the agent; once connected it says hello, and the
    // agent's setup message follows. A failure found later stops `io` and sets exit_code().
    Status start();

    // What cohort-stepd exits with once `io` has stopped.
    int exit_code() const { return exit_code_; }

    // pmix::ServerHost
    void on_connected(uint32_t rank) override;
    void on_finalized(uint32_t rank) override;
    void on_abort(uint32_t rank, int status, const std::string& message) override;
    void on_fence(const std::string& nspace,
                  std::vector<uint32_t> ranks,
                  bool collect,
                  std::string data,
                  pmix::Completion done) override;
    void on_direct_modex(const pmix::ModexQuery& query, pmix::Completion done) override;
    void on_log(uint32_t rank, const std::string& text) override;

private:
    // A request that waits for other nodes, failed when its timer fires first.
    struct PendingFence {
        pmix::Completion done;
        std::shared_ptr<asio::steady_timer> timer;
    };

    void on_agent_connected(asio::ip::tcp::socket socket);
    void register_agent_handlers();
    // A tree collective over `nodes`; `done` gets every node's data, or fails on timeout.
    void start_collective(const std::string& collective,
                          const std::vector<uint32_t>& nodes,
                          std::string data,
                          pmix::Completion done);
    std::vector<uint32_t> all_nodes() const;
    Result<protocol::StepdReadyMessage> prepare_pmix_ranks(const std::string& session_dir,
                                                           bool other_user);

    // --- PMI-1/PMI-2 for MPICH-family MPIs (step_manager_pmi.cc)
    Result<protocol::StepdReadyMessage> prepare_pmi_ranks(bool pmi2);
    void accept_pmi_clients();
    void read_pmi_bytes(uint64_t client);
    void apply_pmi(pmix::PmiOutput output, uint64_t from);
    void set_up(const protocol::StepdSetupMessage& setup);
    Result<protocol::StepdReadyMessage> prepare_ranks();
    void register_peer_handlers();
    // Answers another node's direct-modex request once the rank has committed the key.
    void answer_modex_request(const protocol::DirectModexRequestMessage& request);
    void apply(pmix::TreeCollectives::Actions actions);
    void fence_timed_out(const std::string& collective, uint64_t sequence);
    template <typename Message>
    void send_to_node(uint32_t node, const Message& message);
    void abort_step(int32_t rank, int32_t status, const std::string& message);
    uint32_t node_of(uint32_t rank) const;
    // Why a direct-modex query cannot be answered (empty: it can).
    std::string check_modex_query(const pmix::ModexQuery& query) const;
    // How long this node holds a direct-modex request for a key its rank has not committed.
    std::chrono::steady_clock::time_point modex_deadline(uint32_t timeout_s) const;
    void shut_down();

    asio::io_context& io_;
    std::string key_;
    StepManagerOptions options_;
    protocol::Credential self_;
    transport::Dispatcher<> agent_dispatcher_;
    transport::Dispatcher<> peer_dispatcher_;  // other nodes' step managers
    ConnectionPtr agent_;
    bool agent_detached_ = false;  // the agent stops, not the step: its link's end is no end
    int exit_code_ = 0;
    std::unique_ptr<pmix::PeerTransport> peers_;
    std::vector<std::pair<uint32_t, std::string>> waiting_for_peers_;  // frames to send
    bool have_peers_ = false;

    protocol::StepdSetupMessage setup_;
    RankMap ranks_;  // which ranks run on which node of the step
    std::string tmpdir_;
    std::string shm_dir_;  // Open MPI's shared-memory backing files
    std::string nspace_;
    std::unique_ptr<pmix::Server> server_;
    std::unique_ptr<pmix::TreeCollectives> collectives_;
    std::map<std::pair<std::string, uint64_t>, PendingFence> fences_;
    std::map<uint64_t, PendingFence> modex_requests_;  // direct modex sent to other nodes
    uint64_t next_modex_request_ = 1;
    std::set<uint32_t> connected_;

    // A rank's PMI connection: an accepted loopback socket or the end of its PMI_FD.
    struct PmiClient {
        std::shared_ptr<asio::posix::stream_descriptor> socket;
        std::shared_ptr<std::array<char, 4096>> input;
    };

    void add_pmi_client(uint64_t client, int fd);
    std::unique_ptr<pmix::PmiService> pmi_;
    asio::ip::tcp::acceptor pmi_acceptor_;
    std::map<uint64_t, PmiClient> pmi_clients_;
    uint32_t pmi_uid_ = 0;  // the ranks' uid: the only one that may connect
    uint64_t next_pmi_client_ = 1;
};

}  // namespace cohort::stepd
