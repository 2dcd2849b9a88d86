// Jobs that outlive their agent: each batch script and each step task runs under a
// cohort-shepherd that survives a restart of cohortd. The next agent on the node reads the
// records in its spool directory, adopts the shepherds still running (watching them through
// pidfds, as they are not its children) and reports the programs that ended while no agent
// ran. A step's output pipes are reopened from its shepherds and its client is called back.
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launcher/agent.h"

namespace cohort::agent {

void Agent::save_batch_record(const LocalJob& job) {
    const BatchRecord& record = *job.batch;
    if (Status saved =
                write_batch_record(batch_files(options_.spool_dir, record.job_id).record, record);
        !saved) {
        // The job runs on; only a restart of this agent would not find it.
        spdlog::warn("job {}: {}", record.job_id, saved.message());
    }
}

void Agent::forget_batch_files(uint64_t job_id) {
    auto job = jobs_.find(job_id);
    if (job != jobs_.end() && !job->second.pids.empty()) {
        return;  // a later attempt runs here now
    }
    const BatchFiles files = batch_files(options_.spool_dir, job_id);
    for (const std::string* path : {&files.record, &files.status, &files.script}) {
        unlink(path->c_str());
    }
}

void Agent::adopt_batch_jobs() {
    for (const std::string& path : batch_record_paths(options_.spool_dir)) {
        auto record = read_batch_record(path);
        if (!record) {
            spdlog::warn("ignoring {}", record.status().message());
            continue;
        }
        if (!shepherd_running(*record)) {
            if (auto exit =
                        read_batch_exit(batch_files(options_.spool_dir, record->job_id).status)) {
                spdlog::info("job {}: its batch script ended while no agent ran ({}:{})",
                             record->job_id, exit->exit_code, exit->signal);
                remember_ended(record->job_id, record->attempt);
                report_batch_done({record->job_id, options_.name, exit->exit_code, exit->signal,
                                   false, exit->error, record->attempt,
                                   end_leftover_processes(record->job_id)});
            } else {
                // Gone without a word (the machine rebooted, or it was killed): not reported,
                // so the controller counts the job lost with the node.
                forget_batch_files(record->job_id);
            }
            continue;
        }
        if (!watch_adopted(record->shepherd)) {
            continue;
        }
        Task task;
        task.job_id = record->job_id;
        task.batch = true;
        task.status_path = batch_files(options_.spool_dir, record->job_id).status;
        tasks_[record->shepherd] = std::move(task);
        LocalJob& job = jobs_[record->job_id];
        job.attempt = record->attempt;
        job.pids.insert(record->shepherd);
        job.warned = record->warned;
        job.batch = *record;
        if (record->end_time >= 0) {
            arm_time_limit(record->job_id, record->end_time);
            arm_warning(record->job_id, record->signal, record->end_time);
        }
        spdlog::info("job {}: adopted its running batch script (shepherd {})", record->job_id,
                     record->shepherd);
    }
}

bool Agent::watch_adopted(pid_t pid) {
    const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) {
        spdlog::error(
                "cannot watch shepherd {} (pidfd_open: {}); its job is left to the "
                "controller as lost",
                pid, std::strerror(errno));
        return false;
    }
    auto descriptor = std::make_shared<asio::posix::stream_descriptor>(io_, fd);
    adopted_[pid] = descriptor;
    descriptor->async_wait(asio::posix::stream_descriptor::wait_read,
                           [this, pid](boost::system::error_code ec) {
                               if (ec) {
                                   return;  // the agent is stopping
                               }
                               adopted_.erase(pid);
                               // Not our child, so no wait status: without a status file the
                               // shepherd was killed, and with it the script.
                               on_task_exit(pid, SIGKILL);
                           });
    return true;
}

void Agent::save_step_record(const StepSession& session) {
    const std::string path = step_record_path(options_.spool_dir, session.job_id, session.step_id);
    if (Status saved = write_step_record(path, session.record); !saved) {
        // The step runs on; only a restart of this agent would lose it.
        spdlog::warn("step {}.{}: {}", session.job_id, session.step_id, saved.message());
    }
}

void Agent::adopt_steps() {
    for (const std::string& path : step_record_paths(options_.spool_dir)) {
        auto record = read_step_record(path);
        if (!record) {
            spdlog::warn("ignoring {}", record.status().message());
            unlink(path.c_str());
            continue;
        }
        adopt_step(*record);
    }
}

namespace {

// The shepherd's descriptor `fd` (a pipe's read end it holds), opened again here; -1 when it
// is gone.
int reopen_held_pipe(pid_t shepherd, int fd) {
    if (fd < 0) {
        return -1;
    }
    const std::string path = fmt::format("/proc/{}/fd/{}", shepherd, fd);
    return open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

}  // namespace

void Agent::adopt_step(const StepRecord& record) {
    auto session = std::make_shared<StepSession>();
    session->job_id = record.job_id;
    session->step_id = record.step_id;
    session->local_job = record.local_job;
    session->shm_dir = record.shm_dir;
    session->record = record;
    LocalJob& job = jobs_[record.local_job];
    job.attempt = std::max(job.attempt, record.attempt);
    if (!job.owner_uid && record.owner_uid != 0) {
        job.owner_uid = record.owner_uid;
    }
    if (record.job_end_time != 0) {
        if (!time_limits_.has(record.local_job)) {
            arm_time_limit(record.local_job, record.job_end_time);
        }
        arm_warning(record.local_job, record.job_signal, record.job_end_time);
    }

    // Each task: still running (adopted, its pipes reopened), ended with a status (reported
    // once the client is back), or gone without one (killed with its shepherd).
    struct Stream {
        pid_t pid;
        int fd;
        uint32_t rank;
        uint8_t stream;
    };

    std::vector<Stream> streams;
    std::vector<protocol::TaskExitMessage> ended;
    for (const StepTaskRecord& entry : record.tasks) {
        Task task;
        task.job_id = record.local_job;
        task.rank = entry.rank;
        task.session = session;
        task.status_path = step_task_status_path(options_.spool_dir, record.job_id, record.step_id,
                                                 entry.rank);
        if (!same_process_running(entry.shepherd, entry.shepherd_start)) {
            take_shepherd_exit(task, W_EXITCODE(0, SIGKILL));
            ended.push_back({entry.rank, task.exit_code, task.exit_signal,
                             task.error.empty() ? ""
                                                : fmt::format("rank {} on {}: {}", entry.rank,
                                                              options_.name, task.error)});
            continue;
        }
        for (const auto& [fd, stream] : {std::pair{entry.out_fd, uint8_t{1}}, {entry.err_fd, 2}}) {
            if (const int reopened = reopen_held_pipe(entry.shepherd, fd); reopened >= 0) {
                streams.push_back({entry.shepherd, reopened, entry.rank, stream});
                task.open_streams++;
            }
        }
        tasks_[entry.shepherd] = std::move(task);
        job.pids.insert(entry.shepherd);
        session->pids.push_back(entry.shepherd);
        session->tasks_left++;
    }
    spdlog::info("step {}.{}: adopted {} running task(s), {} ended meanwhile", record.job_id,
                 record.step_id, session->pids.size(), ended.size());
    if (!record.signal.empty() && !record.warned && record.job_end_time != 0) {
        arm_step_warning(session, record.signal, record.job_end_time);
    }
    const protocol::StepAttachMessage attach{record.job_id, record.step_id, record.node_index};
    // The tasks are watched once the client is called back (or known gone), so that no exit
    // is reported before it can be sent.
    call_client_back(record.client_host, record.client_port, attach,
                     [this, session, streams, ended](Result<ConnectionPtr> called_back) {
                         if (stopping_) {
                             return;
                         }
                         if (called_back) {
                             session->client = *called_back;
                         } else {
                             // As when a client goes away mid-step: its tasks go with it.
                             spdlog::warn("step {}.{}: {}; ending its tasks here", session->job_id,
                                          session->step_id, called_back.status().message());
                             for (pid_t pid : session->pids) {
                                 killpg(pid, SIGKILL);
                             }
                         }
                         for (const Stream& stream : streams) {
                             watch_output(stream.pid, stream.fd, stream.rank, stream.stream,
                                          session);
                         }
                         for (pid_t pid : session->pids) {
                             if (!watch_adopted(pid)) {
                                 on_task_exit(pid, W_EXITCODE(0, SIGKILL));
                             }
                         }
                         for (const protocol::TaskExitMessage& exit : ended) {
                             send_to_client(*session, exit);
                         }
                         if (session->tasks_left == 0) {
                             end_step_session(*session);
                         }
                     });
}

}  // namespace cohort::agent
