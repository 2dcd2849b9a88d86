// cohortctld's service: accepts connections, owns the job and node tables on one strand,
// persists through the StateWriter and runs the scheduling pass of the pure core.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "accounting/accounting_writer.h"
#include "common/asio.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/transport/connection.h"
#include "common/transport/dispatcher.h"
#include "scheduler/backfill/backfill_pass.h"
#include "scheduler/backfill/plan.h"
#include "scheduler/ctld/core_inputs.h"
#include "scheduler/ctld/gpu_allocation.h"
#include "scheduler/ctld/heartbeat_inbox.h"
#include "scheduler/ctld/job_table.h"
#include "scheduler/ctld/node_event_log.h"
#include "scheduler/ctld/node_table.h"
#include "scheduler/ctld/reservation_book.h"
#include "scheduler/ctld/roles.h"
#include "scheduler/ctld/state/state_writer.h"
#include "scheduler/ctld/step_table.h"
#include "scheduler/ctld/submit_validation.h"
#include "scheduler/dependency.h"
#include "scheduler/job_array.h"
#include "scheduler/job_rules.h"
#include "scheduler/placement/gpu_select.h"
#include "scheduler/priority/fairshare_usage.h"
#include "scheduler/priority/priority_model.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

namespace asio = boost::asio;
using transport::Connection;

// The accounting records of what a state write changed.
accounting::RecordBatch accounting_records(const std::vector<StateChange>& changes);

class Controller {
public:
    // `clock` must outlive the controller.
    // Sockets are served on `io`'s threads; the controller's state is kept on `control`, run
    // by one thread of its own, so that a long turn (a pass's snapshot) never holds up I/O
    // and a message needs no hand-over between I/O threads.
    Controller(asio::io_context& io,
               asio::io_context& control,
               const Clock& clock,
               ClusterConfig config,
               std::string key,
               std::unique_ptr<StateStore> store,
               std::unique_ptr<accounting::AccountingStore> accounting);

    // Loads the stored state, binds the port and starts accepting. Fails on a bad database
    // or a port in use.
    Status start();
    void stop();

private:
    // --- plumbing (controller.cc)
    // Routes each request and report to its handler on the strand.
    void register_handlers();
    void accept();
    void on_close(const ConnectionPtr& conn);
    int64_t lost_link_grace_ms() const;
    void mark_lost_links_down(int64_t now_ms);
    void on_tick();
    // Time limits no agent enforces: an interactive job's (its command runs on the submit
    // host, and it may run no step) and a hetjob component's other than the leader's (which
    // may run no step either). Each such running job is watched from its start, and ended
    // TIMEOUT on the tick at its end, as slurmctld does; a changed limit is watched anew.
    void watch_time_limit(const Job& job);
    void end_jobs_past_their_limit(int64_t now);
    // Deletes a batch of the history older than purge_jobs_after_days, hourly (or at once
    // again while batches come back full), off the strand.
    void purge_history(int64_t now);
    // The user's name, looked up once per uid.
    const std::string& user_name(uint32_t uid);
    // The job's owner, root and the controller's own user may act on a job.
    Status check_owner(const protocol::Credential& cred, const Job& job) const;
    static std::vector<std::string> own_only(const protocol::Credential& cred,
                                             const std::vector<std::string>& asked);

    template <typename Fn>
    void on_strand(Fn&& fn) {
        asio::post(strand_, std::forward<Fn>(fn));
    }

    // --- client requests (job_handlers.cc)
    // A submission that passed every check, as the record it would be stored as (with the
    // next id); nothing is changed until it is stored.
    struct Admitted {
        protocol::JobRecord job;
        sched::ArraySpec array;  // empty: not an array
    };

    // A hetjob component other than the leader has no script of its own.
    Result<Admitted> admit(const protocol::Credential& cred,
                           protocol::JobSpec spec,
                           bool interactive,
                           bool het_component = false);
    void handle_submit(const ConnectionPtr& conn,
                       const protocol::Credential& cred,
                       protocol::JobSpec spec,
                       bool interactive);
    // #SBATCH hetjob and salloc A : B (`interactive`): the components, the leader first, with
    // consecutive ids from the leader's, in one write.
    void handle_het_submit(const ConnectionPtr& conn,
                           const protocol::Credential& cred,
                           std::vector<protocol::JobSpec> specs,
                           bool test_only,
                           bool interactive);
    // Once a submission is committed: its id to the client (an allocation's client waits on),
    // and a scheduling pass unless it is held.
    void answer_committed(const ConnectionPtr& conn, uint64_t id, bool interactive, bool held);
    // sbatch and srun --test-only: admits the job (srun's has no script), then answers when
    // and where it would start.
    void handle_will_run(const ConnectionPtr& conn,
                         const protocol::Credential& cred,
                         protocol::JobSpec spec);
    void handle_query(const ConnectionPtr& conn, const protocol::QueryJobsRequest& request);
    void handle_nodes(const ConnectionPtr& conn, const protocol::QueryNodesRequest& request);
    void handle_control(const ConnectionPtr& conn,
                        const protocol::Credential& cred,
                        const protocol::JobControlRequest& request);
    void handle_step_create(const ConnectionPtr& conn,
                            const protocol::Credential& cred,
                            const protocol::StepCreateRequest& request);
    void handle_step_complete(const ConnectionPtr& conn,
                              const protocol::Credential& cred,
                              const protocol::StepCompleteRequest& request);
    void handle_job_complete(const ConnectionPtr& conn,
                             const protocol::Credential& cred,
                             const protocol::JobCompleteRequest& request);

    // --- accounting (accounting_handlers.cc)
    void handle_acct(const ConnectionPtr& conn, const protocol::AcctQueryRequest& request);
    void handle_usage_report(const ConnectionPtr& conn,
                             const protocol::Credential& cred,
                             const protocol::UsageReportRequest& request);
    // Records again what the accounting store may lack after a crash, then reads fair-share
    // usage as of `usage_as_of` from it (called by start()).
    void replay_accounting(int64_t usage_as_of);
    // Fair-share usage comes from accounting, the one record of what ran: read once at start
    // (and again until a read succeeds); running jobs are charged live from then on.
    void load_usage_from_accounting(int64_t as_of);
    void apply_accounted_usage(int64_t as_of,
                               const Result<std::vector<accounting::DecayedUsage>>& usage);
    void purge_accounting(int64_t ended_before);
    // Records when nodes begin and end giving no service (called by each tick), once the
    // events a previous controller left open are read.
    void record_node_service(int64_t now);
    // scontrol update job (job_update.cc).
    void handle_update(const ConnectionPtr& conn,
                       const protocol::Credential& cred,
                       const protocol::JobUpdateRequest& request);
    // The record `job` would have with the request's changes, or why they are refused.
    Result<protocol::JobRecord> updated_record(const Job& job,
                                               const protocol::JobUpdateRequest& request,
                                               bool by_operator) const;
    Result<protocol::StepLayout> make_layout(Job& job, const protocol::StepCreateRequest& request);
    // Lays out a step, records it and calls `done` (on the writer thread) once it is durable.
    void open_step(Job& job,
                   const protocol::StepCreateRequest& request,
                   std::function<void(const Result<protocol::StepLayout>&)> done);
    // srun --het-group=0,1: one step over several components of a hetjob, each laid out in
    // its own allocation, with one step id; the layout names the leader and each node's job.
    void open_het_step(const std::vector<Job*>& components,
                       const protocol::StepCreateRequest& request,
                       std::function<void(const Result<protocol::StepLayout>&)> done);
    void close_step(protocol::StepRecord& step,
                    JobState state,
                    int32_t exit_code,
                    int32_t exit_signal);

    // --- priority and fair-share (priority_handlers.cc)
    void handle_priority(const ConnectionPtr& conn, const protocol::PriorityQueryRequest& r);
    // cohort share (sshare): the tree with usage charged up to now.
    void handle_share(const ConnectionPtr& conn, const protocol::Credential& cred);
    // Charges `job` up to `until` (its end, or now) and no further.
    void charge_job(const Job& job, int64_t until);
    // Every pending job's priority (refresh_fairshare first); a pass does the same in the
    // loop that builds its snapshot instead.
    void refresh_priorities(int64_t now);
    void refresh_priority(Job& job, int64_t now);
    void refresh_remainder_priorities(int64_t now);
    // Decays all usage to `now`, charges running jobs' billing up to it, and recomputes
    // every user's fair-share factor from the usage ledger; users with jobs get a leaf.
    void refresh_fairshare(int64_t now);

    // --- advance reservations (reservations.cc)
    void handle_reservation_create(const ConnectionPtr& conn,
                                   const protocol::Credential& cred,
                                   protocol::ReservationCreateRequest request);
    void handle_reservation_delete(const ConnectionPtr& conn,
                                   const protocol::Credential& cred,
                                   const std::string& name);
    void handle_reservation_query(const ConnectionPtr& conn);
    std::string reservation_conflict(const protocol::ReservationRecord& wanted,
                                     const std::string& node) const;
    void delete_reservation(const std::string& name, std::function<void(const Status&)> done);
    void expire_reservations(int64_t now);

    // --- node agents (node_handlers.cc)
    void handle_register(const ConnectionPtr& conn, const protocol::RegisterNodeRequest& r);
    void handle_heartbeat(const protocol::HeartbeatMessage& message);
    void handle_batch_done(const protocol::BatchDoneReport& report);
    // Tells the agent on `node` that the job's BatchDone is durable, so it stops resending it.
    void acknowledge_batch_done(const std::string& node, uint64_t job_id);
    void handle_job_cleaned(const protocol::JobCleanedReport& report);
    void handle_timed_out(const protocol::JobTimedOutReport& report);
    void handle_node_fault(const protocol::NodeFaultReport& report);
    // Of the jobs an agent on `node` says it runs, those that should not run there: ended,
    // never started, or running elsewhere (an earlier attempt, before a requeue).
    std::vector<uint64_t> unknown_jobs(const std::string& node,
                                       const std::vector<uint64_t>& running) const;
    // `node` has no process of `job` left; the job finishes once no node is cleaning.
    void mark_cleaned(Job& job, const std::string& node);

    // --- nodes in operators' hands (node_admin.cc)
    void handle_node_control(const ConnectionPtr& conn,
                             const protocol::Credential& cred,
                             const protocol::NodeControlRequest& request);
    void set_node_reason(NodeEntry& node, const std::string& reason, const std::string& user);
    // DOWN now; `held`: until resumed (return_to_service aside). Its running jobs are
    // requeued or end NODE_FAIL; a `lost` node is not waited for to clean up.
    void take_node_down(NodeEntry& node, bool held, bool lost);
    // The agent stopped responding or its connection closed.
    void mark_node_down(NodeEntry& node, const std::string& reason);
    void resume_node(NodeEntry& node);
    // A DOWN node's agent is heard from again (`registering` or by heartbeat): back in
    // service unless held DOWN (return_to_service 2 lifts the hold at registration).
    bool returns_to_service(NodeEntry& node, bool registering);
    void store_node_admin(const NodeEntry& node);
    void restore_node_admin(const std::vector<protocol::NodeAdminRecord>& records);

    // --- requeue (requeue.cc)
    // May the job run again after a node failure: its --requeue/--no-requeue, else the
    // cluster's job_requeue? Interactive allocations never.
    bool requeue_allowed(const Job& job) const;
    // Below max_batch_requeue restarts; else sets the job's reason to say so.
    bool under_requeue_cap(Job& job);
    // `node` of a running job was lost (or, not `lost`, taken down by an operator): requeue
    // the job (avoiding the node) or end it NODE_FAIL.
    void fail_job_on_node(Job& job, const std::string& node, bool lost = true);
    // Whether the script's exit asks for a requeue (requeue_exit, requeue_exit_hold), and
    // held; nullopt: it does not.
    std::optional<bool> requeue_exit_hold(const Job& job,
                                          const protocol::BatchDoneReport& report) const;
    // Ends the running job's attempt as `attempt_state`; once its processes are gone it is
    // PENDING again (held when `hold`).
    void requeue(Job& job, JobState attempt_state, bool hold, const std::string& clean_node);
    // A requeue asked for by hand: a job with an R: --signal gets it now and is requeued
    // kill_wait_s later (or when its script ends first); any other job at once.
    void requeue_by_request(Job& job, bool hold);
    // Is this attempt of the job between its R: signal and its requeue?
    bool warned_of_requeue(const Job& job) const;
    void finish_warned_requeue(uint64_t job_id, uint32_t attempt);
    // The processes of a requeued job are gone: store the attempt, make the job pending.
    void restart_when_clean(Job& job);
    // Is a node of the job other than `reporting_node` silent (its connection lost)?
    bool awaits_lost_node(const Job& job, const std::string& reporting_node) const;
    // A node came back: judge the batch ends that waited for it.
    void replay_deferred_reports();
    // The job's attempt ended otherwise: its deferred report is answered and dropped.
    void drop_deferred_report(uint64_t job_id);

    // --- preemption (preemption.cc)
    // After a pass: the first waiting job of a preempting QoS that the ending of some jobs
    // of the QoSes it lists would let start now preempts them.
    void preempt_for_waiting(const sched::Decisions& decisions, const sched::Snapshot& snapshot);
    // The priority a pass plans `job` with: a job that preempted others comes before them
    // once they wait again (requeued), so the resources it freed go to it and the two never
    // take turns preempting each other.
    int64_t planned_priority(const Job& job) const;
    // Is this attempt of the job between its warning signal and its end?
    bool being_preempted(const Job& job) const;
    // When this attempt of a job being preempted (or of a component of one) is to have ended,
    // its grace time over: the end the planner expects of it, so that what waits for it is
    // reserved then instead of backfilled over.
    std::optional<int64_t> preempted_end(const Job& job) const;
    // The job and, for a hetjob's leader, its other components still running or completing:
    // what a preemption ends together.
    std::vector<const Job*> running_parts(const Job& job) const;
    // The victim gets its warning signal now; its QoS's grace time later it is requeued or
    // cancelled, as PREEMPTED.
    void start_preemption(Job& victim, uint64_t preemptor);
    void finish_preemption(uint64_t victim_id, uint32_t attempt);

    // --- dependencies (dependencies.cc)
    Status check_dependency(const protocol::JobSpec& spec) const;
    sched::DependencyStatus dependency_status(const Job& job, int64_t now) const;
    // Ends a pending job (telling a waiting cohort run client why).
    void cancel_pending(Job& job, const std::string& reason);
    // Ends an array's remainder: its tasks not yet split off are cancelled as one record.
    void cancel_remainder(ArrayRemainder& remainder, const std::string& reason = "None");

    // --- scheduling and job life cycle (scheduling.cc)
    // Something changed: plan (once the strand is free).
    void request_schedule();
    // The tick's pass, only when it could decide anything new (see changed_since_pass_).
    void schedule_if_due(int64_t now_ms);
    void schedule();
    sched::Snapshot build_snapshot(int64_t now);
    // The nodes, network and partitions (each configured partition's index in
    // `partition_index`) of a snapshot at `now`.
    sched::Snapshot cluster_snapshot(int64_t now,
                                     std::map<std::string, int>& partition_index) const;
    // When and where `components` (one job, or a hetjob's, leader first) would start if they
    // were the only job waiting.
    Result<protocol::WillRunReply> will_run(const std::vector<protocol::JobRecord>& components);
    // The first pass that offers a pending job makes it eligible (EligibleTime).
    void note_eligible(Job& job, int64_t now);
    // Keeps the earliest time after `now` at which a pass could decide differently.
    void note_timed_change(int64_t at, int64_t now);
    void note_timed_changes(const sched::Snapshot& snapshot);
    sched::EligibilityFacts eligibility_facts(const Job& job,
                                              int64_t now,
                                              bool reservation_exists) const;

    // An array's tasks already split off its remainder, as the snapshot's walk counts them.
    struct ArrayTaskCounts {
        int64_t running = 0;
        int64_t waiting = 0;  // pending and not held
    };

    // Splits off the tasks of each array's remainder that the pass may start: as many as
    // `idle_cpus` could hold, within the array's throttle. Returns their ids.
    std::vector<uint64_t> split_startable_tasks(
            int64_t now,
            int64_t idle_cpus,
            const std::map<uint64_t, ArrayTaskCounts>& task_counts,
            const std::map<std::string, int>& window_index);
    // Splits these tasks off the array's remainder into pending jobs, stores both, and
    // returns the tasks' ids.
    std::vector<uint64_t> split_tasks(uint64_t array_id, const std::vector<uint32_t>& indexes);
    // Asks for a pass once `delay_ms` have passed (see next_pass_ms_).
    void delay_pass(int64_t delay_ms);
    // Runs one budgeted step of the current pass; posts the next step until it is done.
    void continue_pass();
    void log_pass() const;
    static constexpr int64_t kSlowPassMs = 100;
    void apply(const sched::Decisions& decisions, const sched::Snapshot& snapshot);
    void launch(uint64_t job_id);
    // Ends a running job: terminate its processes everywhere, then settle on `final_state`.
    void end_job(Job& job, JobState final_state, const std::string& clean_node);
    // Sends `signal` to the running job's `target` processes on each of its nodes.
    void signal_job(const Job& job, int signal, protocol::SignalTarget target);
    void finish_if_clean(Job& job);
    // Mails the job's user about `event` (a MailEvent) when its --mail-type asks (mail.cc).
    void mail(const Job& job, uint32_t event);
    void persist(const Job& job, std::function<void()> after = nullptr);
    void persist(const ArrayRemainder& remainder);
    // Runs `then` on the strand once everything persisted so far is committed.
    void after_durable(std::function<void()> then);
    // Picks each node's GPU set (gpu_allocation.cc) for a job about to start.
    void assign_gpus(Job& job, int32_t gpus_per_node);

    asio::io_context& io_;
    const Clock& clock_;
    asio::strand<asio::io_context::executor_type> strand_;
    transport::Dispatcher<const ConnectionPtr&> dispatcher_;
    asio::ip::tcp::acceptor acceptor_;
    asio::steady_timer tick_;
    // Fires when the agents whose connection closed have had their grace to come back, so a
    // dead node is DOWN then rather than at the next tick.
    asio::steady_timer lost_link_timer_;
    ClusterConfig config_;
    const std::vector<std::string> gres_names_;  // generic resources' kinds, by index
    protocol::FrameAuth auth_;                   // the cluster key, and MUNGE where configured
    protocol::Credential self_;
    Roles roles_;
    // Before writer_, whose thread feeds it until writer_ stops.
    accounting::AccountingWriter accounting_;
    StateWriter writer_;
    HeartbeatInbox heartbeats_;  // filled on the I/O thread, read at each tick

    // Owned by strand_.
    JobTable jobs_;
    NodeTable nodes_;
    StepTable steps_;
    ReservationBook reservations_;
    NodeEventLog node_events_;
    bool node_events_loading_ = false;
    int64_t node_events_retry_at_ = 0;  // unix seconds, after a failed read of the open ones
    std::map<uint64_t, ConnectionPtr> job_clients_;  // interactive jobs' cohort run client
    // Batch ends reported while another node of the job was silent: a rank that lost its
    // peer may be why the script failed, so the job is judged once that node is back or
    // DOWN (then requeued as a node failure). Not acknowledged meanwhile.
    std::map<uint64_t, protocol::BatchDoneReport> deferred_done_;
    std::map<uint32_t, std::string> user_names_;  // uid -> name, looked up once

    // Jobs preempted (by id) for a job that still waits: for which, and which attempt of theirs.
    struct Preemption {
        uint64_t preemptor = 0;
        uint32_t attempt = 0;
        int64_t ends_by = 0;  // when its grace time runs out
    };

    std::map<uint64_t, Preemption> preemptions_;
    std::multimap<int64_t, uint64_t> watched_ends_;  // end time -> job id (watch_time_limit)

    // Jobs told of a requeue by their R: signal: which attempt, and whether to hold it.
    struct WarnedRequeue {
        uint32_t attempt = 0;
        bool hold = false;
    };

    std::map<uint64_t, WarnedRequeue> warned_requeues_;
    const PartitionNodes partition_nodes_;
    const sched::NetworkTopology network_;  // over nodes_, in config order
    const sched::BackfillOptions backfill_;
    sched::FairShareUsage usage_;
    // Passes wait for usage from accounting at start, for at most kUsageWait_s: a pass with
    // none would rank every user as if they had never run.
    bool usage_loading_ = true;
    int64_t usage_wait_until_ = 0;    // unix seconds
    int64_t usage_retry_at_ = 0;      // unix seconds; 0: no read to retry
    bool usage_read_failed_ = false;  // the last read of it failed (for the log line)
    static constexpr int64_t kUsageWait_s = 10;
    static constexpr int64_t kUsageRetry_s = 30;
    sched::PriorityModel priority_;
    // The pass in progress, stepped across strand turns so requests are served between steps.
    std::unique_ptr<sched::PlanPass> pass_;
    bool pass_again_ = false;  // something changed while it ran: plan anew when it ends
    // The last pass's pending jobs, their memory kept for the next pass until a quiet tick.
    std::vector<sched::PendingJob> spare_pending_;
    size_t last_pass_pending_ = 0;
    int64_t pass_started_ms_ = 0;  // steady clock, when its snapshot was taken
    // A pass holds the strand; the next starts no sooner than the last one took, so requests
    // get at least half of the strand while passes run back to back (steady clock).
    int64_t next_pass_ms_ = 0;
    asio::steady_timer pass_delay_{strand_};
    bool pass_delayed_ = false;
    // A pass decides the same as the last one unless something changed since (a request, a
    // job or node event, any job stored), a time it depends on arrived (a begin time, a
    // reservation's edge, a running job's expected end, a switch wait's end), or priorities
    // aged for a minute, as Slurm's sched_interval. Ticks skip the others: at 100,000 pending
    // jobs on 10,000 nodes a pass per second would take a quarter of a core.
    bool changed_since_pass_ = true;
    int64_t next_timed_change_ = 0;  // unix seconds
    static constexpr int64_t kIdlePassIntervalMs = 60000;
    // Heartbeat intervals a node whose connection closed has to reconnect before it is DOWN.
    static constexpr int64_t kReconnectGraceIntervals = 2;
    size_t pass_steps_ = 0;
    int64_t pass_snapshot_ms_ = 0;      // how long building its snapshot held the strand
    int64_t pass_longest_step_ms_ = 0;  // the longest a step (plan and apply) held it
    size_t pass_starts_ = 0;
    uint64_t next_job_id_ = 1;
    bool purging_ = false;
    int64_t next_purge_at_ = 0;
    int64_t next_accounting_purge_at_ = 0;
    static constexpr int64_t kKeepAliveInterval_ms = 1000;
    int64_t next_keep_alive_ms_ = 0;
    bool schedule_posted_ = false;
};

}  // namespace cohort::ctld
