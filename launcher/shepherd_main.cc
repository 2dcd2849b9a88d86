// cohort-shepherd: the parent of one batch script. The node agent starts it (as the job's
// user, in the job's directory, with the job's files as stdin/stdout/stderr); it runs the
// script, waits for it and writes how it ended to an inherited status descriptor. It outlives
// the agent, so restarting cohortd ends no job: the next agent adopts the shepherd and reads
// the status when it exits.
//
// Signals: the agent signals the whole job with killpg, which reaches the script directly; the
// shepherd (in the same process group) ignores those. A signal sent to the shepherd alone with
// sigqueue (SI_QUEUE) is for the batch shell only (`--signal=B:`, `cancel --batch`) and is
// forwarded to the script. SIGKILL ends both; the agent then reports the job killed.
//
//   cohort-shepherd --status-fd N -- SCRIPT [ARGS...]
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/write_all.h"

namespace {

volatile sig_atomic_t script_pid = 0;

void forward_queued(int signal, siginfo_t* info, void*) {
    if (info->si_code == SI_QUEUE && script_pid > 0) {
        kill(script_pid, signal);
    }
}

// The signals a job may be sent, less the ones that cannot be caught or that a fault raises.
bool forwardable(int signal) {
    switch (signal) {
        case SIGKILL:
        case SIGSTOP:
        case SIGCHLD:
        case SIGSEGV:
        case SIGBUS:
        case SIGFPE:
        case SIGILL:
        case SIGTRAP:
        case SIGSYS:
            return false;
        default:
            return true;
    }
}

int usage() {
    std::fputs("usage: cohort-shepherd --status-fd N -- SCRIPT [ARGS...]\n", stderr);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || std::strcmp(argv[1], "--status-fd") != 0 || std::strcmp(argv[3], "--") != 0) {
        return usage();
    }
    char* end = nullptr;
    const long status_fd = std::strtol(argv[2], &end, 10);
    if (*end != '\0' || status_fd < 3 || fcntl(static_cast<int>(status_fd), F_GETFD) < 0) {
        return usage();
    }
    fcntl(static_cast<int>(status_fd), F_SETFD, FD_CLOEXEC);  // not for the script

    sigset_t forwarded, previous;
    sigemptyset(&forwarded);

    struct sigaction action {};

    action.sa_sigaction = forward_queued;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int signal = 1; signal < NSIG; ++signal) {
        if (forwardable(signal) && signal < SIGRTMIN) {
            sigaction(signal, &action, nullptr);  // caught: the script's exec resets it
            sigaddset(&forwarded, signal);
        }
    }
    // Held until the script's pid is known, so none is lost between fork and the store.
    sigprocmask(SIG_BLOCK, &forwarded, &previous);

    int exec_report[2];
    if (pipe2(exec_report, O_CLOEXEC) != 0) {
        return 1;
    }
    const pid_t child = fork();
    if (child < 0) {
        return 1;
    }
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &previous, nullptr);
        execv(argv[4], argv + 4);
        const int error = errno;
        (void)!write(exec_report[1], &error, sizeof error);
        _exit(127);
    }
    script_pid = child;
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    close(exec_report[1]);
    int exec_error = 0;
    ssize_t got = 0;
    do {
        got = read(exec_report[0], &exec_error, sizeof exec_error);
    } while (got < 0 && errno == EINTR);
    close(exec_report[0]);

    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    // One line: exit code, terminating signal, and why the script could not start (if so).
    std::string line = WIFSIGNALED(status) ? "0 " + std::to_string(WTERMSIG(status))
                                           : std::to_string(WEXITSTATUS(status)) + " 0";
    if (got == static_cast<ssize_t>(sizeof exec_error)) {
        line += std::string(" exec '") + argv[4] + "' failed: " + std::strerror(exec_error);
    }
    line += "\n";
    const int fd = static_cast<int>(status_fd);
    const bool written = cohort::write_all(fd, line) && fsync(fd) == 0;
    close(fd);
    return written ? 0 : 1;
}
