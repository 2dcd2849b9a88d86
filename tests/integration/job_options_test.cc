// Options that real users' scripts carry, end to end: -x/--exclude keeps a job off nodes,
// --comment is shown with it, and --mail-type/--mail-user run the cluster's mail program at
// the job's events (here a program that records its calls).
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

// Each call of the mail program, its arguments joined by '|', one line a call.
const std::string& mail_log() {
    static const std::string path = std::filesystem::temp_directory_path()
                                    / ("cohort-mail-" + std::to_string(getpid()) + ".log");
    return path;
}

std::string mail_recorder() {
    static const std::string path = std::filesystem::temp_directory_path()
                                    / ("cohort-mail-" + std::to_string(getpid()) + ".sh");
    std::ofstream(path) << "#!/bin/sh\nIFS='|'; echo \"$*\" >> " << mail_log() << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
}

class JobOptionsTest : public SharedCluster<JobOptionsTest> {
public:
    static constexpr int kNodes = 2;

    static std::vector<std::string> start_args() {
        return with_settings({{"mail_program", mail_recorder()}});
    }

    static void TearDownTestSuite() {
        SharedCluster::TearDownTestSuite();
        std::filesystem::remove(mail_recorder());
        std::filesystem::remove(mail_log());
    }

protected:
    uint64_t submit(std::vector<std::string> args) const {
        args.insert(args.begin(), {"batch", "--parsable"});
        CommandResult result = cluster_->cohort(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return std::strtoull(result.out.c_str(), nullptr, 10);
    }

    // The mail calls about job `id`.
    static std::vector<std::string> mails_of(uint64_t id) {
        std::vector<std::string> mails;
        for (const std::string& line : lines_of(read_text(mail_log()))) {
            if (line.find("Job_id=" + std::to_string(id) + " ") != std::string::npos) {
                mails.push_back(line);
            }
        }
        return mails;
    }
};

TEST_F(JobOptionsTest, ExcludedNodeIsAvoidedAndCommentAndMailAreShown) {
    const uint64_t id =
            submit({"-x", "node1", "--comment", "ablation run 7", "--mail-type=BEGIN",
                    "--mail-type=END", "--mail-user=ops@example.org", "--wrap", "exit 3"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "FAILED");
    const std::string shown = cluster_->cohort({"show", "job", std::to_string(id)}).out;
    EXPECT_NE(shown.find("NodeList=node2\n"), std::string::npos) << shown;
    EXPECT_NE(shown.find("   ExcNodeList=node1\n"), std::string::npos) << shown;
    EXPECT_NE(shown.find("   Comment=ablation run 7\n"), std::string::npos) << shown;
    EXPECT_NE(shown.find("   MailUser=ops@example.org MailType=BEGIN,END\n"), std::string::npos)
            << shown;
    ASSERT_TRUE(eventually([&] { return mails_of(id).size() == 2; }, seconds(10)))
            << read_text(mail_log());
    // Times are whole seconds, so a short job may cross one.
    const std::string head = "-s\\|Cohort Job_id=" + std::to_string(id) + " Name=wrap ";
    EXPECT_TRUE(std::regex_match(
            mails_of(id)[0],
            std::regex(head + "Began, Queued time 00:00:0[0-9]\\|ops@example.org")))
            << mails_of(id)[0];
    EXPECT_TRUE(std::regex_match(
            mails_of(id)[1],
            std::regex(head
                       + "Ended, Run time 00:00:0[0-9], FAILED, ExitCode 3\\|ops@example.org")))
            << mails_of(id)[1];
}

// ALL: the start and, for a job that fails, one "Failed" mail; to the job's user by default.
TEST_F(JobOptionsTest, MailTypeAllMailsTheUserAtTheStartAndTheFailure) {
    const uint64_t id = submit({"--mail-type=ALL", "--wrap", "exit 4"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "FAILED");
    ASSERT_TRUE(eventually([&] { return mails_of(id).size() == 2; }, seconds(10)))
            << read_text(mail_log());
    const std::string user = cluster_->cohort({"show", "job", std::to_string(id)}).out;
    EXPECT_NE(mails_of(id)[0].find(" Began, "), std::string::npos);
    EXPECT_TRUE(std::regex_search(
            mails_of(id)[1], std::regex(" Failed, Run time 00:00:0[0-9], FAILED, ExitCode 4\\|")))
            << mails_of(id)[1];
    EXPECT_NE(user.find("MailType=BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT"),
              std::string::npos)
            << user;
}

// -M/--clusters at a multi-cluster site: this cluster's name among them is accepted.
TEST_F(JobOptionsTest, ThisClustersNameIsAcceptedForClusters) {
    const uint64_t id = submit({"-H", "--clusters=login,cohort", "--wrap", "true"});
    EXPECT_EQ(cluster_->job_state(id), "PENDING");
    cluster_->cohort({"cancel", std::to_string(id)});
}

// getopt_long's abbreviations, as in a real script (`--no-reque`) and on the command line:
// a unique prefix is the option; one that starts several options is refused with them.
TEST_F(JobOptionsTest, UniquePrefixesOfLongOptionsAreTheOptions) {
    const std::string script = cluster_->work_dir() + "/abbreviated.sh";
    std::ofstream(script) << "#!/bin/bash\n#SBATCH --no-reque\n#SBATCH --job-na=short\ntrue\n";
    const uint64_t id = submit({"-H", "--cluster=cohort", script});
    const std::string shown = cluster_->cohort({"show", "job", std::to_string(id)}).out;
    EXPECT_NE(shown.find("JobName=short\n"), std::string::npos) << shown;
    EXPECT_NE(shown.find("Requeue=0 "), std::string::npos) << shown;
    cluster_->cohort({"cancel", std::to_string(id)});

    CommandResult ambiguous = cluster_->cohort({"batch", "-H", "--no", "--wrap", "true"});
    EXPECT_EQ(ambiguous.exit_code, 1);
    EXPECT_EQ(ambiguous.err,
              "cohort batch: error: --no: ambiguous option (accepted: one of --nodes, --no-kill, "
              "--no-requeue, --nodelist, --nodefile)\n");
    // As in sbatch 22.05, where --cluster-constraint also begins so.
    EXPECT_NE(cluster_->cohort({"batch", "-H", "--clu=cohort", "--wrap", "true"})
                      .err.find("--clu: ambiguous option"),
              std::string::npos);
}

// salloc: the command runs here with the allocation's environment, a step inside it runs on
// the allocated nodes, and the allocation ends with the command, which gives its exit code.
TEST_F(JobOptionsTest, AllocHoldsAnAllocationWhileItsCommandRuns) {
    const std::string inside = "echo nodes=$SLURM_JOB_NUM_NODES list=$SLURM_JOB_NODELIST; "
                               + cohort_binary()
                               + " run -l printenv SLURMD_NODENAME | sort; exit 5";
    CommandResult held = cluster_->cohort({"alloc", "-N2", "sh", "-c", inside});
    EXPECT_EQ(held.exit_code, 5) << held.err;
    EXPECT_EQ(held.out, "nodes=2 list=node[1-2]\n0: node1\n1: node2\n");
    std::smatch granted;
    ASSERT_TRUE(std::regex_search(held.err, granted,
                                  std::regex("salloc: Granted job allocation ([0-9]+)\n")))
            << held.err;
    const uint64_t id = std::stoull(granted[1]);
    EXPECT_NE(held.err.find("salloc: Relinquishing job allocation " + std::to_string(id)),
              std::string::npos);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "FAILED");
}

// sbatch -W: the command returns once the job has ended, with the job's exit code.
TEST_F(JobOptionsTest, WaitReturnsWithTheJobsExitCode) {
    const CommandResult waited = cluster_->cohort({"batch", "-W", "--wrap", "sleep 1; exit 7"});
    EXPECT_EQ(waited.exit_code, 7) << waited.err;
    std::smatch submitted;
    ASSERT_TRUE(
            std::regex_match(waited.out, submitted, std::regex("Submitted batch job ([0-9]+)\n")))
            << waited.out;
    EXPECT_EQ(cluster_->cohort({"batch", "--wait", "--wrap", "true"}).exit_code, 0);
    // What scripts parse: sacct -P with named fields, -X for the job alone.
    const std::string id = submitted[1];
    EXPECT_EQ(cluster_->cohort({"acct", "-X", "-P", "-o", "JobID,State,ExitCode", "-j", id}).out,
              "JobID|State|ExitCode\n" + id + "|FAILED|7:0\n");
}

// scontrol update job: a pending job's fields change together; a refused update (one bad
// field among good ones) is one line and changes nothing.
TEST_F(JobOptionsTest, UpdateJobChangesAPendingJobAllOrNothing) {
    const uint64_t id = submit({"-H", "-t", "30", "--wrap", "true"});
    const std::string job = "JobId=" + std::to_string(id);
    const auto shown = [&] {
        return cluster_->cohort({"show", "job", std::to_string(id)}).out;
    };
    const CommandResult updated = cluster_->cohort(
            {"scontrol", "update", job, "TimeLimit=10", "JobName=renamed", "Comment=second try"});
    ASSERT_EQ(updated.exit_code, 0) << updated.err;
    EXPECT_NE(shown().find(" JobName=renamed\n"), std::string::npos) << shown();
    EXPECT_NE(shown().find(" TimeLimit=00:10:00 TimeMin=N/A\n"), std::string::npos) << shown();
    EXPECT_NE(shown().find("   Comment=second try\n"), std::string::npos) << shown();
    const CommandResult refused = cluster_->cohort(
            {"scontrol", "update", job, "JobName=again", "Partition=nope", "TimeLimit=5"});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_EQ(lines_of(refused.err).size(), 1u) << refused.err;
    EXPECT_NE(refused.err.find("--partition: invalid partition 'nope'"), std::string::npos)
            << refused.err;
    EXPECT_NE(shown().find(" JobName=renamed\n"), std::string::npos) << shown();
    EXPECT_NE(shown().find(" TimeLimit=00:10:00 TimeMin=N/A\n"), std::string::npos) << shown();
    EXPECT_NE(cluster_->cohort({"scontrol", "update", job, "Color=blue"})
                      .err.find("color: unknown field (accepted: TimeLimit, Partition, QOS, "
                                "Nice, JobName, Dependency, StartTime, Comment)"),
              std::string::npos);
    cluster_->cohort({"cancel", std::to_string(id)});
}

// sbatch --test-only: nothing is submitted; sbatch's line says when and where the job would
// start against the running jobs (checked against Slurm 22.05: a job behind a running one
// starts at that job's end, on its nodes, counting the CPUs it would hold).
TEST_F(JobOptionsTest, TestOnlyTellsWhenAndWhereAJobWouldStartAndSubmitsNothing) {
    const std::string before = cluster_->cohort({"queue", "-h"}).out;
    const CommandResult idle = cluster_->cohort({"batch", "--test-only", "-N2", "--wrap", "true"});
    ASSERT_EQ(idle.exit_code, 0) << idle.err;
    EXPECT_EQ(idle.out, "");
    std::smatch told;
    const std::regex line(
            "sbatch: Job ([0-9]+) to start at (\\S+) using ([0-9]+) processors on "
            "nodes (\\S+) in partition debug\n");
    ASSERT_TRUE(std::regex_match(idle.err, told, line)) << idle.err;
    EXPECT_EQ(told[3], "2");
    EXPECT_EQ(told[4], "node[1-2]");
    EXPECT_EQ(cluster_->cohort({"queue", "-h"}).out, before);
    // The id it named is the one the next job gets: none was used up.
    const uint64_t busy = submit({"-N2", "--exclusive", "-t", "10", "--wrap", "sleep 300"});
    EXPECT_EQ(std::to_string(busy), told[1]);
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(busy) == "RUNNING"; }, seconds(30)));
    const std::string busy_until =
            cluster_->cohort({"queue", "-h", "-o", "%e", "-j", std::to_string(busy)}).out;
    const CommandResult behind = cluster_->cohort(
            {"batch", "--test-only", "-N1", "--exclusive", "-w", "node2", "--wrap", "true"});
    ASSERT_EQ(behind.exit_code, 0) << behind.err;
    ASSERT_TRUE(std::regex_match(behind.err, told, line)) << behind.err;
    EXPECT_EQ(told[2].str() + "\n", busy_until);
    EXPECT_EQ(told[3], "2");  // all of node2's CPUs, as --exclusive holds them
    EXPECT_EQ(told[4], "node2");
    // What could never run is refused as a submission would be.
    const CommandResult never = cluster_->cohort({"batch", "--test-only", "-N3", "--wrap", "true"});
    EXPECT_EQ(never.exit_code, 1);
    EXPECT_EQ(lines_of(never.err).size(), 1u) << never.err;
    EXPECT_NE(never.err.find("Requested node configuration is not available"), std::string::npos)
            << never.err;
    // srun's form: the same answer for a command instead of a script.
    const CommandResult step = cluster_->cohort({"run", "--test-only", "-N1", "true"});
    ASSERT_EQ(step.exit_code, 0) << step.err;
    EXPECT_TRUE(std::regex_match(
            step.err,
            std::regex("srun: Job [0-9]+ to start at " + busy_until.substr(0, busy_until.size() - 1)
                       + " using 1 processors on nodes node1 in partition debug\n")))
            << step.err;
    cluster_->cohort({"cancel", std::to_string(busy)});
    EXPECT_EQ(cluster_->wait_final_state(busy, seconds(30)), "CANCELLED");
}

// scontrol update job TimeLimit= on a running job: its agent enforces the new limit. Raised
// (by an operator, as root is here) the job runs past its old limit; lowered below what it
// has run, it ends at once with TIMEOUT.
TEST_F(JobOptionsTest, ARunningJobsTimeLimitMovesAndItsAgentEnforcesTheNewOne) {
    const uint64_t id = submit({"-t", "0:06", "--wrap", "sleep 60"});
    const std::string job = "JobId=" + std::to_string(id);
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(id) == "RUNNING"; }, seconds(30)));
    const CommandResult raised = cluster_->cohort({"scontrol", "update", job, "TimeLimit=5:00"});
    ASSERT_EQ(raised.exit_code, 0) << raised.err;
    EXPECT_NE(cluster_->cohort({"show", "job", std::to_string(id)})
                      .out.find(" TimeLimit=00:05:00 TimeMin=N/A\n"),
              std::string::npos);
    std::this_thread::sleep_for(seconds(8));  // past the old limit
    EXPECT_EQ(cluster_->job_state(id), "RUNNING");
    const auto lowered_at = std::chrono::steady_clock::now();
    const CommandResult lowered = cluster_->cohort({"scontrol", "update", job, "TimeLimit=0:02"});
    ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(40)), "TIMEOUT");
    EXPECT_LT(std::chrono::steady_clock::now() - lowered_at, seconds(35));
}

TEST_F(JobOptionsTest, BadValuesAreRefusedWithOneLineAndQueueNothing) {
    const std::string before = cluster_->cohort({"queue", "-h"}).out;
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
            {{"-x", "node9"},
             "--exclude: invalid node name 'node9' (accepted: the cluster's nodes, node[1-2])"},
            {{"-x", "node[1-2]"},
             "Requested node configuration is not available: 0 of partition 'debug' nodes left "
             "by --exclude for a job of 1"},
            {{"-x", "node[2-1]"}, "--exclude:"},
            {{"--mail-type=BEGIN,SOMETIMES"}, "--mail-type: invalid value 'BEGIN,SOMETIMES'"},
    };
    for (const auto& [options, message] : cases) {
        std::vector<std::string> args{"batch", "-H"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"--wrap", "true"});
        CommandResult refused = cluster_->cohort(args);
        EXPECT_EQ(refused.exit_code, 1) << options.front();
        EXPECT_EQ(lines_of(refused.err).size(), 1u) << refused.err;
        EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
    }
    EXPECT_EQ(cluster_->cohort({"queue", "-h"}).out, before);
}

}  // namespace
}  // namespace cohort::testing
