// What a forked child keeps of the agent's descriptors before it execs a task or a step
// manager: only the listed ones, and close-on-exec cleared on those it must pass on.
#include "launcher/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cohort::agent {
namespace {

TEST(CloseAllBut, KeepsTheListedDescriptorsAndReadiesTheInheritedOnes) {
    int fds[4];
    for (int& fd : fds) {
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 3);
    }
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const int keep[2] = {fds[1], fds[3]};  // ascending, as opened
        const int inherit[1] = {fds[3]};
        close_all_but(keep, 2, inherit, 1);
        const bool kept_closing = fcntl(fds[1], F_GETFD) == FD_CLOEXEC;  // like a report pipe
        const bool kept_for_exec = fcntl(fds[3], F_GETFD) == 0;          // like a PMI_FD
        const bool others_closed = fcntl(fds[0], F_GETFD) == -1 && fcntl(fds[2], F_GETFD) == -1;
        _exit(kept_closing && kept_for_exec && others_closed ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "the child saw other descriptors than it should";
    for (int fd : fds) {
        close(fd);
    }
}

}  // namespace
}  // namespace cohort::agent
