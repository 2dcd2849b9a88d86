// The client side of a parallel step: contacts every node agent of the layout, starts the
// tasks, streams their output (optionally labelled), forwards Ctrl-C and collects exits.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/asio.h"
#include "common/protocol/messages.h"
#include "common/protocol/step_messages.h"
#include "common/transport/connection.h"
#include "common/transport/dispatcher.h"

namespace cohort::cli {

struct StepRequest {
    std::vector<std::string> argv;
    // srun A : B over a hetjob's components: each component job's command; empty: argv.
    std::map<uint64_t, std::vector<std::string>> argv_by_job;
    std::string cwd;
    std::vector<std::pair<std::string, std::string>> env;
    bool label = false;
    std::string mpi = "pmix";
    std::string pmix_transport = "tcp";
    bool kill_on_bad_exit = false;
    std::string output;  // per-task file patterns instead of streaming
    std::string error;
    bool stdin_to_rank0 = true;
    std::string signal;  // --signal=SIG[@SECONDS], checked
};

struct StepResult {
    int exit_code = 0;  // the highest task exit code; 128+N for a task killed by signal N
    int exit_signal = 0;
    std::string error;         // set when the step could not run as asked
    protocol::JobUsage usage;  // summed over the nodes that reported it
};

class StepClient {
public:
    StepClient(boost::asio::io_context& io, protocol::FrameAuth auth, protocol::Credential cred);

    // Runs the step to its end on `io` (which the caller must not be running elsewhere).
    StepResult run(const protocol::StepLayout& layout, const StepRequest& request);

private:
    // Routes each agent's messages, tagged with the agent's node index, to the handlers.
    void register_handlers();
    void on_task_exit(const protocol::TaskExitMessage& exit);
    // The agent of `node` stops (an upgrade) while its tasks run on: wait for the next one.
    void on_detached(size_t node);
    void on_agent_closed(size_t node, const Status& why);
    void on_reattached(size_t node);
    protocol::LaunchStepRequest launch_request(const std::string& host, uint16_t port) const;
    void accept_agents();
    void forward_stdin();  // once rank 0 runs
    void read_stdin();
    void report_missing_nodes();
    void on_launched(size_t node, const protocol::StepLaunchedReply& launched);
    void on_abort(const protocol::StepAbortMessage& abort);
    void write_output(const protocol::TaskOutputMessage& output);
    void flush_partial_lines();
    std::string label_of(uint32_t rank) const;
    void signal_all(int signal);
    void fail(const std::string& error);
    void finish_if_done();

    boost::asio::io_context& io_;
    protocol::FrameAuth auth_;
    protocol::Credential cred_;
    protocol::StepLayout layout_;
    StepRequest request_;
    std::chrono::seconds attach_limit_{30};     // COHORT_LAUNCH_TIMEOUT overrides it
    boost::asio::ip::tcp::acceptor callbacks_;  // where the agents call back
    transport::Dispatcher<size_t> dispatcher_;
    std::unique_ptr<boost::asio::posix::stream_descriptor> stdin_;
    std::array<char, 65536> stdin_buffer_{};
    std::vector<std::shared_ptr<transport::Connection>> agents_;  // by node index, once attached
    std::vector<bool> node_done_;
    // Nodes whose agent said it stops while their tasks run on, and when each must be back.
    std::vector<bool> detached_;
    std::vector<std::unique_ptr<boost::asio::steady_timer>> reattach_deadlines_;
    std::vector<int> signal_while_detached_;  // sent to the node's next agent
    std::set<uint32_t> exited_ranks_;         // a re-attached agent reports them again
    std::map<std::pair<uint32_t, uint8_t>, std::string> partial_lines_;
    size_t label_width_ = 1;
    StepResult result_;
    bool finished_ = false;
    std::vector<std::string> peer_addresses_;  // each node's step manager
    size_t nodes_launched_ = 0;
    bool aborted_ = false;  // a rank's abort status is the step's exit code
    bool killing_ = false;  // --kill-on-bad-exit has ended the step
    int interrupts_ = 0;
    std::chrono::steady_clock::time_point last_interrupt_;
};

}  // namespace cohort::cli
