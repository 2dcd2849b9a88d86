// JobHooks with real programs: the prolog runs once per attempt and its result reaches every
// caller; a hook that runs too long is killed and fails; the epilog runs only for jobs that
// started here.
#include "launcher/job_hooks.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

namespace cohort::agent {
namespace {

// Runs the io loop and reaps children as the agent does, until `done` or 10 s.
template <typename Predicate>
bool serve_until(asio::io_context& io, JobHooks& hooks, Predicate done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        io.restart();
        io.run_for(std::chrono::milliseconds(20));
        int status = 0;
        for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
            hooks.reaped(pid, status);
        }
    }
    return done();
}

JobHookContext job(uint64_t id, uint32_t attempt = 0) {
    JobHookContext context;
    context.job_id = id;
    context.restart_count = attempt;
    context.node = "node1";
    return context;
}

TEST(JobHooks, ThePrologRunsOncePerAttemptAndEveryCallerGetsItsResult) {
    asio::io_context io;
    JobHooks hooks(io, "/bin/false", "", 10);
    std::optional<Status> first, second;
    hooks.prolog(job(1), [&](const Status& s) { first = s; });
    hooks.prolog(job(1), [&](const Status& s) { second = s; });  // while it runs
    ASSERT_TRUE(serve_until(io, hooks, [&] { return first && second; }));
    EXPECT_EQ(first->message(), "prolog /bin/false exited 1");
    EXPECT_EQ(second->message(), first->message());
    std::optional<Status> later;
    hooks.prolog(job(1), [&](const Status& s) { later = s; });
    ASSERT_TRUE(later.has_value()) << "a later call gets the result at once";
    EXPECT_FALSE(*later);
}

TEST(JobHooks, AHookPastItsTimeIsKilledAndFails) {
    asio::io_context io;
    const std::string script = ::testing::TempDir() + "/hanging_prolog";
    std::ofstream(script) << "#!/bin/sh\nexec sleep 30\n";
    chmod(script.c_str(), 0755);
    JobHooks hanging(io, script, "", 1);
    std::optional<Status> result;
    const auto started = std::chrono::steady_clock::now();
    hanging.prolog(job(2), [&](const Status& s) { result = s; });
    ASSERT_TRUE(serve_until(io, hanging, [&] { return result.has_value(); }));
    EXPECT_EQ(result->message(), "prolog " + script + " ran past 1 s");
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(JobHooks, TheEpilogRunsOnlyForJobsThatStartedHere) {
    asio::io_context io;
    JobHooks hooks(io, "", "/bin/false", 10);
    std::optional<Status> never_here;
    hooks.epilog(3, [&](const Status& s) { never_here = s; });
    ASSERT_TRUE(never_here.has_value());
    EXPECT_TRUE(*never_here) << "no epilog for a job that never started here";

    std::optional<Status> prolog, epilog;
    hooks.prolog(job(4), [&](const Status& s) { prolog = s; });
    ASSERT_TRUE(prolog.has_value() && *prolog) << "no prolog configured: ok at once";
    hooks.epilog(4, [&](const Status& s) { epilog = s; });
    ASSERT_TRUE(serve_until(io, hooks, [&] { return epilog.has_value(); }));
    EXPECT_EQ(epilog->message(), "epilog /bin/false exited 1");
}

TEST(JobHooks, TheEnvironmentNamesTheJobAndNothingElse) {
    JobHookContext context = job(5, 2);
    context.user = "alice";
    context.uid = 1000;
    const std::vector<std::string> env = JobHooks::environment(context, "prolog_slurmd");
    auto has = [&](const std::string& entry) {
        return std::find(env.begin(), env.end(), entry) != env.end();
    };
    EXPECT_TRUE(has("SLURM_JOB_ID=5"));
    EXPECT_TRUE(has("SLURM_JOB_USER=alice"));
    EXPECT_TRUE(has("SLURM_JOB_UID=1000"));
    EXPECT_TRUE(has("SLURM_RESTART_COUNT=2"));
    EXPECT_TRUE(has("SLURM_SCRIPT_CONTEXT=prolog_slurmd"));
    EXPECT_TRUE(has("SLURMD_NODENAME=node1"));
    for (const std::string& entry : env) {
        EXPECT_TRUE(entry.rfind("SLURM", 0) == 0 || entry.rfind("PATH=", 0) == 0) << entry;
    }
}

}  // namespace
}  // namespace cohort::agent
