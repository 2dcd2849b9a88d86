// cohort-shepherd, the real binary: the parent of a batch script or step task that outlives
// the agent. It records how its program ended, and keeps the program's last output readable
// (the pipe's read end it holds) until someone has read it.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/batch_record.h"
#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

struct Shepherd {
    pid_t pid = -1;
    int output = -1;  // the read end of the program's stdout
    std::string status_path;
};

// Starts the shepherd with its stdout on a pipe whose read end it also holds, as the agent
// starts a step task.
Shepherd start_shepherd(const std::string& dir, const std::vector<std::string>& program) {
    Shepherd shepherd;
    shepherd.status_path = dir + "/task.status";
    const int status = open(shepherd.status_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int out[2];
    if (status < 0 || pipe(out) != 0) {
        return shepherd;
    }
    std::vector<std::string> args = {bin_dir() + "/cohort-shepherd",
                                     "--status-fd",
                                     std::to_string(status),
                                     "--no-sync",
                                     "--hold-fds",
                                     std::to_string(out[0]),
                                     "--"};
    args.insert(args.end(), program.begin(), program.end());
    std::vector<char*> argv;
    for (auto& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    shepherd.pid = fork();
    if (shepherd.pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[1]);
        execv(argv[0], argv.data());
        _exit(127);
    }
    close(status);
    close(out[1]);
    shepherd.output = out[0];
    return shepherd;
}

// The shepherd's exit status once it has exited within `limit`; -1 while it runs.
int exit_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    do {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (std::chrono::steady_clock::now() < deadline);
    return -1;
}

class ShepherdTest : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/cohort-shepherd-XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        dir_ = pattern;
    }

    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string dir_;
};

// While no agent reads the task's output (its agent restarts), the shepherd keeps it: the
// status is written at once, but the shepherd stays until the last line has been read.
TEST_F(ShepherdTest, KeepsTheProgramsLastOutputUntilItIsRead) {
    Shepherd shepherd = start_shepherd(dir_, {"sh", "-c", "echo last words; exit 5"});
    ASSERT_GT(shepherd.pid, 0);
    EXPECT_EQ(exit_within(shepherd.pid, std::chrono::milliseconds(500)), -1)
            << "the shepherd left before its program's output was read";
    auto ended = agent::read_batch_exit(shepherd.status_path);
    ASSERT_TRUE(ended.has_value());
    EXPECT_EQ(ended->exit_code, 5);
    EXPECT_EQ(ended->signal, 0);

    char buffer[64] = {};
    const ssize_t got = read(shepherd.output, buffer, sizeof buffer);
    EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<size_t>(got) : 0), "last words\n");
    EXPECT_EQ(exit_within(shepherd.pid, std::chrono::seconds(10)), 0);
    char more = 0;
    EXPECT_EQ(read(shepherd.output, &more, 1), 0) << "end-of-file once the shepherd is gone";
    close(shepherd.output);
}

// PROGRAM is looked up in PATH; one that cannot run is reported as the agent reported it.
TEST_F(ShepherdTest, AProgramThatCannotRunIsRecordedWithWhy) {
    Shepherd shepherd = start_shepherd(dir_, {"no-such-program-here"});
    ASSERT_GT(shepherd.pid, 0);
    EXPECT_EQ(exit_within(shepherd.pid, std::chrono::seconds(10)), 0);
    auto ended = agent::read_batch_exit(shepherd.status_path);
    ASSERT_TRUE(ended.has_value());
    EXPECT_EQ(ended->exit_code, 127);
    EXPECT_EQ(ended->error, "exec 'no-such-program-here' failed: No such file or directory");
    close(shepherd.output);
}

TEST_F(ShepherdTest, RefusesACommandLineWithoutItsStatusDescriptor) {
    const std::string command = bin_dir() + "/cohort-shepherd --no-sync -- true 2>/dev/null";
    const int status = std::system(command.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace cohort::testing
