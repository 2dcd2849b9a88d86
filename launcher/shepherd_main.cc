// cohort-shepherd: the parent of one batch script or one step task. The node agent starts it
// (as the job's user, in the job's directory, with the job's files or the task's pipes as
// stdin/stdout/stderr); it runs the program, waits for it and writes how it ended to an
// inherited status descriptor. It outlives the agent, so restarting cohortd ends no job: the
// next agent adopts the shepherd and reads the status when it exits.
//
// A step task's output pipes: the agent also hands the shepherd its own read ends
// (--hold-fds), which the shepherd keeps open and never reads. While no agent runs, the task's
// writes wait in the pipe instead of failing, and the next agent reopens those ends through
// /proc/PID/fd and goes on reading. After the task's end the shepherd stays until what is left
// there has been read.
//
// Signals: the agent signals the whole job with killpg, which reaches the program directly;
// the shepherd (in the same process group) ignores those. A signal sent to the shepherd alone
// with sigqueue (SI_QUEUE) is for the batch shell only (`--signal=B:`, `cancel --batch`) and
// is forwarded to the program. SIGKILL ends both; the agent then reports the job killed.
//
//   cohort-shepherd --status-fd N [--no-sync] [--hold-fds A,B] -- PROGRAM [ARGS...]
//
// PROGRAM is looked up in PATH when it has no '/'. --no-sync skips the fsync of the status: a
// step task's status needs only to outlive the agent, not the machine.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
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
    std::fputs(
            "usage: cohort-shepherd --status-fd N [--no-sync] [--hold-fds A,B] -- PROGRAM "
            "[ARGS...]\n",
            stderr);
    return 2;
}

// An inherited descriptor named on the command line; -1 when the text is not one.
int inherited_fd(const char* text) {
    char* end = nullptr;
    const long fd = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || fd < 3 || fd > 1 << 20
        || fcntl(static_cast<int>(fd), F_GETFD) < 0) {
        return -1;
    }
    return static_cast<int>(fd);
}

// Marks each of the comma-separated descriptors close-on-exec: kept here, not in the program.
bool hold_fds(const char* list, std::vector<int>& held) {
    std::string text = list;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const int fd = inherited_fd(text.substr(start, comma - start).c_str());
        if (fd < 0) {
            return false;
        }
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        held.push_back(fd);
        start = comma + 1;
    }
    return true;
}

// What the program wrote last may still wait in its pipes, and would be lost with their last
// read end: the shepherd lets go of them once an agent has read them (at once while one
// runs), or after kDrainLimitMs when none comes back.
constexpr int kDrainLimitMs = 30000;

void wait_until_read(const std::vector<int>& held) {
    // The program's write ends: its agent sees end-of-file once these and the program's are
    // closed.
    close(STDOUT_FILENO);
    close(STDERR_FILENO);
    for (int waited_ms = 0; waited_ms < kDrainLimitMs; waited_ms += 5) {
        bool unread = false;
        for (int fd : held) {
            int bytes = 0;
            unread = unread || (ioctl(fd, FIONREAD, &bytes) == 0 && bytes > 0);
        }
        if (!unread) {
            return;
        }
        usleep(5000);
    }
}

}  // namespace

int main(int argc, char** argv) {
    int status_fd = -1;
    bool sync = true;
    std::vector<int> held;
    int program = 0;  // argv index of PROGRAM
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            program = i + 1;
            break;
        }
        if (std::strcmp(argv[i], "--status-fd") == 0 && i + 1 < argc) {
            status_fd = inherited_fd(argv[++i]);
        } else if (std::strcmp(argv[i], "--hold-fds") == 0 && i + 1 < argc) {
            if (!hold_fds(argv[++i], held)) {
                return usage();
            }
        } else if (std::strcmp(argv[i], "--no-sync") == 0) {
            sync = false;
        } else {
            return usage();
        }
    }
    if (status_fd < 0 || program == 0 || program >= argc) {
        return usage();
    }
    fcntl(status_fd, F_SETFD, FD_CLOEXEC);  // not for the program

    sigset_t forwarded, previous;
    sigemptyset(&forwarded);

    struct sigaction action {};

    action.sa_sigaction = forward_queued;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int signal = 1; signal < NSIG; ++signal) {
        if (forwardable(signal) && signal < SIGRTMIN) {
            sigaction(signal, &action, nullptr);  // caught: the program's exec resets it
            sigaddset(&forwarded, signal);
        }
    }
    // Held until the program's pid is known, so none is lost between fork and the store.
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
        execvp(argv[program], argv + program);
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
    // One line: exit code, terminating signal, and why the program could not start (if so).
    std::string line = WIFSIGNALED(status) ? "0 " + std::to_string(WTERMSIG(status))
                                           : std::to_string(WEXITSTATUS(status)) + " 0";
    if (got == static_cast<ssize_t>(sizeof exec_error)) {
        line += std::string(" exec '") + argv[program] + "' failed: " + std::strerror(exec_error);
    }
    line += "\n";
    const bool written = cohort::write_all(status_fd, line) && (!sync || fsync(status_fd) == 0);
    close(status_fd);
    wait_until_read(held);
    return written ? 0 : 1;
}
