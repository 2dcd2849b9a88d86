// fork/exec with an exec-status pipe: the child reports a failure before exec over a
// close-on-exec pipe, so the parent knows at once whether the program started.
#include "launcher/process.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace cohort::agent {
namespace {

// What the child sends back when it fails before exec.
struct ChildFailure {
    int stage;
    int error;
};

enum Stage : int {
    kCgroup = 1,
    kSetGroups,
    kSetGid,
    kSetUid,
    kChdir,
    kOpenStdout,
    kOpenStderr,
    kExec
};

const char* stage_name(int stage) {
    switch (stage) {
        case kCgroup:
            return "join of the job's cgroup";
        case kSetGroups:
            return "setgroups";
        case kSetGid:
            return "setgid";
        case kSetUid:
            return "setuid";
        case kChdir:
            return "chdir";
        case kOpenStdout:
            return "open of the output file";
        case kOpenStderr:
            return "open of the error file";
        case kExec:
            return "exec";
    }
    return "start";
}

// Writes the calling process's pid to a cgroup.procs file. Async-signal-safe.
bool join_cgroup(const char* procs_file) {
    char digits[16];
    size_t length = 0;
    for (pid_t pid = getpid(); pid > 0 && length < sizeof(digits); pid /= 10) {
        digits[length++] = static_cast<char>('0' + pid % 10);
    }
    char text[16];
    for (size_t i = 0; i < length; ++i) {
        text[i] = digits[length - 1 - i];
    }
    const int fd = open(procs_file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    const bool written = write(fd, text, length) == static_cast<ssize_t>(length);
    close(fd);
    return written;
}

[[noreturn]] void fail(int report_fd, int stage) {
    ChildFailure failure{stage, errno};
    ssize_t ignored = write(report_fd, &failure, sizeof(failure));
    (void)ignored;
    _exit(127);
}

// Searches PATH from the task's own environment, before fork (no allocation in the child).
std::string resolve_program(const std::string& program, const std::vector<std::string>& env) {
    if (program.find('/') != std::string::npos) {
        return program;
    }
    std::string path = "/usr/local/bin:/usr/bin:/bin";
    for (const auto& entry : env) {
        if (entry.rfind("PATH=", 0) == 0) {
            path = entry.substr(5);
        }
    }
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        std::string dir =
                path.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
        if (access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    return program;  // exec fails with ENOENT and reports it
}

// A CPU mask sized for `cpus`, built before fork so the child only calls sched_setaffinity.
class CpuMask {
public:
    explicit CpuMask(const std::vector<int>& cpus) {
        int top = kMinCpus;
        for (int c : cpus) {
            top = std::max(top, c + 1);
        }
        set_ = CPU_ALLOC(static_cast<size_t>(top));
        size_ = CPU_ALLOC_SIZE(static_cast<size_t>(top));
        CPU_ZERO_S(size_, set_);
        cpu_set_t* allowed = CPU_ALLOC(static_cast<size_t>(top));
        CPU_ZERO_S(size_, allowed);
        if (sched_getaffinity(0, size_, allowed) != 0) {
            CPU_FREE(allowed);
            return;
        }
        for (int c : cpus) {
            if (c >= 0 && CPU_ISSET_S(static_cast<size_t>(c), size_, allowed)) {
                CPU_SET_S(static_cast<size_t>(c), size_, set_);
            }
        }
        CPU_FREE(allowed);
    }

    ~CpuMask() { CPU_FREE(set_); }

    CpuMask(const CpuMask&) = delete;
    CpuMask& operator=(const CpuMask&) = delete;

    bool empty() const { return CPU_COUNT_S(size_, set_) == 0; }

    int count() const { return CPU_COUNT_S(size_, set_); }

    // In the child: async-signal-safe.
    void apply() const { sched_setaffinity(0, size_, set_); }

private:
    static constexpr int kMinCpus = 8192;  // at least the kernel's mask size
    cpu_set_t* set_ = nullptr;
    size_t size_ = 0;
};

}  // namespace

Result<UserIdentity> lookup_user(uid_t uid, gid_t gid) {
    UserIdentity user{uid, gid, std::to_string(uid), {gid}};

    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
        return user;  // a uid without a passwd entry keeps just its primary group
    }
    user.name = pw.pw_name;
    int count = 64;
    std::vector<gid_t> groups(static_cast<size_t>(count));
    if (getgrouplist(pw.pw_name, gid, groups.data(), &count) == -1) {
        groups.resize(static_cast<size_t>(count));
        getgrouplist(pw.pw_name, gid, groups.data(), &count);
    }
    groups.resize(static_cast<size_t>(count));
    user.groups = std::move(groups);
    return user;
}

void close_all(std::vector<int>& fds) {
    for (int fd : fds) {
        close(fd);
    }
    fds.clear();
}

void close_all_but(const int* keep, size_t keep_count, const int* inherit, size_t inherit_count) {
    unsigned next = 3;  // the lowest descriptor not yet closed or kept
    for (size_t i = 0; i < keep_count; ++i) {
        const auto fd = static_cast<unsigned>(keep[i]);
        if (fd > next) {
            close_range(next, fd - 1, 0);
        }
        next = std::max(next, fd + 1);
    }
    close_range(next, ~0U, 0);
    for (size_t i = 0; i < inherit_count; ++i) {
        fcntl(inherit[i], F_SETFD, 0);
    }
}

Result<Spawned> spawn_process(const SpawnSpec& spec) {
    if (spec.argv.empty()) {
        return Status::invalid("empty command");
    }
    const std::string program = resolve_program(spec.argv[0], spec.env);
    std::vector<char*> argv;
    for (const auto& arg : spec.argv) {
        argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& entry : spec.env) {
        envp.push_back(const_cast<char*>(entry.c_str()));
    }
    envp.push_back(nullptr);

    const CpuMask mask(spec.cpus);
    const bool bind = !spec.cpus.empty() && !mask.empty();
    if (!spec.cpus.empty() && mask.count() < static_cast<int>(spec.cpus.size())) {
        spdlog::warn("'{}': {} of the {} CPUs to bind to are not available here; {}", spec.argv[0],
                     spec.cpus.size() - static_cast<size_t>(mask.count()), spec.cpus.size(),
                     bind ? "binding to the rest" : "running unbound");
    }

    std::vector<const char*> cgroup_files;
    for (const auto& file : spec.cgroup_procs) {
        cgroup_files.push_back(file.c_str());
    }

    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        return Status::io_error(std::string("pipe: ") + std::strerror(errno));
    }
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (spec.append ? O_APPEND : O_TRUNC);
    std::vector<int> keep = spec.inherit_fds;  // ascending, as close_all_but wants
    keep.push_back(report[1]);
    std::sort(keep.begin(), keep.end());
    pid_t pid = fork();
    if (pid < 0) {
        close(report[0]);
        close(report[1]);
        return Status::io_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls from here to exec.
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        signal(SIGPIPE, SIG_DFL);
        for (const char* file : cgroup_files) {  // first: the cpuset bounds the binding
            if (!join_cgroup(file)) {
                fail(report[1], kCgroup);
            }
        }
        if (bind) {
            mask.apply();
        }
        if (spec.switch_user) {
            if (setgroups(spec.user.groups.size(), spec.user.groups.data()) != 0) {
                fail(report[1], kSetGroups);
            }
            if (setgid(spec.user.gid) != 0) {
                fail(report[1], kSetGid);
            }
            if (setuid(spec.user.uid) != 0) {
                fail(report[1], kSetUid);
            }
        }
        if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) {
            fail(report[1], kChdir);
        }
        int in = spec.stdin_fd >= 0 ? spec.stdin_fd : open("/dev/null", O_RDONLY);
        dup2(in, STDIN_FILENO);
        int out = spec.stdout_fd;
        if (!spec.stdout_path.empty()) {
            out = open(spec.stdout_path.c_str(), flags, 0644);
            if (out < 0) {
                fail(report[1], kOpenStdout);
            }
            if (!spec.output_banner.empty()
                && write(out, spec.output_banner.data(), spec.output_banner.size()) < 0) {
                fail(report[1], kOpenStdout);
            }
        }
        int err = spec.stderr_fd >= 0 ? spec.stderr_fd : out;
        if (!spec.stderr_path.empty() && spec.stderr_path != spec.stdout_path) {
            err = open(spec.stderr_path.c_str(), flags, 0644);
            if (err < 0) {
                fail(report[1], kOpenStderr);
            }
        }
        if (out >= 0) {
            dup2(out, STDOUT_FILENO);
        }
        if (err >= 0) {
            dup2(err, STDERR_FILENO);
        }
        // Tasks inherit no descriptor of the agent's but the exec-status pipe (close-on-exec)
        // and the ones named.
        close_all_but(keep.data(), keep.size(), spec.inherit_fds.data(), spec.inherit_fds.size());
        execve(program.c_str(), argv.data(), envp.data());
        fail(report[1], kExec);
    }
    setpgid(pid, pid);  // also in the parent, so killpg works before the child runs
    close(report[1]);
    ChildFailure failure{};
    ssize_t got = 0;
    do {
        got = read(report[0], &failure, sizeof(failure));
    } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == static_cast<ssize_t>(sizeof(failure))) {
        std::string what = failure.stage == kExec         ? "'" + spec.argv[0] + "'"
                           : failure.stage == kChdir      ? "'" + spec.cwd + "'"
                           : failure.stage == kOpenStdout ? "'" + spec.stdout_path + "'"
                           : failure.stage == kOpenStderr ? "'" + spec.stderr_path + "'"
                                                          : fmt::format("uid {}", spec.user.uid);
        // The child has exited with 127; the SIGCHLD handler reaps it.
        return Status::invalid(std::string(stage_name(failure.stage)) + " " + what
                               + " failed: " + std::strerror(failure.error));
    }
    return Spawned{pid};
}

}  // namespace cohort::agent
