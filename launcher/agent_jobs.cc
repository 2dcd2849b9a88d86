// Agent job handling: batch scripts, step tasks, output streaming, signals, time limits.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <set>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/filename_pattern.h"
#include "common/hostlist.h"
#include "common/write_all.h"
#include "launcher/agent.h"
#include "launcher/gpu_devices.h"
#include "launcher/task_env.h"

namespace cohort::agent {
namespace {

// A spool file only root and the job's owner may read: made anew (never through a link
// left in its place), readable by nobody else from its first byte, then given to the owner.
Status write_private_file(const std::string& path,
                          const std::string& content,
                          uint32_t uid,
                          uint32_t gid) {
    unlink(path.c_str());
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
    if (fd < 0) {
        return Status::io_error(fmt::format("{}: {}", path, std::strerror(errno)));
    }
    if (!write_all(fd, content)) {
        const std::string why = std::strerror(errno);
        close(fd);
        return Status::io_error(fmt::format("{}: {}", path, why));
    }
    if (geteuid() == 0 && fchown(fd, uid, gid) != 0) {
        spdlog::warn("chown of {} to {}:{} failed: {}", path, uid, gid, std::strerror(errno));
    }
    close(fd);
    return Status::ok();
}

// The line that separates a requeued job's attempts in its output file.
std::string attempt_banner(const protocol::JobRecord& job, int64_t now) {
    char when[32];
    const time_t at = static_cast<time_t>(now);

    struct tm local {};

    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", localtime_r(&at, &local));
    return fmt::format("cohort: job {} attempt {} (restart {}) on {} at {}\n", job.job_id,
                       job.restart_count + 1, job.restart_count, fmt::join(job.nodes, ","), when);
}

}  // namespace

Result<UserIdentity> Agent::job_user(uint32_t uid, uint32_t gid) const {
    if (self_.uid != 0 && uid != self_.uid) {
        return Status::denied(
                fmt::format("cohortd on {} runs as uid {} and cannot start processes "
                            "as uid {} (run it as root for multi-user clusters)",
                            options_.name, self_.uid, uid));
    }
    return lookup_user(uid, gid);
}

void Agent::report_batch_done(protocol::BatchDoneReport report) {
    report.node = options_.name;
    unacked_[report.job_id] = report;
    send_controller(report);
}

bool Agent::batch_launched_already(const protocol::JobRecord& job) const {
    auto earlier = jobs_.find(job.job_id);
    return attempt_ended(job.job_id, job.restart_count)
           || (earlier != jobs_.end() && earlier->second.attempt >= job.restart_count);
}

void Agent::report_node_fault(const Status& why, uint64_t job_id, uint32_t attempt) {
    spdlog::error("{}: the node drains{}", why.message(),
                  job_id != 0 ? fmt::format(" and job {} is requeued", job_id) : "");
    send_controller(protocol::NodeFaultReport{options_.name, why.message(), job_id, attempt});
}

void Agent::after_epilog(uint64_t job_id, std::function<void()> then) {
    hooks_.epilog(job_id, [this, then = std::move(then)](const Status& ran) {
        if (!ran) {
            report_node_fault(ran, 0, 0);  // first, so the node takes no job meanwhile
        }
        then();
    });
}

void Agent::launch_batch(const protocol::LaunchBatchRequest& request) {
    const protocol::JobRecord& job = request.job;
    if (batch_launched_already(job)) {
        return;  // a duplicate launch after a controller restart
    }
    const JobHookContext context{job.job_id,
                                 job.restart_count,
                                 job.uid,
                                 job.gid,
                                 job.user_name,
                                 job.partition,
                                 compress_hostlist(job.nodes),
                                 request.cluster_name,
                                 options_.name};
    hooks_.prolog(context, [this, request](const Status& ran) {
        if (!ran) {
            report_node_fault(ran, request.job.job_id, request.job.restart_count);
            return;
        }
        start_batch(request);
    });
}

void Agent::start_batch(const protocol::LaunchBatchRequest& request) {
    const protocol::JobRecord& job = request.job;
    if (batch_launched_already(job)) {
        return;  // launched again, or ended, while its prolog ran
    }
    protocol::BatchDoneReport failed{job.job_id, options_.name,     1, 0, false,
                                     "",         job.restart_count, {}};
    auto user = job_user(job.uid, job.gid);
    if (!user) {
        failed.error = user.status().message();
        report_batch_done(failed);
        return;
    }
    const BatchFiles files = batch_files(options_.spool_dir, job.job_id);
    const std::string& script_path = files.script;
    if (Status written = write_private_file(script_path, job.spec.script, job.uid, job.gid);
        !written) {
        failed.error = "cannot write the batch script: " + written.message();
        report_batch_done(failed);
        return;
    }
    FilenamePatternContext pattern;
    pattern.job_id = job.job_id;
    pattern.job_name = job.spec.name;
    pattern.node_name = options_.name;
    pattern.user = job.user_name;
    pattern.restart_count = job.restart_count;
    pattern.task_id = 0;  // the batch script is task 0 of the batch step
    if (job.is_array_task()) {
        pattern.array_job_id = job.array_job_id;
        pattern.array_task_id = job.array_task_id;
    }
    const std::string cwd = job.spec.cwd.empty() ? "/tmp" : job.spec.cwd;

    // The shepherd writes how the script ended here; the agent opens it so the file stays
    // root's while a shepherd running as the user can write it.
    const int status_fd =
            open(files.status.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (status_fd < 0) {
        failed.error = fmt::format("cannot create {}: {}", files.status, std::strerror(errno));
        report_batch_done(failed);
        return;
    }
    SpawnSpec spec;
    spec.argv = {options_.shepherd_binary, "--status-fd", std::to_string(status_fd), "--",
                 script_path};
    spec.inherit_fds = {status_fd};
    spec.argv.insert(spec.argv.end(), job.spec.script_args.begin(), job.spec.script_args.end());
    BatchContext context{request.cluster_name,
                         options_.name,
                         resources_.cpus,
                         job.spec.submit_host,
                         topology_address(config_.network, options_.name),
                         options_.address,
                         pick_free_port(io_, options_.address)};
    EnvMap env = batch_environment(job, context);
    add_het_environment(env, request.het_components);
    spec.env = env_to_strings(env);
    spec.cwd = cwd;
    spec.user = *user;
    spec.switch_user = self_.uid == 0 && job.uid != 0;
    // The CPUs bound to its GPUs, else as many of the host's as it holds on its first node,
    // where the batch script runs (whole cores with --hint=nomultithread).
    spec.cpus = job.gpu_alloc.empty() ? cpu_ledger_.take(
                        job.job_id, job.cpus_per_node.empty() ? 0 : job.cpus_per_node.front(),
                        protocol::one_thread_per_core(job.spec.hint))
                                      : batch_cpus(job);
    const std::vector<int32_t> gpus_here =
            job.gpu_alloc.empty() ? std::vector<int32_t>{} : job.gpu_alloc.front().gpus;
    Status confined = cgroups_.create(job.job_id, spec.cpus, job.mem_per_node_mib,
                                      denied_gpu_rules(gpu_files_, gpus_here));
    if (confined) {
        confined = cgroups_.create_step(job.job_id, "batch");
    }
    if (!confined) {
        // As Slurm's task/cgroup: the script does not run unconfined, beyond its limits and
        // devices. The job fails with the reason, shown by `show job`.
        close(status_fd);
        end_leftover_processes(job.job_id);  // gives its CPUs back, removes what was made
        failed.error = "cannot confine the job in its cgroup: " + confined.message();
        spdlog::error("job {}: {}", job.job_id, failed.error);
        report_batch_done(failed);
        return;
    }
    spec.cgroup_procs = cgroups_.procs_files(job.job_id, "batch");
    // The cgroup holds every thread of a whole-core job's cores; its tasks run on one of each.
    if (std::vector<int> threads = cpu_ledger_.one_thread_per_core(job.job_id); !threads.empty()) {
        spec.cpus = std::move(threads);
    }
    spec.stdout_path =
            path_from(expand_filename_pattern(
                              job.spec.output.empty()
                                      ? (job.is_array_task() ? "slurm-%A_%a.out" : "slurm-%j.out")
                                      : job.spec.output,
                              pattern),
                      cwd);
    // Slurm truncates the output of a requeued job; here a later attempt appends to it after
    // a banner line, unless --open-mode says otherwise.
    spec.append =
            job.spec.open_mode == "append" || (job.spec.open_mode.empty() && job.restart_count > 0);
    if (job.restart_count > 0 && spec.append) {
        spec.output_banner = attempt_banner(job, clock_.unix_seconds());
    }
    if (!job.spec.error.empty()) {
        spec.stderr_path = path_from(expand_filename_pattern(job.spec.error, pattern), cwd);
    }
    auto spawned = spawn_process(spec);
    close(status_fd);
    if (!spawned) {
        end_leftover_processes(job.job_id);
        failed.error = spawned.status().message();
        spdlog::warn("job {}: {}", job.job_id, failed.error);
        report_batch_done(failed);
        return;
    }
    Task task;
    task.job_id = job.job_id;
    task.batch = true;
    task.status_path = files.status;
    tasks_[spawned->pid] = std::move(task);
    LocalJob& local = jobs_[job.job_id];
    local.attempt = job.restart_count;
    local.owner_uid = job.uid;
    local.pids.insert(spawned->pid);
    const int64_t end_time = job.time_limit_s >= 0 ? job.start_time + job.time_limit_s : -1;
    local.batch = BatchRecord{job.job_id,   job.restart_count,
                              spawned->pid, process_start_ticks(spawned->pid),
                              end_time,     job.spec.signal};
    save_batch_record(local);
    if (end_time >= 0) {
        arm_time_limit(job.job_id, end_time);
        arm_warning(job.job_id, job.spec.signal, end_time);
    }
    spdlog::info("job {}: batch script started under shepherd {}", job.job_id, spawned->pid);
}

void Agent::watch_output(
        pid_t pid, int fd, uint32_t rank, uint8_t stream, std::shared_ptr<StepSession> session) {
    auto descriptor = std::make_shared<asio::posix::stream_descriptor>(io_, fd);
    session->outputs.push_back(descriptor);
    auto buffer = std::make_shared<std::array<char, 65536>>();
    auto read_more = std::make_shared<std::function<void()>>();
    *read_more = [this, descriptor, buffer, read_more, pid, rank, stream, session] {
        descriptor->async_read_some(
                asio::buffer(*buffer), [this, descriptor, buffer, read_more, pid, rank, stream,
                                        session](boost::system::error_code ec, size_t n) {
                    if (stopping_) {
                        *read_more = nullptr;  // the next agent reads on
                        return;
                    }
                    if (n > 0) {
                        send_to_client(*session,
                                       protocol::TaskOutputMessage{rank, stream,
                                                                   std::string(buffer->data(), n)});
                    }
                    if (ec) {
                        *read_more = nullptr;  // break the self-reference
                        auto it = tasks_.find(pid);
                        if (it != tasks_.end()) {
                            it->second.open_streams--;
                            maybe_finish_task(pid);
                        }
                        return;
                    }
                    (*read_more)();
                });
    };
    (*read_more)();
}

void Agent::signal_step(const protocol::SignalStepRequest& request) {
    for (const auto& [pid, task] : tasks_) {
        if (task.session && task.session->job_id == request.job_id
            && task.session->step_id == request.step_id && !task.exited) {
            killpg(pid, request.signal);
        }
    }
    auto waiting = managed_steps_.find({request.job_id, request.step_id});
    if (waiting != managed_steps_.end() && !waiting->second.launched) {
        waiting->second.pending_signal = request.signal;
    }
}

void Agent::arm_time_limit(uint64_t job_id, int64_t end_time) {
    time_limits_.set(job_id, end_time);
    rearm_limit_timer();
}

void Agent::move_end_time(const protocol::JobEndTimeMessage& message) {
    auto it = jobs_.find(message.job_id);
    if (it == jobs_.end() || it->second.attempt != message.restart_count || it->second.timed_out
        || it->second.terminating) {
        return;
    }
    LocalJob& job = it->second;
    if (job.batch) {
        if (job.batch->end_time == message.end_time) {
            return;  // what it had (an agent registering hears every job's end again)
        }
        job.batch->end_time = message.end_time;
        save_batch_record(job);  // an agent restarted later arms what is current
    }
    spdlog::info(
            "job {}: its time limit now ends it {}", message.job_id,
            message.end_time < 0 ? std::string("never") : fmt::format("at {}", message.end_time));
    if (message.end_time < 0) {
        time_limits_.erase(message.job_id);
        warnings_.erase(message.job_id);
    } else {
        time_limits_.set(message.job_id, message.end_time);
        if (warnings_.has(message.job_id)) {
            warnings_.set(message.job_id, message.end_time - job.warning.seconds_before);
        } else if (job.batch) {
            arm_warning(message.job_id, job.batch->signal, message.end_time);  // had no limit
        }
    }
    rearm_limit_timer();
    // Steps' own --signal follows the job's end too (each session once: it has many tasks).
    std::set<StepSession*> moved;
    for (auto& [pid, task] : tasks_) {
        const std::shared_ptr<StepSession>& session = task.session;
        if (!session || session->local_job != message.job_id || session->warning_spec.empty()
            || session->warned || !moved.insert(session.get()).second) {
            continue;
        }
        if (message.end_time < 0) {
            session->warning->cancel();
        } else {
            arm_step_warning(session, session->warning_spec, message.end_time);
        }
    }
}

void Agent::arm_warning(uint64_t job_id, const std::string& signal_spec, int64_t end_time) {
    auto warning = parse_warning_signal("--signal", signal_spec);
    auto job = jobs_.find(job_id);
    if (!warning || warning->signal == 0 || warning->at_preemption_only || job == jobs_.end()
        || job->second.warned || warnings_.has(job_id)) {
        return;  // validated at submit; R: waits for a preemption, not the limit
    }
    const bool batch_here =
            std::any_of(job->second.pids.begin(), job->second.pids.end(), [this](pid_t pid) {
                auto task = tasks_.find(pid);
                return task != tasks_.end() && task->second.batch;
            });
    if (warning->batch_shell_only && !batch_here) {
        return;  // B: is for the batch shell's node alone
    }
    job->second.warning = *warning;
    warnings_.set(job_id, end_time - warning->seconds_before);
    rearm_limit_timer();
}

void Agent::rearm_limit_timer() {
    std::optional<int64_t> next = time_limits_.next_end();
    if (const std::optional<int64_t> warn = warnings_.next_end();
        warn && (!next || *warn < *next)) {
        next = warn;
    }
    if (!next) {
        limit_timer_.cancel();
        return;
    }
    limit_timer_.expires_after(
            std::chrono::seconds(std::max<int64_t>(*next - clock_.unix_seconds(), 0)));
    limit_timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            enforce_time_limits();
        }
    });
}

void Agent::enforce_time_limits() {
    for (uint64_t job_id : warnings_.take_expired(clock_.unix_seconds())) {
        auto it = jobs_.find(job_id);
        if (it == jobs_.end() || it->second.warned) {
            continue;
        }
        const WarningSignal& warning = it->second.warning;
        spdlog::info("job {}: sending its --signal {} ({} s before its time limit)", job_id,
                     sigabbrev_np(warning.signal), warning.seconds_before);
        it->second.warned = true;
        if (it->second.batch) {
            it->second.batch->warned = true;
            save_batch_record(it->second);
        }
        signal_job(it->second, warning.signal,
                   warning.batch_shell_only ? protocol::SignalTarget::kBatchShell
                                            : protocol::SignalTarget::kSteps);
    }
    for (uint64_t job_id : time_limits_.take_expired(clock_.unix_seconds())) {
        auto it = jobs_.find(job_id);
        if (it == jobs_.end() || it->second.timed_out) {
            continue;
        }
        spdlog::info("job {}: time limit reached on {}", job_id, options_.name);
        it->second.timed_out = true;
        send_controller(protocol::JobTimedOutReport{job_id, options_.name});
        terminate_job(job_id, 0, it->second.attempt);
    }
    rearm_limit_timer();
}

void Agent::signal_job(const LocalJob& job, int signal, protocol::SignalTarget target) {
    for (pid_t pid : job.pids) {
        auto task = tasks_.find(pid);
        const bool batch = task != tasks_.end() && task->second.batch;
        if (target == protocol::SignalTarget::kFull) {
            killpg(pid, signal);
        } else if (target == protocol::SignalTarget::kBatchShell && batch) {
            // Queued to the shepherd, which passes it to the shell alone: its children keep
            // running.
            sigqueue(pid, signal, sigval{});
        } else if (target == protocol::SignalTarget::kSteps && !batch) {
            killpg(pid, signal);
        }
    }
}

void Agent::terminate_job(uint64_t job_id,
                          int signal,
                          uint32_t attempt,
                          protocol::SignalTarget target) {
    auto it = jobs_.find(job_id);
    if (it != jobs_.end() && it->second.attempt > attempt) {
        return;  // meant for an earlier attempt, whose processes are gone
    }
    if (signal == 0) {
        remember_ended(job_id, attempt);
    }
    if (it == jobs_.end() || it->second.pids.empty()) {
        if (it != jobs_.end()) {
            jobs_.erase(it);
            time_limits_.erase(job_id);
            warnings_.erase(job_id);
        }
        if (signal == 0) {
            protocol::JobCleanedReport cleaned{job_id, options_.name, attempt,
                                               end_leftover_processes(job_id)};
            after_epilog(job_id, [this, cleaned] { send_controller(cleaned); });
        }
        return;
    }
    LocalJob& job = it->second;
    if (signal != 0) {
        signal_job(job, signal, target);
        return;
    }
    job.report_clean = true;
    if (job.terminating) {
        return;
    }
    job.terminating = true;
    // SIGCONT first so stopped tasks can act on SIGTERM; SIGKILL after the grace period.
    // The cgroup also holds what left the process groups (setsid, daemons). Each process gets
    // one SIGTERM: a second one would end a subshell that a shell's TERM trap just forked.
    for (pid_t pid : job.pids) {
        killpg(pid, SIGCONT);
        killpg(pid, SIGTERM);
    }
    for (pid_t pid : cgroups_.processes(job_id)) {
        if (job.pids.contains(getpgid(pid))) {
            continue;  // signalled with its process group
        }
        kill(pid, SIGCONT);
        kill(pid, SIGTERM);
    }
    job.kill_timer = std::make_shared<asio::steady_timer>(io_);
    job.kill_timer->expires_after(std::chrono::seconds(config_.kill_wait_s));
    job.kill_timer->async_wait([this, job_id](boost::system::error_code ec) {
        auto found = jobs_.find(job_id);
        if (ec || found == jobs_.end()) {
            return;
        }
        for (pid_t pid : found->second.pids) {
            killpg(pid, SIGKILL);
        }
        cgroups_.kill_all(job_id);
    });
}

void Agent::reap_children() {
    int status = 0;
    pid_t pid = 0;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        on_task_exit(pid, status);
    }
    child_signals_.async_wait([this](const boost::system::error_code& e, int) {
        if (!e) {
            reap_children();
        }
    });
}

void Agent::on_task_exit(pid_t pid, int wait_status) {
    if (hooks_.reaped(pid, wait_status)) {
        return;
    }
    auto it = tasks_.find(pid);
    if (it == tasks_.end()) {
        on_step_manager_exit(pid);  // or a child that failed before exec: already reported
        return;
    }
    Task& task = it->second;
    task.exited = true;
    take_shepherd_exit(task, wait_status);
    // Whatever the task left behind in its process group goes with it.
    killpg(pid, SIGKILL);
    maybe_finish_task(pid);
}

void Agent::take_shepherd_exit(Task& task, int wait_status) {
    if (auto exit = read_batch_exit(task.status_path)) {
        task.exit_code = exit->exit_code;
        task.exit_signal = exit->signal;
        task.error = exit->error;
        return;
    }
    task.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0;
    task.exit_signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
}

void Agent::maybe_finish_task(pid_t pid) {
    auto it = tasks_.find(pid);
    if (it == tasks_.end() || !it->second.exited || it->second.open_streams > 0) {
        return;
    }
    Task task = std::move(it->second);
    tasks_.erase(it);
    if (task.batch) {
        auto job = jobs_.find(task.job_id);
        bool timed_out = job != jobs_.end() && job->second.timed_out;
        const uint32_t attempt = job != jobs_.end() ? job->second.attempt : 0;
        if (job != jobs_.end()) {
            for (pid_t other : job->second.pids) {
                killpg(other, SIGKILL);  // steps outlive no batch script
            }
        }
        spdlog::info("job {}: batch script exited ({}:{})", task.job_id, task.exit_code,
                     task.exit_signal);
        // Nor does anything it started: the controller counts this node clean once told.
        protocol::BatchDoneReport done{
                task.job_id, options_.name, task.exit_code, task.exit_signal,
                timed_out,   task.error,    attempt,        end_leftover_processes(task.job_id)};
        remember_ended(task.job_id, attempt);
        after_epilog(task.job_id, [this, done] { report_batch_done(done); });
    } else {
        StepSession& session = *task.session;
        send_to_client(session,
                       protocol::TaskExitMessage{
                               task.rank, task.exit_code, task.exit_signal,
                               task.error.empty() ? ""
                                                  : fmt::format("rank {} on {}: {}", task.rank,
                                                                options_.name, task.error)});
        if (--session.tasks_left == 0) {
            end_step_session(session);
        }
    }
    forget_pid(task.job_id, pid);
}

void Agent::remember_ended(uint64_t job_id, uint32_t attempt) {
    auto [it, fresh] = ended_jobs_.try_emplace(job_id, attempt);
    it->second = std::max(it->second, attempt);
    if (!fresh) {
        return;
    }
    ended_order_.push_back(job_id);
    if (ended_order_.size() > kEndedJobsKept) {
        ended_jobs_.erase(ended_order_.front());
        ended_order_.pop_front();
    }
}

protocol::JobUsage Agent::end_leftover_processes(uint64_t job_id) {
    if (const int killed = cgroups_.kill_all(job_id); killed > 0) {
        spdlog::info("job {}: killed {} process(es) left in its cgroup", job_id, killed);
    }
    cpu_ledger_.release(job_id);
    protocol::JobUsage used = cgroups_.usage(job_id);
    used.max_rss_node = options_.name;
    if (used.oom_kills > 0) {
        spdlog::warn("job {}: {} process(es) killed for exceeding the job's memory", job_id,
                     used.oom_kills);
    }
    cgroups_.remove(job_id);
    return used;
}

bool Agent::attempt_ended(uint64_t job_id, uint32_t attempt) const {
    auto it = ended_jobs_.find(job_id);
    return it != ended_jobs_.end() && it->second >= attempt;
}

void Agent::forget_pid(uint64_t job_id, pid_t pid) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
        return;
    }
    it->second.pids.erase(pid);
    if (!it->second.pids.empty()) {
        return;
    }
    if (it->second.report_clean) {
        protocol::JobCleanedReport cleaned{job_id, options_.name, it->second.attempt,
                                           end_leftover_processes(job_id)};
        after_epilog(job_id, [this, cleaned] { send_controller(cleaned); });
    }
    // Keep the job entry (and its time limit) while steps may still come, unless it ended.
    if (it->second.report_clean || attempt_ended(job_id, it->second.attempt)) {
        jobs_.erase(it);
        time_limits_.erase(job_id);
        warnings_.erase(job_id);
    }
}

}  // namespace cohort::agent
