// Batch jobs that outlive their agent: each batch script runs under a cohort-shepherd that
// survives a restart of cohortd. The next agent on the node reads the records in its spool
// directory, adopts the shepherds still running (watching them through pidfds, as they are
// not its children) and reports the scripts that ended while no agent ran.
#include <csignal>
#include <cstring>

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

}  // namespace cohort::agent
