// Durability: kill -9 of the controller loses no acknowledged job, running jobs keep running,
// and `cohort start` on an existing state dir resumes it.
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <signal.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

pid_t read_pid(const std::string& path) {
    pid_t pid = 0;
    std::ifstream(path) >> pid;
    return pid;
}

size_t count(const std::string& text, const std::string& word) {
    size_t n = 0;
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        ++n;
    }
    return n;
}

// Restarts cohortctld alone, as an administrator would, against the same config.
void restart_controller(const LocalCluster& cluster) {
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        std::string log = cluster.state_dir() + "/cohortctld.log";
        freopen(log.c_str(), "a", stdout);
        freopen(log.c_str(), "a", stderr);
        std::string ctld = bin_dir() + "/cohortctld";
        std::string pid_file = cluster.state_dir() + "/cohortctld.pid";
        execl(ctld.c_str(), ctld.c_str(), "--config", cluster.conf().c_str(), "--pid-file",
              pid_file.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
}

TEST(Restart, KillNineAfter100SubmissionsKeepsEveryJob) {
    LocalCluster cluster(2);
    ASSERT_TRUE(cluster.up());
    // Runs until the test creates `go`, so it is surely running across the restart; its
    // limit leaves room for 100 submissions on a slow, sanitized build (each is a CLI start
    // there, 0.7 s: 100 keep the suite under 45 minutes and still cross many group commits).
    const std::string go = cluster.work_dir() + "/go";
    CommandResult running = cluster.cohort({"batch", "--parsable", "-t", "15:00", "--wrap",
                                            "while [ ! -e " + go + " ]; do sleep 0.1; done"});
    ASSERT_EQ(running.exit_code, 0);
    uint64_t running_id = std::strtoull(running.out.c_str(), nullptr, 10);
    for (int i = 0; i < 100; ++i) {
        CommandResult submitted = cluster.cohort({"batch", "-H", "--parsable", "--wrap", "true"});
        ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    }
    pid_t ctld = read_pid(cluster.state_dir() + "/cohortctld.pid");
    ASSERT_GT(ctld, 0);
    ASSERT_EQ(kill(ctld, SIGKILL), 0);
    for (int i = 0; i < 100 && kill(ctld, 0) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    restart_controller(cluster);

    CommandResult queue;
    for (int i = 0; i < 100; ++i) {
        queue = cluster.cohort({"queue", "--json"});
        if (queue.exit_code == 0 && count(queue.out, "\"job_id\"") == 101) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(count(queue.out, "\"job_id\""), 101u);
    EXPECT_EQ(count(queue.out, "JobHeldUser"), 100u);
    // The job that was running when the controller died runs on and completes.
    EXPECT_EQ(cluster.job_state(running_id), "RUNNING");
    std::ofstream(go) << "go\n";
    EXPECT_EQ(cluster.wait_final_state(running_id, std::chrono::seconds(30)), "COMPLETED");
    // New ids continue after the old ones.
    CommandResult next = cluster.cohort({"batch", "--parsable", "-H", "--wrap", "true"});
    EXPECT_EQ(std::strtoull(next.out.c_str(), nullptr, 10), running_id + 101);
    if (HasFailure()) {
        cluster.dump_logs();
    }
}

TEST(Restart, StartOnAnExistingStateDirResumesIt) {
    LocalCluster cluster(1);
    ASSERT_TRUE(cluster.up());
    CommandResult first = cluster.cohort({"batch", "--parsable", "--wrap", "true"});
    uint64_t first_id = std::strtoull(first.out.c_str(), nullptr, 10);
    ASSERT_EQ(cluster.wait_final_state(first_id, std::chrono::seconds(30)), "COMPLETED");
    CommandResult again = cluster.restart();
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(cluster.job_state(first_id), "COMPLETED");
    CommandResult second = cluster.cohort({"batch", "--parsable", "--wrap", "true"});
    EXPECT_EQ(std::strtoull(second.out.c_str(), nullptr, 10), first_id + 1);
}

// Names, comments and paths a hostile or careless user types (quotes, `;`, SQL comment
// marks, control characters) are data: they come back unchanged from the controller, from
// the state store after a restart, and as the output file's name on disk.
TEST(Restart, HostileNamesCommentsAndPathsRoundTripUnchanged) {
    LocalCluster cluster(1);
    ASSERT_TRUE(cluster.up());
    const std::string name = "it's \"quoted\"; DROP TABLE jobs;-- \x01\x1b[31m$(id)";
    const std::string comment = "'); DELETE FROM jobs WHERE ('1'='1 \t\x7f";
    const std::string output = "out 'q' \"d\"; --x.txt";
    CommandResult submitted = cluster.cohort({"batch", "--parsable", "-J", name, "--comment",
                                              comment, "-o", output, "--wrap", "echo ran"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const uint64_t id = std::strtoull(submitted.out.c_str(), nullptr, 10);
    ASSERT_EQ(cluster.wait_final_state(id, std::chrono::seconds(30)), "COMPLETED");
    EXPECT_EQ(read_text(cluster.work_dir() + "/" + output), "ran\n");
    for (int round = 0; round < 2; ++round) {
        const nlohmann::json job = accounted_job_json(cluster, id);
        EXPECT_EQ(job.value("name", ""), name) << "round " << round;
        EXPECT_EQ(job["comment"].value("job", ""), comment) << "round " << round;
        EXPECT_EQ(job.value("standard_output", ""), output) << "round " << round;
        if (round == 0) {
            ASSERT_EQ(cluster.restart().exit_code, 0);  // read back from the state store
        }
    }
}

TEST(Start, RunsTheCommandAndReturnsItsExitCode) {
    auto dir =
            std::filesystem::temp_directory_path() / ("cohort-start-" + std::to_string(getpid()));
    CommandResult result =
            run_command({cohort_binary(), "start", "--nodes", "2", "--state-dir", dir.string(),
                         "--", "sh", "-c", cohort_binary() + " run -N2 -n2 true && exit 7"},
                        "");
    EXPECT_EQ(result.exit_code, 7) << result.err;
    std::filesystem::remove_all(dir);
}

// An option start does not know is refused, not run as the command (exit 127), and nothing
// is started.
TEST(Start, AnUnknownOptionIsRefusedNotRunAsTheCommand) {
    auto dir = std::filesystem::temp_directory_path()
               / ("cohort-start-unknown-" + std::to_string(getpid()));
    CommandResult result =
            run_command({cohort_binary(), "start", "--munge", "--state-dir", dir.string()}, "");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err,
              "cohort start: error: unrecognized option '--munge' (see cohort start --help; a "
              "command "
              "to run goes after --)\n");
    EXPECT_FALSE(std::filesystem::exists(dir));
    CommandResult bad_auth = run_command(
            {cohort_binary(), "start", "--auth", "kerberos", "--state-dir", dir.string()}, "");
    EXPECT_EQ(bad_auth.exit_code, 1);
    EXPECT_NE(bad_auth.err.find("--auth: kerberos not in {cluster_key,munge}"), std::string::npos)
            << bad_auth.err;
    EXPECT_FALSE(std::filesystem::exists(dir));
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cohort::testing
