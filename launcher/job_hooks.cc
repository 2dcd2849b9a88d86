#include "launcher/job_hooks.h"

#include <csignal>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include "launcher/process.h"

namespace cohort::agent {

JobHooks::JobHooks(asio::io_context& io, std::string prolog, std::string epilog, int64_t timeout_s)
    : io_(io), prolog_(std::move(prolog)), epilog_(std::move(epilog)), timeout_s_(timeout_s) {}

std::vector<std::string> JobHooks::environment(const JobHookContext& context,
                                               const std::string& script_context) {
    const std::string id = std::to_string(context.job_id);
    return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "SLURM_SCRIPT_CONTEXT=" + script_context,
            "SLURM_JOB_ID=" + id,
            "SLURM_JOBID=" + id,
            "SLURM_JOB_USER=" + context.user,
            "SLURM_JOB_UID=" + std::to_string(context.uid),
            "SLURM_JOB_GID=" + std::to_string(context.gid),
            "SLURM_JOB_PARTITION=" + context.partition,
            "SLURM_JOB_NODELIST=" + context.nodelist,
            "SLURM_CLUSTER_NAME=" + context.cluster_name,
            "SLURM_RESTART_COUNT=" + std::to_string(context.restart_count),
            "SLURMD_NODENAME=" + context.node};
}

void JobHooks::prolog(const JobHookContext& context, Done done) {
    auto [it, fresh] = jobs_.try_emplace(context.job_id);
    JobOnNode& job = it->second;
    if (!fresh && job.context.restart_count == context.restart_count) {
        if (job.prolog_result) {
            done(*job.prolog_result);
        } else {
            job.waiting.push_back(std::move(done));
        }
        return;
    }
    job = JobOnNode{context, std::nullopt, {std::move(done)}};
    auto deliver = [this, id = context.job_id,
                    attempt = context.restart_count](const Status& result) {
        auto found = jobs_.find(id);
        if (found == jobs_.end() || found->second.context.restart_count != attempt) {
            return;  // the job ended here meanwhile: nobody waits for it any more
        }
        found->second.prolog_result = result;
        for (Done& waiting : std::exchange(found->second.waiting, {})) {
            waiting(result);
        }
    };
    if (prolog_.empty()) {
        deliver(Status::ok());
        return;
    }
    run("prolog", prolog_, context, deliver);
}

void JobHooks::epilog(uint64_t job_id, Done done) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
        done(Status::ok());
        return;
    }
    const JobHookContext context = it->second.context;
    jobs_.erase(it);
    if (epilog_.empty()) {
        done(Status::ok());
        return;
    }
    run("epilog", epilog_, context, std::move(done));
}

void JobHooks::run(const char* kind,
                   const std::string& program,
                   const JobHookContext& context,
                   Done done) {
    const std::string what = fmt::format("{} {}", kind, program);
    SpawnSpec spec;
    spec.argv = {program};
    spec.env = environment(context, std::string(kind) + "_slurmd");
    spec.cwd = "/";
    auto spawned = spawn_process(spec);
    if (!spawned) {
        done(Status::io_error(what + ": " + spawned.status().message()));
        return;
    }
    const pid_t pid = spawned->pid;
    auto deadline = std::make_shared<asio::steady_timer>(io_, std::chrono::seconds(timeout_s_));
    deadline->async_wait([this, pid](boost::system::error_code ec) {
        auto found = running_.find(pid);
        if (!ec && found != running_.end()) {
            found->second.timed_out = true;
            killpg(pid, SIGKILL);  // its exit, reaped as any other, delivers the failure
        }
    });
    running_[pid] = Running{what, std::move(deadline), false, std::move(done)};
}

bool JobHooks::reaped(pid_t pid, int wait_status) {
    auto it = running_.find(pid);
    if (it == running_.end()) {
        return false;
    }
    Running hook = std::move(it->second);
    running_.erase(it);
    hook.deadline->cancel();
    killpg(pid, SIGKILL);  // nothing a hook started outlives it
    Status result = Status::ok();
    if (hook.timed_out) {
        result = Status::unavailable(fmt::format("{} ran past {} s", hook.what, timeout_s_));
    } else if (WIFSIGNALED(wait_status)) {
        result = Status::unavailable(
                fmt::format("{} killed by signal {}", hook.what, WTERMSIG(wait_status)));
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0) {
        result = Status::unavailable(
                fmt::format("{} exited {}", hook.what, WEXITSTATUS(wait_status)));
    }
    hook.done(result);
    return true;
}

}  // namespace cohort::agent
