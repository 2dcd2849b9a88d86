// Warning signals before the time limit (--signal) and cancel -s to the steps, the batch shell
// (--batch) or both (--full), as sbatch and scancel deliver them; what a job's processes see.
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

// Polls until the file holds `text`, at most `limit`.
bool file_gets(const std::string& path, const std::string& text, seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (read_text(path).find(text) != std::string::npos) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
}

// A shell that writes `tag` and its age in seconds when USR1 arrives, and otherwise waits.
std::string trap_usr1(const std::string& tag) {
    return "start=$(date +%s); trap 'echo " + tag
           + " USR1 after $(( $(date +%s) - start )) s; exit 0' USR1; "
             "while :; do sleep 0.2; done";
}

class SignalTest : public SharedCluster<SignalTest> {
protected:
    // A step of one task that traps USR1 (trap_usr1("step")), as a command for the batch shell.
    static std::string trapping_step() {
        const std::string script = cluster_->work_dir() + "/step.sh";
        std::ofstream(script) << trap_usr1("step") << "\n";
        return cohort_binary() + " run -n1 bash " + script;
    }

    uint64_t submit(std::vector<std::string> args) const {
        args.insert(args.begin(), {"batch", "--parsable"});
        CommandResult result = cluster_->cohort(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return std::strtoull(result.out.c_str(), nullptr, 10);
    }
};

// --signal=B:USR1@50 with a one-minute limit: the batch shell gets USR1 about 10 s in, and
// can end cleanly before the limit.
TEST_F(SignalTest, BatchShellGetsItsWarningSignalBeforeTheLimit) {
    const uint64_t id = submit(
            {"-t", "1", "--signal=B:USR1@50", "-o", "warned.out", "--wrap", trap_usr1("batch")});
    const std::string out = cluster_->work_dir() + "/warned.out";
    ASSERT_TRUE(file_gets(out, "batch USR1 after", seconds(40))) << read_text(out);
    std::smatch after;
    const std::string text = read_text(out);
    ASSERT_TRUE(std::regex_search(text, after, std::regex("batch USR1 after (\\d+) s")));
    EXPECT_GE(std::stoi(after[1].str()), 8);
    EXPECT_LE(std::stoi(after[1].str()), 13);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
}

// Without B: the warning goes to the job's steps and not to the batch shell.
TEST_F(SignalTest, WarningSignalGoesToTheStepsNotTheShell) {
    const std::string step = trapping_step();
    const uint64_t id = submit({"-t", "1", "--signal=USR1@55", "-o", "steps.out", "--wrap",
                                "trap 'echo shell USR1' USR1; " + step + "; echo step ended"});
    const std::string out = cluster_->work_dir() + "/steps.out";
    ASSERT_TRUE(file_gets(out, "step ended", seconds(40))) << read_text(out);
    const std::string text = read_text(out);
    EXPECT_NE(text.find("step USR1 after"), std::string::npos) << text;
    EXPECT_EQ(text.find("shell USR1"), std::string::npos) << text;
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
}

// srun --signal: the step's tasks get the signal before the job's end (a one-minute job,
// USR1 55 s before: about 5 s in). B: and R: are sbatch's and refused for a step.
TEST_F(SignalTest, AStepsOwnSignalArrivesBeforeTheJobsEnd) {
    const std::string script = cluster_->work_dir() + "/own_signal.sh";
    std::ofstream(script) << trap_usr1("step") << "\n";
    const CommandResult run =
            cluster_->cohort({"run", "-t", "1", "-n1", "--signal=USR1@55", "bash", script});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::smatch after;
    ASSERT_TRUE(std::regex_search(run.out, after, std::regex("step USR1 after (\\d+) s")))
            << run.out;
    EXPECT_GE(std::stoi(after[1].str()), 1);  // the step starts a little after its job
    EXPECT_LE(std::stoi(after[1].str()), 9);
    const CommandResult refused = cluster_->cohort({"run", "--signal=B:USR1", "true"});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("--signal: invalid value 'B:USR1' for a step"), std::string::npos)
            << refused.err;
}

// A step's --signal follows its job's end when the time limit changes: raised, the signal is
// not sent at the old time (6 s in); lowered below the warning time, it comes at once.
TEST_F(SignalTest, AStepsSignalFollowsAChangedTimeLimit) {
    const std::string script = cluster_->work_dir() + "/moved_signal.sh";
    std::ofstream(script) << trap_usr1("step") << "\n";
    const uint64_t id = submit({"-t", "0:30", "-o", "moved.out", "--wrap",
                                cohort_binary() + " run -n1 --signal=USR1@24 bash " + script});
    const std::string job = "JobId=" + std::to_string(id);
    const std::string out = cluster_->work_dir() + "/moved.out";
    for (int i = 0; i < 100 && cluster_->job_state(id) != "RUNNING"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(seconds(2));  // the step is running, its signal armed
    ASSERT_EQ(cluster_->cohort({"scontrol", "update", job, "TimeLimit=5:00"}).exit_code, 0);
    std::this_thread::sleep_for(seconds(6));
    EXPECT_EQ(read_text(out).find("step USR1"), std::string::npos) << read_text(out);
    ASSERT_EQ(cluster_->cohort({"scontrol", "update", job, "TimeLimit=0:26"}).exit_code, 0);
    EXPECT_TRUE(file_gets(out, "step USR1 after", seconds(5))) << read_text(out);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
}

// cancel -s: by default the steps; --batch the shell alone; --full the shell and its children.
TEST_F(SignalTest, CancelSignalReachesStepsBatchShellOrEverything) {
    const std::string step = trapping_step();
    const uint64_t id = submit({"-o", "cancel.out", "--wrap",
                                "trap 'echo shell USR1' USR1; " + step + "; echo step ended; "
                                        + trap_usr1("shell-again")});
    const std::string id_text = std::to_string(id);
    const std::string out = cluster_->work_dir() + "/cancel.out";
    for (int i = 0; i < 100 && cluster_->job_state(id) != "RUNNING"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(seconds(2));  // the step's task is up and trapping
    ASSERT_EQ(cluster_->cohort({"cancel", "-s", "USR1", id_text}).exit_code, 0);
    ASSERT_TRUE(file_gets(out, "step ended", seconds(20))) << read_text(out);
    EXPECT_EQ(read_text(out).find("shell USR1"), std::string::npos) << read_text(out);
    std::this_thread::sleep_for(seconds(1));
    ASSERT_EQ(cluster_->cohort({"cancel", "-s", "USR1", "--batch", id_text}).exit_code, 0);
    ASSERT_TRUE(file_gets(out, "shell-again USR1 after", seconds(20))) << read_text(out);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");

    CommandResult lone = cluster_->cohort({"cancel", "--full", id_text});
    EXPECT_EQ(lone.exit_code, 1);
    EXPECT_EQ(lone.err,
              "cohort cancel: error: --full: only with --signal (accepted: -s SIGNAL "
              "--full)\n");
}

// The shared example 05-signal-requeue.sh (--signal=B:USR1@120, --requeue, --open-mode=append),
// which Cohort used to refuse for options it did not know, is accepted with what it asks.
TEST_F(SignalTest, TheSignalRequeueExampleIsAcceptedWithWhatItAsks) {
    const std::filesystem::path example = "../shared/data/sbatch-examples/05-signal-requeue.sh";
    if (!std::filesystem::exists(example)) {
        GTEST_SKIP() << "shared/data/sbatch-examples not found beside the repository";
    }
    const uint64_t id = submit({"-H", std::filesystem::absolute(example).string()});
    CommandResult shown = cluster_->cohort({"show", "job", std::to_string(id)});
    EXPECT_NE(shown.out.find("JobName=long-run"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("Requeue=1 Restarts=0"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("TimeLimit=04:00:00"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("StdOut=long-run-%j.log"), std::string::npos) << shown.out;
    cluster_->cohort({"cancel", std::to_string(id)});
}

}  // namespace
}  // namespace cohort::testing
