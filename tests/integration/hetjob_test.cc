// Heterogeneous jobs (#SBATCH hetjob) end to end on a 4-node instance: components with
// consecutive ids shown as N+k, the options each carries over from the one before, one
// all-or-nothing start, the script's SLURM_*_HET_GROUP_<n> variables, steps in a component
// and across components (cohort run --het-group), and cancel and refusals as Slurm 22.05 has
// them. One MPI_COMM_WORLD across components is in mpi_launch_test.cc.
#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/shared_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

const std::string kCohort = std::string(COHORT_BIN_DIR) + "/cohort";

class HetJobTest : public SharedCluster<HetJobTest> {
public:
    static constexpr int kNodes = 4;

protected:
    std::string write_script(const std::string& name, const std::string& text) const {
        const std::string path = cluster_->work_dir() + "/" + name;
        std::ofstream(path) << text;
        return path;
    }

    std::string shown(const std::string& id) const {
        return cluster_->cohort({"show", "job", id}).out;
    }

    std::string queue_ids() const { return cluster_->cohort({"queue", "-h", "-o", "%i %T"}).out; }
};

TEST_F(HetJobTest, ComponentsStartTogetherAndTheScriptSeesEachOne) {
    const std::string out = cluster_->work_dir() + "/het-%j.out";
    const std::string script = write_script(
            "het.sh",
            "#!/bin/bash\n"
            "#SBATCH --job-name=rlhf --time=5 --comment=shared -o " + out + "\n"
            "#SBATCH --nodes=1 --ntasks=1 --cpus-per-task=2\n"
            "#SBATCH hetjob\n"
            "#SBATCH --nodes=2 --ntasks-per-node=1 --time=7\n"
            "env | grep -E '^SLURM_(HET_SIZE|JOB_ID|NTASKS|JOB_NODELIST|CPUS_PER_TASK)"
            "(_HET_GROUP_[01])?=' | sort\n"
            + kCohort + " run --het-group=1 bash -c 'echo g1 $SLURM_PROCID/$SLURM_NTASKS "
            "$SLURM_JOB_ID $SLURMD_NODENAME' | sort\n"
            + kCohort + " run bash -c 'echo g0 $SLURM_PROCID/$SLURM_NTASKS $SLURMD_NODENAME'\n"
            + kCohort + " run --het-group=0,1 bash -c 'echo both $SLURM_PROCID/$SLURM_NTASKS "
            "$SLURM_JOB_ID $SLURM_CPUS_PER_TASK $SLURM_JOB_NODELIST' | sort\n");
    const uint64_t id = submit_batch(*cluster_, {"-H", script});
    ASSERT_NE(id, 0u);
    const std::string leader = std::to_string(id);
    const std::string second = std::to_string(id + 1);
    EXPECT_EQ(queue_ids(), leader + "+0 PENDING\n" + leader + "+1 PENDING\n");

    // Component 1 carries over the name, comment and output; sets its own size and time.
    const std::string component = shown(second);
    EXPECT_NE(component.find("JobId=" + second + " HetJobId=" + leader
                             + " HetJobOffset=1 JobName=rlhf\n   HetJobIdSet=" + leader + "-"
                             + second + "\n"),
              std::string::npos)
            << component;
    EXPECT_NE(component.find("TimeLimit=00:07:00"), std::string::npos) << component;
    EXPECT_NE(component.find("Comment=shared"), std::string::npos) << component;
    EXPECT_NE(shown(leader).find("TimeLimit=00:05:00"), std::string::npos) << shown(leader);
    // The leader's id shows every component, as scontrol does.
    EXPECT_EQ(shown(leader).rfind("JobId=" + leader + " HetJobId=", 0), 0u) << shown(leader);
    EXPECT_NE(shown(leader).find("\n\nJobId=" + second + " HetJobId=" + leader), std::string::npos)
            << shown(leader);
    const auto json = nlohmann::json::parse(
            cluster_->cohort({"show", "job", leader + "+1", "--json"}).out, nullptr, false);
    ASSERT_FALSE(json.is_discarded());
    EXPECT_EQ(json["jobs"][0]["het_job_id"]["number"], id);
    EXPECT_EQ(json["jobs"][0]["het_job_offset"]["number"], 1);

    // scontrol update of the leader's id changes every component (here the time limit, which
    // a user may lower), of a component's id that component only.
    ASSERT_EQ(cluster_->cohort({"scontrol", "update", "JobId=" + leader, "TimeLimit=4"}).exit_code,
              0);
    EXPECT_NE(shown(second).find("TimeLimit=00:04:00"), std::string::npos) << shown(second);
    ASSERT_EQ(cluster_->cohort({"scontrol", "update", "JobId=" + leader + "+1", "Comment=own"})
                      .exit_code,
              0);
    EXPECT_NE(shown(second).find("Comment=own"), std::string::npos) << shown(second);
    EXPECT_NE(shown(leader).find("Comment=shared"), std::string::npos) << shown(leader);

    // Releasing the leader releases the whole job; both components start at once.
    ASSERT_EQ(cluster_->cohort({"release", leader}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(30)), "COMPLETED");
    const auto start_of = [&](uint64_t job) {
        return cluster_
                ->cohort({"acct", "-X", "-n", "-P", "-j", std::to_string(job), "-o", "Start"})
                .out;
    };
    const std::string started = start_of(id + 1);  // the leader's id lists both components
    EXPECT_EQ(start_of(id), started + started);
    // sacct's form: the leader's id names every component.
    const auto acct_ids = [&] {
        return cluster_->cohort({"acct", "-X", "-n", "-P", "-j", leader, "-o", "JobID,JobIDRaw"})
                .out;
    };
    EXPECT_TRUE(eventually(
            [&] {
                return acct_ids()
                       == leader + "+0|" + leader + "\n" + leader + "+1|" + second + "\n";
            },
            seconds(10)))
            << acct_ids();

    const std::string text = read_text(cluster_->work_dir() + "/het-" + leader + ".out");
    for (const std::string& line : std::vector<std::string>{
                 std::string("SLURM_HET_SIZE=2\n"), "SLURM_JOB_ID=" + leader + "\n",
                 "SLURM_JOB_ID_HET_GROUP_0=" + leader + "\n",
                 "SLURM_JOB_ID_HET_GROUP_1=" + second + "\n", "SLURM_NTASKS_HET_GROUP_0=1\n",
                 "SLURM_NTASKS_HET_GROUP_1=2\n", "SLURM_CPUS_PER_TASK_HET_GROUP_0=2\n",
                 "g1 0/2 " + leader + " ", "g1 1/2 " + leader + " ", "g0 0/1 ",
                 // One step over both: ranks through the components in order, each with its
                 // own component's CPUs per task, all in the leader's job.
                 "both 0/3 " + leader + " 2 node[1-3]\n", "both 1/3 " + leader + " 1 node[1-3]\n",
                 "both 2/3 " + leader + " 1 node[1-3]\n"}) {
        EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
    }
    EXPECT_EQ(text.find("SLURM_CPUS_PER_TASK_HET_GROUP_1"), std::string::npos) << text;
    // Component 1's two tasks ran on its two nodes, none of them component 0's.
    const auto nodes_of = [&](const std::string& job) {
        return cluster_->cohort({"acct", "-X", "-n", "-P", "-j", job, "-o", "NodeList"}).out;
    };
    EXPECT_EQ(nodes_of(second).find(nodes_of(leader).substr(0, 5)), std::string::npos);
}

// srun A : B: one step, a part in each component with its own task count and command.
TEST_F(HetJobTest, ColonPartsRunTheirOwnCommandsInOneStep) {
    const std::string out = cluster_->work_dir() + "/colon-%j.out";
    const std::string script = write_script(
            "colon.sh", "#!/bin/bash\n#SBATCH -N1 -n2 -o " + out
                                + "\n#SBATCH hetjob\n#SBATCH -N2 --ntasks-per-node=1\n" + kCohort
                                + " run -n1 bash -c 'echo A $SLURM_PROCID/$SLURM_NTASKS' : -n2 "
                                  "bash -c 'echo B $SLURM_PROCID/$SLURM_NTASKS' | sort\n"
                                + kCohort + " run -n2 : -n1 hostname | wc -l\n");
    const uint64_t id = submit_batch(*cluster_, {script});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    EXPECT_EQ(read_text(cluster_->work_dir() + "/colon-" + std::to_string(id) + ".out"),
              "A 0/3\nB 1/3\nB 2/3\n3\n");
}

// salloc A : B: one allocation of two components for one command, which sees each
// component's variables and runs steps in either or across both; the allocation ends with it.
TEST_F(HetJobTest, AllocHoldsEveryComponentForItsCommand) {
    const std::string inside =
            "env | grep -E '^SLURM_(HET_SIZE|JOB_ID|JOB_NUM_NODES|NTASKS)(_HET_GROUP_[01])?=' "
            "| sort; "
            + kCohort + " run --het-group=1 printenv SLURMD_NODENAME | sort -u | wc -l; " + kCohort
            + " run -n1 : -n2 bash -c 'echo part $SLURM_PROCID/$SLURM_NTASKS' | sort";
    const CommandResult held = cluster_->cohort(
            {"alloc", "-N1", "-n1", "-c2", ":", "-N2", "--ntasks-per-node=1", "sh", "-c", inside});
    ASSERT_EQ(held.exit_code, 0) << held.err;
    std::smatch granted;
    ASSERT_TRUE(std::regex_search(held.err, granted,
                                  std::regex("salloc: Granted job allocation ([0-9]+)\n")))
            << held.err;
    const uint64_t id = std::stoull(granted[1]);
    const std::string leader = std::to_string(id);
    const std::string second = std::to_string(id + 1);
    EXPECT_EQ(held.out, "SLURM_HET_SIZE=2\nSLURM_JOB_ID=" + leader
                                + "\nSLURM_JOB_ID_HET_GROUP_0=" + leader
                                + "\nSLURM_JOB_ID_HET_GROUP_1=" + second
                                + "\nSLURM_JOB_NUM_NODES=1\nSLURM_JOB_NUM_NODES_HET_GROUP_0=1"
                                  "\nSLURM_JOB_NUM_NODES_HET_GROUP_1=2\nSLURM_NTASKS=1"
                                  "\nSLURM_NTASKS_HET_GROUP_0=1\nSLURM_NTASKS_HET_GROUP_1=2\n"
                                  "2\npart 0/3\npart 1/3\npart 2/3\n");
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(30)), "COMPLETED");

    // Once the command has begun, ':' is one of its words: one job, not two components.
    const CommandResult words = cluster_->cohort({"alloc", "-N1", "echo", "a", ":", "-N2"});
    ASSERT_EQ(words.exit_code, 0) << words.err;
    EXPECT_EQ(words.out, "a : -N2\n");
}

// srun A : B outside a job, as Slurm runs it: a heterogeneous job of a component per part,
// one step across them (one job id to the ranks: the leader's), and the job ends with it.
TEST_F(HetJobTest, ColonPartsOutsideAJobMakeTheirOwnHetJob) {
    const CommandResult ran = cluster_->cohort(
            {"run", "-N1", "-n1", "sh", "-c", "echo A $SLURM_PROCID/$SLURM_NTASKS $SLURM_JOB_ID",
             ":", "-N2", "--ntasks-per-node=1", "sh", "-c",
             "echo B $SLURM_PROCID/$SLURM_NTASKS $SLURM_JOB_ID"});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    std::smatch first;
    ASSERT_TRUE(std::regex_search(ran.out, first, std::regex("A 0/3 ([0-9]+)\n"))) << ran.out;
    const uint64_t id = std::stoull(first[1]);
    std::istringstream lines(ran.out);
    std::vector<std::string> sorted;
    for (std::string line; std::getline(lines, line);) {
        sorted.push_back(line);
    }
    std::sort(sorted.begin(), sorted.end());
    const std::string leader = std::to_string(id);
    EXPECT_EQ(sorted,
              (std::vector<std::string>{"A 0/3 " + leader, "B 1/3 " + leader, "B 2/3 " + leader}));
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(30)), "COMPLETED");
    const std::string nodes =
            cluster_->cohort({"acct", "-X", "-n", "-P", "-j", leader, "-o", "JobID,NNodes"}).out;
    EXPECT_EQ(nodes, leader + "+0|1\n" + leader + "+1|2\n");
}

// A waiting salloc A : B that is interrupted takes every component with it; a component it
// cannot accept is refused with one line and queues nothing.
TEST_F(HetJobTest, AllocWaitingOrRefusedLeavesNoComponentBehind) {
    const CommandResult interrupted =
            run_command({"timeout", "-s", "INT", "3", kCohort, "alloc", "--begin=now+3600", "-N1",
                         ":", "-N1", "true"},
                        cluster_->conf(), seconds(30), cluster_->work_dir());
    EXPECT_EQ(interrupted.exit_code, 124) << interrupted.err;  // timeout's, having signalled
    std::smatch cancelled;
    ASSERT_TRUE(std::regex_search(
            interrupted.err, cancelled,
            std::regex("interrupted while waiting for resources; job ([0-9]+) cancelled")))
            << interrupted.err;
    const uint64_t id = std::stoull(cancelled[1]);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(10)), "CANCELLED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(10)), "CANCELLED");

    const std::string before = queue_ids();
    const CommandResult refused = cluster_->cohort({"alloc", "-N1", ":", "-N9", "true"});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    EXPECT_NE(refused.err.find("heterogeneous job component 1"), std::string::npos) << refused.err;
    const CommandResult too_many = cluster_->cohort({"alloc", "-N2", ":", "-N3", "true"});
    EXPECT_EQ(too_many.exit_code, 1);
    EXPECT_EQ(too_many.err,
              "cohort alloc: error: heterogeneous job: its components need 5 nodes and their "
              "partitions have 4 (accepted: components that fit side by side; components never "
              "share a node)\n");
    const CommandResult shared =
            cluster_->cohort({"alloc", "-w", "node1", ":", "-w", "node1", "true"});
    EXPECT_EQ(shared.exit_code, 1);
    EXPECT_EQ(shared.err,
              "cohort alloc: error: heterogeneous job component 1: --nodelist: node node1 is "
              "named by component 0 too (accepted: nodes no other component names; components "
              "never share a node)\n");
    const CommandResult bad_option = cluster_->cohort({"alloc", "-N1", ":", "--nodez=2", "true"});
    EXPECT_EQ(bad_option.exit_code, 1);
    EXPECT_EQ(std::count(bad_option.err.begin(), bad_option.err.end(), '\n'), 1) << bad_option.err;
    EXPECT_NE(bad_option.err.find("heterogeneous job component 1"), std::string::npos)
            << bad_option.err;
    EXPECT_EQ(queue_ids(), before);
}

// Each component ends at its own time limit, as in Slurm 22.05 (measured: `salloc -t1 -N1 :
// -t3 -N1` ends component 0 after a minute and component 1's step at three): here component
// 1 runs no step, so no agent holds its limit and the controller ends it. An allocation whose
// command outlives its limit is ended the same way, and its command hears of it.
TEST_F(HetJobTest, ComponentsAndAllocationsEndAtTheirOwnTimeLimits) {
    const std::string script = write_script("limits.sh",
                                            "#!/bin/bash\n"
                                            "#SBATCH -N1 -t 0:30\n"
                                            "#SBATCH hetjob\n"
                                            "#SBATCH -N1 -t 0:02\n"
                                            "sleep 5\n");
    const uint64_t id = submit_batch(*cluster_, {script});
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(20)), "TIMEOUT");
    EXPECT_EQ(cluster_->job_state(id), "RUNNING");
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");

    const CommandResult held =
            cluster_->cohort({"alloc", "-N1", "-t", "0:02", "sleep", "30"}, seconds(20));
    EXPECT_EQ(held.exit_code, 128 + SIGHUP) << held.err;
    std::smatch revoked;
    ASSERT_TRUE(std::regex_search(held.err, revoked,
                                  std::regex("salloc: Job allocation ([0-9]+) has been revoked")))
            << held.err;
    EXPECT_EQ(cluster_->wait_final_state(std::stoull(revoked[1]), seconds(10)), "TIMEOUT");
}

// A heterogeneous job is requeued whole: through its leader, never one component alone;
// its components start again together, each on its next attempt.
TEST_F(HetJobTest, RequeueStartsEveryComponentAgain) {
    const std::string script = write_script("requeue.sh",
                                            "#!/bin/bash\n"
                                            "#SBATCH -N1\n"
                                            "#SBATCH hetjob\n"
                                            "#SBATCH -N1\n"
                                            "sleep 60\n");
    const uint64_t id = submit_batch(*cluster_, {script});
    const std::string leader = std::to_string(id);
    ASSERT_TRUE(eventually(
            [&] {
                return cluster_->job_state(id) == "RUNNING"
                       && cluster_->job_state(id + 1) == "RUNNING";
            },
            seconds(20)));
    const CommandResult alone = cluster_->cohort({"requeue", leader + "+1"});
    EXPECT_EQ(alone.exit_code, 1);
    EXPECT_NE(alone.err.find("job " + leader
                             + "+1: a component of a heterogeneous job cannot be requeued alone "
                               "(accepted: the whole job, "
                             + leader + ")"),
              std::string::npos)
            << alone.err;
    ASSERT_EQ(cluster_->cohort({"requeue", leader}).exit_code, 0);
    const auto restarted = [&](uint64_t job) {
        const std::string text = shown(std::to_string(job));
        return text.find("JobState=RUNNING") != std::string::npos
               && text.find("Restarts=1") != std::string::npos;
    };
    EXPECT_TRUE(eventually([&] { return restarted(id) && restarted(id + 1); }, seconds(30)))
            << shown(leader) << shown(std::to_string(id + 1));
    ASSERT_EQ(cluster_->cohort({"cancel", leader}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "CANCELLED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(30)), "CANCELLED");
}

// Three nodes are busy: component 0 would fit on the fourth now, but component 1 needs two
// nodes, so neither starts until the blocker ends; then both do.
TEST_F(HetJobTest, NoComponentStartsWithoutTheOthers) {
    const uint64_t blocker = submit_batch(*cluster_, {"-N3", "--exclusive", "--wrap", "sleep 4"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(blocker) == "RUNNING"; }, seconds(20)));
    const std::string script = write_script("wait.sh",
                                            "#!/bin/bash\n"
                                            "#SBATCH -N1 --exclusive\n"
                                            "#SBATCH hetjob\n"
                                            "#SBATCH -N2 --exclusive\n"
                                            "true\n");
    const uint64_t id = submit_batch(*cluster_, {script});
    ASSERT_TRUE(eventually(
            [&] { return shown(std::to_string(id)).find("Reason=Resources") != std::string::npos; },
            seconds(10)))
            << shown(std::to_string(id));
    EXPECT_EQ(cluster_->job_state(id), "PENDING");
    EXPECT_EQ(cluster_->job_state(id + 1), "PENDING");
    EXPECT_EQ(cluster_->wait_final_state(blocker, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(30)), "COMPLETED");
}

TEST_F(HetJobTest, CancelAndRefusalsActOnTheWholeJob) {
    const std::string script = write_script("two.sh",
                                            "#!/bin/bash\n"
                                            "#SBATCH -N1\n"
                                            "#SBATCH hetjob\n"
                                            "#SBATCH -N1\n"
                                            "true\n");
    const uint64_t id = submit_batch(*cluster_, {"-H", script});
    const std::string leader = std::to_string(id);
    const CommandResult alone = cluster_->cohort({"cancel", leader + "+1"});
    EXPECT_EQ(alone.exit_code, 1);
    EXPECT_NE(alone.err.find("job " + leader
                             + "+1: a pending component of a heterogeneous job cannot be acted "
                               "on alone (accepted: the whole job, "
                             + leader + ")"),
              std::string::npos)
            << alone.err;
    EXPECT_EQ(cluster_->job_state(id + 1), "PENDING");
    ASSERT_EQ(cluster_->cohort({"cancel", leader}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(10)), "CANCELLED");
    EXPECT_EQ(cluster_->wait_final_state(id + 1, seconds(10)), "CANCELLED");

    // Refused whole, with one line naming the component; nothing is queued.
    const std::string before = queue_ids();
    const auto refused = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{"batch", "-H"};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.push_back(script);
        const CommandResult result = cluster_->cohort(argv);
        EXPECT_EQ(result.exit_code, 1);
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_EQ(queue_ids(), before);
        return result.err;
    };
    EXPECT_NE(refused({"--array=1-2"}).find("--array: a heterogeneous job cannot be an array"),
              std::string::npos);
    // --test-only: one line for the whole job, as sbatch prints it; nothing is queued.
    const CommandResult test_only = cluster_->cohort({"batch", "--test-only", script});
    EXPECT_EQ(test_only.exit_code, 0) << test_only.err;
    EXPECT_EQ(test_only.err.rfind("sbatch: Job ", 0), 0u) << test_only.err;
    EXPECT_NE(test_only.err.find(" using 2 processors on nodes "), std::string::npos)
            << test_only.err;
    EXPECT_EQ(queue_ids(), before);
    const std::string too_big = write_script("big.sh",
                                             "#!/bin/bash\n"
                                             "#SBATCH -N1\n"
                                             "#SBATCH hetjob\n"
                                             "#SBATCH -N9\n"
                                             "true\n");
    const CommandResult big = cluster_->cohort({"batch", too_big});
    EXPECT_EQ(big.exit_code, 1);
    EXPECT_NE(big.err.find("heterogeneous job component 1: "), std::string::npos) << big.err;
    EXPECT_EQ(queue_ids(), before);
}

}  // namespace
}  // namespace cohort::testing
