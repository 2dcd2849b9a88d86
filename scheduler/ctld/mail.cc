// Mail at a job's events (--mail-type, --mail-user), as Slurm's MailProg: the controller runs
// `mail_program -s SUBJECT USER` with an empty body and does not wait for it. cohortctld
// ignores SIGCHLD (main.cc), so the programs it starts are reaped by the kernel.
#include <algorithm>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <spdlog/spdlog.h>

#include "common/mail_type.h"
#include "scheduler/ctld/controller.h"

extern char** environ;

namespace cohort::ctld {
namespace {

// As Slurm's mail writes durations: [D-]HH:MM:SS.
std::string clock_time(int64_t seconds) {
    seconds = std::max<int64_t>(seconds, 0);
    const int64_t days = seconds / 86400;
    const std::string hms = fmt::format("{:02}:{:02}:{:02}", seconds % 86400 / 3600,
                                        seconds % 3600 / 60, seconds % 60);
    return days > 0 ? fmt::format("{}-{}", days, hms) : hms;
}

std::string mail_subject(const Job& job, uint32_t event, int64_t now) {
    const std::string head =
            fmt::format("Cohort Job_id={} Name={}", job.job_id, job.spec.name.str());
    const int64_t run_s =
            job.start_time > 0 ? (job.end_time > 0 ? job.end_time : now) - job.start_time : 0;
    switch (event) {
        case kMailBegin:
            return fmt::format("{} Began, Queued time {}", head,
                               clock_time(job.start_time - job.submit_time));
        case kMailRequeue:
            return fmt::format("{} Requeued, Run time {}, {}", head, clock_time(run_s),
                               job_state_name(job.final_state));
        case kMailInvalidDepend:
            return fmt::format("{} Cancelled, dependency never satisfied", head);
        default:
            return fmt::format("{} {}, Run time {}, {}, ExitCode {}", head,
                               event == kMailFail ? "Failed" : "Ended", clock_time(run_s),
                               job_state_name(job.state), job.exit_code);
    }
}

}  // namespace

void Controller::mail(const Job& job, uint32_t event) {
    if ((job.spec.mail_type & event) == 0) {
        return;
    }
    const std::string user =
            job.spec.mail_user.str().empty() ? job.user_name.str() : job.spec.mail_user.str();
    const std::string subject = mail_subject(job, event, clock_.unix_seconds());
    std::vector<std::string> args{config_.mail_program, "-s", subject, user};
    std::vector<char*> argv;
    for (std::string& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);  // an empty body
    // The controller ignores SIGCHLD; the mail program may wait for children of its own.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGCHLD);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int error = posix_spawn(&pid, argv[0], &files, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&files);
    if (error != 0) {
        spdlog::warn("job {}: cannot run mail_program {}: {}", job.job_id, config_.mail_program,
                     std::strerror(error));
        return;
    }
    spdlog::info("job {}: mailed {}: {}", job.job_id, user, subject);
}

}  // namespace cohort::ctld
