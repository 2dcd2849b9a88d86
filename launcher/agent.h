// cohortd's service: registers with the controller and heartbeats, runs batch scripts and
// step tasks in their own process groups as the job's user, streams step output to the
// client, enforces time limits and reports exits.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/asio.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/filename_pattern.h"
#include "common/protocol/step_messages.h"
#include "common/transport/connection.h"
#include "common/transport/dispatcher.h"
#include "common/warning_signal.h"
#include "launcher/batch_record.h"
#include "launcher/cpu_ledger.h"
#include "launcher/job_cgroup.h"
#include "launcher/job_hooks.h"
#include "launcher/process.h"
#include "launcher/step_record.h"
#include "launcher/time_limits.h"

namespace cohort::agent {

namespace asio = boost::asio;
using transport::Connection;
using ConnectionPtr = std::shared_ptr<Connection>;

// A port nobody listens on right now on `address`, for MASTER_PORT (whoever rendezvouses
// there binds it moments later); 0 when none could be had.
uint16_t pick_free_port(asio::io_context& io, const std::string& address);

struct AgentOptions {
    std::string name;
    std::string address = "127.0.0.1";  // where clients reach this agent (see cohortd --address)
    uint16_t port = 0;                  // 0: any free port, reported at registration
    std::string spool_dir;
    std::string stepd_binary;     // cohort-stepd, started for each MPI step
    std::string shepherd_binary;  // cohort-shepherd, the parent of each batch script and task
};

class Agent {
public:
    // `clock` must outlive the agent.
    Agent(asio::io_context& io,
          const Clock& clock,
          ClusterConfig config,
          std::string key,
          AgentOptions options,
          protocol::NodeResources resources);

    // Adopts the batch jobs and step tasks an earlier agent left running, binds the step
    // listener and starts connecting to the controller (retrying until up).
    Status start();
    // Ends nothing: batch scripts and step tasks keep running under their shepherds, for the
    // next agent on this node to adopt (as slurmstepd outlives slurmd). Each step's client is
    // told to wait for that agent; its last frames leave while the io_context runs on.
    void stop();

    // After stop(): every connection has sent what it had and closed.
    bool flushed() const { return clients_.empty(); }

private:
    struct StepSession {
        ConnectionPtr client;
        uint64_t job_id = 0;  // the step's name with step_id, the same on all its nodes
        uint32_t step_id = 0;
        uint64_t local_job = 0;  // the job whose allocation this node is: a hetjob component's
        size_t tasks_left = 0;
        std::vector<pid_t> pids;
        ConnectionPtr step_manager;  // null for --mpi=none
        std::string shm_dir;         // Open MPI's shared-memory files, where the agent made one
        std::shared_ptr<asio::steady_timer> warning;  // its --signal before the job's end
        std::string warning_spec;                     // that --signal, re-armed if the end moves
        bool warned = false;                          // sent: a later end sends it no more
        // Rank 0's stdin on this node, fed with the client's stdin.
        std::shared_ptr<asio::posix::stream_descriptor> input;
        std::deque<std::string> pending_input;
        bool input_eof = false;
        // The tasks' output pipes, read here (closed, not drained, when the agent stops).
        std::vector<std::shared_ptr<asio::posix::stream_descriptor>> outputs;
        // On disk for the next agent (step_record.h); written once the tasks run.
        StepRecord record;
    };

    // One task's pipes: the agent's ends and the ends the child gets (-1 where a file or
    // /dev/null is used instead).
    struct TaskStreams {
        int out_read = -1, err_read = -1, in_write = -1;
        int out_child = -1, err_child = -1, in_child = -1;

        static Result<TaskStreams> open(const protocol::LaunchStepRequest& request,
                                        uint32_t rank,
                                        const FilenamePatternContext& names,
                                        SpawnSpec& spec);
        void close_child_ends();
        void close_parent_ends();
    };

    using StepKey = std::pair<uint64_t, uint32_t>;  // job, step

    // A step whose step manager is starting or serving it.
    struct ManagedStep {
        ConnectionPtr client;
        protocol::LaunchStepRequest request;
        UserIdentity user;
        bool switch_user = false;
        pid_t pid = -1;
        ConnectionPtr connection;  // the step manager's, once it said hello
        std::string peer_address;
        bool launched = false;
        std::shared_ptr<asio::steady_timer> start_timer;
        std::vector<int> pmi_fds;  // per local rank, its PMI_FD until the rank is started
        // A signal that came before the tasks were started (a rank elsewhere failed while the
        // step manager set up): delivered as soon as they are.
        int pending_signal = 0;
    };

    struct Task {
        uint64_t job_id = 0;
        uint32_t rank = 0;
        bool batch = false;
        std::shared_ptr<StepSession> session;  // null for the batch script
        bool exited = false;
        int exit_code = 0;
        int exit_signal = 0;
        std::string error;        // why the program could not start
        std::string status_path;  // where its shepherd writes how it ended
        int open_streams = 0;
    };

    struct LocalJob {
        uint32_t attempt = 0;               // the job's restart count when it started here
        std::optional<uint32_t> owner_uid;  // from its batch script or first step
        std::set<pid_t> pids;
        WarningSignal warning;  // the job's --signal, sent once when its time comes
        bool warned = false;
        bool timed_out = false;
        bool terminating = false;
        bool report_clean = false;  // the controller waits for a JobCleaned
        std::shared_ptr<asio::steady_timer> kill_timer;
        std::optional<BatchRecord> batch;  // where the batch script runs here
    };

    // --- links (agent.cc)
    // Routes the controller's and the clients' messages to the handlers below.
    void register_handlers();
    // Dials the controller without blocking, and again every 500 ms until it answers.
    void connect_controller();
    void on_controller_connected(asio::ip::tcp::socket socket);
    void on_controller_closed();
    void register_self();
    void heartbeat();
    void accept_clients();
    // The job's owner, root and the agent's own user may signal its steps and feed them
    // input; anyone else is answered with an error and logged.
    bool may_touch_job(const ConnectionPtr& conn,
                       const protocol::Credential& sender,
                       uint64_t job_id);
    void on_client_closed(const ConnectionPtr& conn);

    template <typename Message>
    void send_controller(const Message& message) {
        if (controller_) {
            controller_->send(message);
        }
    }

    // --- jobs and tasks (agent_jobs.cc)
    // Runs the job's prolog (once per attempt on this node), then start_batch.
    void launch_batch(const protocol::LaunchBatchRequest& request);
    void start_batch(const protocol::LaunchBatchRequest& request);
    bool batch_launched_already(const protocol::JobRecord& job) const;
    // How the program of `task` ended: as its shepherd wrote it, else as the shepherd's own
    // `wait_status` says (killed before it could write).
    static void take_shepherd_exit(Task& task, int wait_status);
    void launch_step(const protocol::Credential& sender,
                     const protocol::LaunchStepRequest& received);
    // This node's ranks (or its step manager), once the client has been called back.
    void launch_local_part(const protocol::LaunchStepRequest& request, const ConnectionPtr& conn);
    // Opens, without blocking, the connection this node's part of a step reports on, and
    // introduces it with `attach`; `done` gets it, or why the client could not be reached.
    void call_client_back(const std::string& host,
                          uint16_t port,
                          const protocol::StepAttachMessage& attach,
                          std::function<void(Result<ConnectionPtr>)> done);
    // Passes the launch on to this node's children in the launch tree; a child that cannot be
    // reached is reported to `client`.
    void forward_launch(const protocol::LaunchStepRequest& request, const ConnectionPtr& client);
    void pass_launch_on(protocol::LaunchStepRequest child, const ConnectionPtr& client);

    // --- steps and their step managers (agent_steps.cc)
    void start_step_manager(const ConnectionPtr& client,
                            const UserIdentity& user,
                            bool switch_user,
                            const protocol::LaunchStepRequest& request);
    void register_step_manager_handlers();
    // The step whose step manager holds `conn`; closes `conn` and gives null if none.
    ManagedStep* managed_step_on(const ConnectionPtr& conn);
    void on_step_manager_ready(ManagedStep& step, const protocol::StepdReadyMessage& ready);
    void fail_managed_step(StepKey key, const std::string& error);
    void on_step_manager_exit(pid_t pid);
    void forward_step_peers(const protocol::StepPeersMessage& peers);
    void start_step_tasks(
            const ConnectionPtr& client,
            const UserIdentity& user,
            bool switch_user,
            const protocol::LaunchStepRequest& request,
            const std::vector<std::vector<std::pair<std::string, std::string>>>& rank_env,
            const std::string& peer_address,
            ConnectionPtr step_manager,
            std::vector<int> pmi_fds);  // each local rank's PMI_FD end; closed here
    void end_step_session(StepSession& session);

    // Every message of a step's part here goes to its client, once one is attached.
    template <typename Message>
    static void send_to_client(const StepSession& session, const Message& message) {
        if (session.client) {
            session.client->send(message);
        }
    }

    // What the next agent needs to take the step's tasks here over, on disk once they run.
    void record_step(StepSession& session, const protocol::LaunchStepRequest& request);
    void save_step_record(const StepSession& session);
    // Arms the step's --signal for its tasks here, `spec` seconds before the job's end.
    void arm_step_warning(const std::shared_ptr<StepSession>& session,
                          const std::string& spec,
                          int64_t job_end_time);
    FilenamePatternContext step_file_names(const protocol::LaunchStepRequest& request,
                                           uint32_t rank,
                                           const UserIdentity& user) const;
    void write_step_input(const protocol::TaskInputMessage& input);
    void write_next_input(const std::shared_ptr<StepSession>& session);
    void signal_step(const protocol::SignalStepRequest& request);
    // Ends attempt `attempt` of the job here (signal 0), or sends it `signal` (to `target`);
    // a later attempt running here is left alone.
    void terminate_job(uint64_t job_id,
                       int signal,
                       uint32_t attempt,
                       protocol::SignalTarget target = protocol::SignalTarget::kFull);
    // Sends `signal` to the job's processes here that `target` names.
    void signal_job(const LocalJob& job, int signal, protocol::SignalTarget target);
    void arm_time_limit(uint64_t job_id, int64_t end_time);
    // The controller moved the job's end (its time limit changed): the limit, and a --signal
    // not yet sent, follow it.
    void move_end_time(const protocol::JobEndTimeMessage& message);
    // Arms the job's --signal (unless already sent here) for `end_time` less its lead.
    void arm_warning(uint64_t job_id, const std::string& signal_spec, int64_t end_time);
    // Points limit_timer_ at the earliest time of time_limits_ and warnings_.
    void rearm_limit_timer();
    // Sends the warnings and ends the jobs whose time has come by clock_, and rearms.
    void enforce_time_limits();
    void watch_output(
            pid_t pid, int fd, uint32_t rank, uint8_t stream, std::shared_ptr<StepSession> session);
    void reap_children();
    void on_task_exit(pid_t pid, int wait_status);
    void maybe_finish_task(pid_t pid);
    void forget_pid(uint64_t job_id, pid_t pid);
    void remember_ended(uint64_t job_id, uint32_t attempt);
    // Has this attempt (or a later one) of the job ended here?
    bool attempt_ended(uint64_t job_id, uint32_t attempt) const;
    // Kills what is left in the job's cgroup (daemons, setsid children) and removes it.
    // Returns what the job used on this node, read from the cgroup before it goes.
    protocol::JobUsage end_leftover_processes(uint64_t job_id);
    void report_batch_done(protocol::BatchDoneReport report);
    // Tells the controller to drain this node (and requeue the job's attempt, if named).
    void report_node_fault(const Status& why, uint64_t job_id, uint32_t attempt);
    // Runs the job's epilog here, if its prolog step came here, then `then`.
    void after_epilog(uint64_t job_id, std::function<void()> then);
    Result<UserIdentity> job_user(uint32_t uid, uint32_t gid) const;

    // --- batch jobs an earlier agent left running (agent_adopt.cc)
    // Takes over every recorded shepherd still running, and reports the scripts that ended
    // while no agent ran; forgets records of shepherds that died without a status.
    void adopt_batch_jobs();
    // Watches a shepherd that is not this agent's child through its pidfd.
    bool watch_adopted(pid_t pid);
    // Takes over the step tasks an earlier agent left running (step_record.h): calls their
    // client back, reports the ones that ended meanwhile and streams the rest.
    void adopt_steps();
    void adopt_step(const StepRecord& record);
    void save_batch_record(const LocalJob& job);
    // Removes the job's spool files once its end is acknowledged, unless it runs here again.
    void forget_batch_files(uint64_t job_id);

    asio::io_context& io_;
    const Clock& clock_;
    ClusterConfig config_;
    std::string key_;
    protocol::FrameAuth auth_;  // the cluster key, and MUNGE from users' steps where configured
    AgentOptions options_;
    JobCgroups cgroups_;    // where each job's processes are counted, confined and killed
    JobHooks hooks_;        // the site's prolog and epilog
    CpuLedger cpu_ledger_;  // which of the host's CPUs each job here holds
    protocol::NodeResources resources_;
    // Each of this node's GPUs' device file, by index (empty: unknown, so none is denied).
    std::vector<std::string> gpu_files_;
    protocol::Credential self_;
    int64_t boot_time_ = 0;
    asio::ip::tcp::acceptor acceptor_;
    asio::steady_timer reconnect_timer_;
    size_t controller_index_ = 0;  // of controller_addresses(): the one tried next
    asio::steady_timer heartbeat_timer_;
    // The controller's (RegisterNodeReply); the config's until it has answered.
    int64_t heartbeat_interval_ms_;
    asio::steady_timer limit_timer_;  // fires at the earliest of time_limits_ and warnings_
    TimeLimits time_limits_;
    TimeLimits warnings_;  // when each job's --signal is due
    asio::signal_set child_signals_;
    transport::Dispatcher<> controller_dispatcher_;  // posts to io_
    // Clients' and step managers' messages, both on connections accepted or dialled here.
    transport::Dispatcher<const ConnectionPtr&> client_dispatcher_;
    ConnectionPtr controller_;

    std::map<pid_t, Task> tasks_;
    std::map<uint64_t, LocalJob> jobs_;
    std::map<uint64_t, protocol::BatchDoneReport> unacked_;
    // Recently ended jobs, with their last attempt that ended here: late launches for that
    // attempt or an earlier one are refused, a requeued job's next attempt is not. Bounded,
    // oldest forgotten.
    static constexpr size_t kEndedJobsKept = 10000;
    std::map<uint64_t, uint32_t> ended_jobs_;
    std::deque<uint64_t> ended_order_;
    std::set<ConnectionPtr> clients_;
    std::map<StepKey, ManagedStep> managed_steps_;
    // Adopted shepherds' pidfds, readable once the shepherd has exited.
    std::map<pid_t, std::shared_ptr<asio::posix::stream_descriptor>> adopted_;
    bool stopping_ = false;  // stop() ran: closed pipes and watchers are not task ends
};

}  // namespace cohort::agent
