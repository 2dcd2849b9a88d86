// Real ranks through the PMIx-native launch path on a 2-node local instance: Open MPI,
// mpi4py and PyTorch (gloo) bootstrap with no wrapper, MPI_Abort ends the step with its
// status, and a rank that never joins the PMIx wire-up fails the step in bounded time.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

const std::string kPrograms = COHORT_MPI_PROGRAMS;  // built by tests/mpi
const std::string kScripts = COHORT_MPI_SOURCES;    // the Python programs
const std::string kPython = "/usr/bin/python3";     // Debian's, with mpi4py and torch

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

class MpiLaunchTest : public SharedCluster<MpiLaunchTest> {
protected:
    static CommandResult run(const std::vector<std::string>& args) {
        return cluster_->cohort(args, std::chrono::seconds(120));
    }
};

TEST_F(MpiLaunchTest, OpenMpiRanksOnOneNodeAllreduce) {
    CommandResult result = run({"run", "-N1", "-n2", kPrograms + "/allreduce_ompi"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank 0 of 2 sum 1", "rank 1 of 2 sum 1"}));
}

TEST_F(MpiLaunchTest, OpenMpiRanksOverTwoNodesAllreduce) {
    CommandResult result = run({"run", "-N2", "-n4", kPrograms + "/allreduce_ompi"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank 0 of 4 sum 6", "rank 1 of 4 sum 6",
                                        "rank 2 of 4 sum 6", "rank 3 of 4 sum 6"}));
}

// srun --het-group=0,1: the ranks of a heterogeneous job's two components, each on its own
// node, are one MPI_COMM_WORLD through one PMIx namespace.
TEST_F(MpiLaunchTest, HetJobComponentsShareOneMpiCommWorld) {
    const std::string dir = cluster_->work_dir();
    const std::string out = dir + "/het-mpi.out";
    std::ofstream(dir + "/het-mpi.sh")
            << "#!/bin/bash\n#SBATCH -N1 -n2 -o " << out << "\n#SBATCH hetjob\n#SBATCH -N1 -n1\n"
            << COHORT_BIN_DIR << "/cohort run --het-group=0,1 " << kPrograms << "/allreduce_ompi\n"
            << COHORT_BIN_DIR << "/cohort run --het-group=0-1 --mpi=none bash -c 'echo "
            << "$SLURM_PROCID $SLURM_JOB_ID $SLURMD_NODENAME $SLURM_JOB_NODELIST'\n";
    CommandResult submitted = run({"batch", "--parsable", dir + "/het-mpi.sh"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const uint64_t id = std::stoull(submitted.out);
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(60)), "COMPLETED");
    // Ranks 0-1 in component 0 on node1, rank 2 in component 1 on node2; every rank sees the
    // leader's id and both components' nodes, as in Slurm.
    const std::string leader = std::to_string(id);
    EXPECT_EQ(sorted_lines(read_text(out)),
              (std::vector<std::string>{"0 " + leader + " node1 node[1-2]",
                                        "1 " + leader + " node1 node[1-2]",
                                        "2 " + leader + " node2 node[1-2]", "rank 0 of 3 sum 3",
                                        "rank 1 of 3 sum 3", "rank 2 of 3 sum 3"}));
    const std::string steps = cluster_->cohort({"acct", "-n", "-P", "-j",
                                                std::to_string(id) + "," + std::to_string(id + 1),
                                                "-o", "JobID,NodeList,State"})
                                      .out;
    EXPECT_NE(steps.find(leader + "+0.0|node1|COMPLETED"), std::string::npos) << steps;
    EXPECT_NE(steps.find(leader + "+1.0|node2|COMPLETED"), std::string::npos) << steps;
}

TEST_F(MpiLaunchTest, OpenMpiRanksFenceOverUcx) {
    // The step managers exchange the modex over UCX (its TCP and shared-memory transports).
    CommandResult result =
            run({"run", "-N2", "-n4", "--pmix-transport=ucx", kPrograms + "/allreduce_ompi"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank 0 of 4 sum 6", "rank 1 of 4 sum 6",
                                        "rank 2 of 4 sum 6", "rank 3 of 4 sum 6"}));
}

TEST_F(MpiLaunchTest, AsyncModexFetchesRemoteRanksThroughDirectModex) {
    // No data in the wire-up fence: each rank's first touch of a remote rank asks its node's
    // step manager, which fetches the blob from the remote one (direct modex).
    for (const char* transport : {"tcp", "ucx"}) {
        CommandResult result = run(
                {"run", "-N2", "-n4", std::string("--pmix-transport=") + transport,
                 "--export=ALL,OMPI_MCA_pmix_base_async_modex=1,OMPI_MCA_pmix_base_collect_data=0",
                 kPrograms + "/allreduce_ompi"});
        ASSERT_EQ(result.exit_code, 0) << transport << ": " << result.err;
        EXPECT_EQ(sorted_lines(result.out).back(), "rank 3 of 4 sum 6") << transport;
    }
}

TEST_F(MpiLaunchTest, MpiAbortEndsTheStepWithItsStatusOnEveryNode) {
    // Rank 1 aborts with 7 once every rank has passed the barrier.
    CommandResult result = run({"run", "-N2", "-n4", kPrograms + "/allreduce_ompi", "1"});
    EXPECT_EQ(result.exit_code, 7) << result.err;
    EXPECT_NE(result.err.find("aborted by rank 1 with status 7"), std::string::npos) << result.err;
    // Open MPI's own explanation arrives through the PMIx log call.
    EXPECT_NE(result.err.find("MPI_ABORT was invoked on rank 1"), std::string::npos) << result.err;
}

TEST_F(MpiLaunchTest, Mpi4pyAllreduce) {
    CommandResult result = run({"run", "-N2", "-n4", kPython, kScripts + "/mpi4py_allreduce.py"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"mpi4py rank 0 of 4 sum 6", "mpi4py rank 1 of 4 sum 6",
                                        "mpi4py rank 2 of 4 sum 6", "mpi4py rank 3 of 4 sum 6"}));
}

TEST_F(MpiLaunchTest, PyTorchDistributedDataParallelOverGloo) {
    CommandResult result = run({"run", "-N2", "-n4", kPython, kScripts + "/torch_ddp.py"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{
                      "torch rank 0 of 4 local 0 sum 6", "torch rank 1 of 4 local 1 sum 6",
                      "torch rank 2 of 4 local 0 sum 6", "torch rank 3 of 4 local 1 sum 6"}));
}

TEST_F(MpiLaunchTest, MpichRanksOverPmi1) {
    CommandResult result = run({"run", "-N2", "-n4", "--mpi=pmi1", kPrograms + "/allreduce_mpich"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank 0 of 4 sum 6", "rank 1 of 4 sum 6",
                                        "rank 2 of 4 sum 6", "rank 3 of 4 sum 6"}));
}

TEST_F(MpiLaunchTest, MpichRanksTalkOverTheSocketTheyInheritAsPmiFd) {
    // Without PMI_PORT and PMI_ID, MPICH can only use PMI_FD: a socket only its rank holds.
    CommandResult fd = run({"run", "-N2", "-n2", "--mpi=pmi1", "sh", "-c",
                            "readlink /proc/self/fd/$PMI_FD | cut -d: -f1"});
    ASSERT_EQ(fd.exit_code, 0) << fd.err;
    EXPECT_EQ(fd.out, "socket\nsocket\n");
    CommandResult result = run({"run", "-N2", "-n4", "--mpi=pmi1", "sh", "-c",
                                "unset PMI_PORT PMI_ID; exec " + kPrograms + "/allreduce_mpich"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank 0 of 4 sum 6", "rank 1 of 4 sum 6",
                                        "rank 2 of 4 sum 6", "rank 3 of 4 sum 6"}));
}

TEST_F(MpiLaunchTest, MpichRanksOverPmi1WithUcxBarriers) {
    CommandResult result = run({"run", "-N2", "-n4", "--mpi=pmi1", "--pmix-transport=ucx",
                                kPrograms + "/allreduce_mpich"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out).size(), 4u);
}

TEST_F(MpiLaunchTest, MpichAbortOverPmi1EndsTheStepWithItsStatus) {
    CommandResult result =
            run({"run", "-N2", "-n4", "--mpi=pmi1", kPrograms + "/allreduce_mpich", "2"});
    EXPECT_EQ(result.exit_code, 7) << result.err;
    EXPECT_NE(result.err.find("aborted by rank 2 with status 7"), std::string::npos) << result.err;
}

TEST_F(MpiLaunchTest, Pmi2ClientsPutFenceAndGetAcrossNodes) {
    // A PMI-2 client written from the wire format (Debian's MPICH has only the PMI-1 one).
    CommandResult result =
            run({"run", "-N2", "-n4", "--mpi=pmi2", kPython, kScripts + "/pmi_client.py", "pmi2"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"pmi2 rank 0 of 4 got hello;from=1 map (vector,(0,2,2))",
                                        "pmi2 rank 1 of 4 got hello;from=2 map (vector,(0,2,2))",
                                        "pmi2 rank 2 of 4 got hello;from=3 map (vector,(0,2,2))",
                                        "pmi2 rank 3 of 4 got hello;from=0 map (vector,(0,2,2))"}));
}

TEST_F(MpiLaunchTest, Pmi2AbortEndsTheStep) {
    CommandResult result = run({"run", "-N2", "-n2", "--mpi=pmi2", kPython,
                                kScripts + "/pmi_client.py", "pmi2-abort"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("aborted by rank 1 with status 1: rank 1 gives up"),
              std::string::npos)
            << result.err;
}

TEST_F(MpiLaunchTest, MpichRanksUnderPmi2SpeakPmi1OnTheSamePort) {
    // Debian's MPICH 4.0.2 has only the PMI-1 client: --mpi=pmi2 serves it too, as Slurm's
    // pmi2 plugin does.
    CommandResult result = run({"run", "-N2", "-n4", "--mpi=pmi2", kPrograms + "/allreduce_mpich"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank 0 of 4 sum 6", "rank 1 of 4 sum 6",
                                        "rank 2 of 4 sum 6", "rank 3 of 4 sum 6"}));
}

TEST_F(MpiLaunchTest, APmiConnectionWithAWrongIdIsRefusedAndTheStepCarriesOn) {
    // Before MPICH starts, rank 0 connects to its PMI port with a wrong PMI_ID.
    CommandResult result = run({"run", "-N2", "-n2", "--mpi=pmi1", "sh", "-c",
                                "if [ \"$SLURM_PROCID\" = 0 ]; then " + kPython + " " + kScripts
                                        + "/pmi_client.py pmi1-wrong-id; fi; exec " + kPrograms
                                        + "/allreduce_mpich"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"intruder got 'cmd=initack rc=-1 "
                                        "msg=refused:_PMI_ID_is_not_one_of_this_step's_ranks_on_"
                                        "this_node' closed=True",
                                        "rank 0 of 2 sum 1", "rank 1 of 2 sum 1"}));
}

TEST_F(MpiLaunchTest, ARankThatNeverJoinsFailsTheStepInBoundedTime) {
    // Rank 1 is no PMIx client at all: rank 0 waits in the wire-up fence for node 2.
    const auto started = std::chrono::steady_clock::now();
    CommandResult result =
            run({"run", "-N2", "-n2", "--export=ALL,COHORT_PMIX_TIMEOUT=3", "sh", "-c",
                 "if [ \"$SLURM_PROCID\" = 1 ]; then sleep 60; else exec " + kPrograms
                         + "/allreduce_ompi; fi"});
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_NE(result.exit_code, 0);
    EXPECT_LT(took, std::chrono::seconds(30));
    EXPECT_NE(result.err.find("timed out after 3 s: no contribution from node2"), std::string::npos)
            << result.err;
    EXPECT_NE(result.err.find("try --mpi=pmi1 for MPICH, or --mpi=none"), std::string::npos)
            << result.err;
}

TEST_F(MpiLaunchTest, AHungMpiStepIsEndedByItsTimeLimit) {
    // Rank 0 waits in MPI_Init's fence for rank 1, which hangs: the time limit ends both.
    const auto started = std::chrono::steady_clock::now();
    CommandResult result = run({"run", "-N2", "-n2", "-t", "0:03", "sh", "-c",
                                "if [ \"$SLURM_PROCID\" = 1 ]; then sleep 120; else exec "
                                        + kPrograms + "/allreduce_ompi; fi"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(40));
}

TEST_F(MpiLaunchTest, MpirunCommandLinesRunAsSteps) {
    CommandResult result = run({"mpirun", "--oversubscribe", "-np", "4", "--map-by", "ppr:2:node",
                                kPrograms + "/allreduce_ompi"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out).size(), 4u);
    EXPECT_EQ(sorted_lines(result.out).front(), "rank 0 of 4 sum 6");
    // Inside a batch job, -H picks nodes of the allocation; -x exports a variable.
    const std::string script = "#!/bin/sh\n" + cohort_binary()
            + " mpirun -np 2 -H node2:2 -x GREETING=hi sh -c "
              "'echo $SLURMD_NODENAME $GREETING $SLURM_NTASKS'\n";
    std::ofstream(cluster_->work_dir() + "/mpirun.sh") << script;
    CommandResult batch = run(
            {"batch", "--parsable", "-N2", "--ntasks-per-node=2", "-o", "mpirun.out", "mpirun.sh"});
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    const uint64_t id = std::strtoull(batch.out.c_str(), nullptr, 10);
    ASSERT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(60)), "COMPLETED");
    std::ifstream out(cluster_->work_dir() + "/mpirun.out");
    std::stringstream text;
    text << out.rdbuf();
    EXPECT_EQ(sorted_lines(text.str()), (std::vector<std::string>{"node2 hi 2", "node2 hi 2"}));
    result = run({"mpirun", "--bind-to", "core", "true"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("mpirun option '--bind-to' is not supported"), std::string::npos)
            << result.err;
}

// The mpirun-style script, unchanged: Open MPI's mpirun and MPICH's mpiexec find the
// allocation in the SLURM_* variables and start their daemons (orted, hydra_pmi_proxy) with
// `srun`, which here is Cohort's. Each rank prints the node its daemon runs on.
TEST_F(MpiLaunchTest, OpenMpiMpirunAndMpichMpiexecStartTheirDaemonsThroughSrunOnBothNodes) {
    const std::string compat = std::filesystem::path(bin_dir()).parent_path().string() + "/compat";
    ASSERT_TRUE(std::filesystem::exists(compat + "/srun")) << compat;
    // Open MPI puts its own prefix's bin (/usr/bin on Debian) first on srun's PATH, so where
    // Slurm's srun is installed too (as for the differential tests), mpirun would call it. A
    // host of this cluster has Cohort's srun there; a mount namespace gives mpirun that view.
    std::string open_mpi_host;
    if (std::filesystem::exists("/usr/bin/srun")) {
        if (geteuid() != 0) {
            GTEST_SKIP() << "Slurm's /usr/bin/srun would take mpirun's daemons; hiding it "
                            "needs root";
        }
        open_mpi_host = "unshare -m sh -c 'mount --bind " + cohort_binary()
                        + " /usr/bin/srun && exec \"$0\" \"$@\"' ";
    }
    const std::string script = "#!/bin/bash\n"
                               "export PATH=" + compat + ":$PATH\n"
                               "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                               "where='echo $0 ${OMPI_COMM_WORLD_RANK:-$PMI_RANK} "
                               "$(tr \"\\0\" \"\\n\" < /proc/$PPID/environ "
                               "| sed -n \"s/^SLURMD_NODENAME=//p\")'\n"
                               "mpiexec.mpich sh -c \"$where\" mpich\n"
                               "mpiexec.mpich " + kPrograms + "/allreduce_mpich\n"
            + open_mpi_host + "mpirun.openmpi sh -c \"$where\" ompi\n"
            + open_mpi_host + "mpirun.openmpi " + kPrograms + "/allreduce_ompi\n";
    std::ofstream(cluster_->work_dir() + "/mpi_style.sh") << script;
    CommandResult batch = run({"batch", "--parsable", "-N2", "--ntasks-per-node=2", "-o",
                               "mpi_style.out", "mpi_style.sh"});
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    const uint64_t id = std::strtoull(batch.out.c_str(), nullptr, 10);
    const std::string state = cluster_->wait_final_state(id, std::chrono::seconds(120));
    std::ifstream out(cluster_->work_dir() + "/mpi_style.out");
    std::stringstream text;
    text << out.rdbuf();
    ASSERT_EQ(state, "COMPLETED") << text.str();
    std::vector<std::string> expected;
    for (const std::string mpi : {"mpich", "ompi"}) {
        for (const std::string rank_node : {"0 node1", "1 node1", "2 node2", "3 node2"}) {
            expected.push_back(mpi + " " + rank_node);
        }
    }
    for (int twice = 0; twice < 2; ++twice) {
        for (const std::string rank : {"0", "1", "2", "3"}) {
            expected.push_back("rank " + rank + " of 4 sum 6");
        }
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted_lines(text.str()), expected);
}

TEST_F(MpiLaunchTest, KillOnBadExitIsTheDefaultForMpiStepsAndEndsTheOthersAtOnce) {
    const std::string rank1_fails = "if [ \"$SLURM_PROCID\" = 1 ]; then exit 3; else sleep 60; fi";
    // An MPI step (PMIx, the default) without -K: rank 0 does not sleep its 60 s out.
    auto started = std::chrono::steady_clock::now();
    CommandResult result = run({"run", "-N2", "-n2", "sh", "-c", rank1_fails});
    EXPECT_EQ(result.exit_code, 3) << "the failed task's code, not the others' SIGKILL";
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
    EXPECT_NE(result.err.find("task 1 exited with 3"), std::string::npos) << result.err;
    // -K asks for it on a step without MPI.
    started = std::chrono::steady_clock::now();
    result = run({"run", "-N2", "-n2", "-K", "--mpi=none", "sh", "-c", rank1_fails});
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
    // -K0 (srun's attached value), and --mpi=none by default: the others run to their end.
    const std::string rank0_survives =
            "if [ \"$SLURM_PROCID\" = 1 ]; then exit 3; else sleep 1; echo survived; fi";
    for (const std::vector<std::string>& options :
         {std::vector<std::string>{"-K0"}, std::vector<std::string>{"--kill-on-bad-exit=0"},
          std::vector<std::string>{"--mpi=none"}}) {
        std::vector<std::string> args{"run", "-N2", "-n2"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"sh", "-c", rank0_survives});
        result = run(args);
        EXPECT_EQ(result.exit_code, 3) << options.front();
        EXPECT_EQ(result.out, "survived\n") << options.front() << ": " << result.err;
    }
    result = run({"run", "-n1", "--kill-on-bad-exit=2", "true"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("--kill-on-bad-exit: invalid value '2' (accepted: 0 or 1"),
              std::string::npos)
            << result.err;
}

TEST_F(MpiLaunchTest, TorchVariablesCanBeSwitchedOff) {
    CommandResult on = run({"run", "-n1", "sh", "-c", "echo ${RANK:-unset} ${MASTER_PORT:+set}"});
    EXPECT_EQ(on.out, "0 set\n") << on.err;
    CommandResult off = run({"run", "-n1", "--export-torch-env=no", "sh", "-c",
                             "echo ${RANK:-unset} ${MASTER_ADDR:-unset} $SLURM_PROCID"});
    EXPECT_EQ(off.out, "unset unset 0\n") << off.err;
}

TEST_F(MpiLaunchTest, StdinGoesToRankZeroAndOutputFilesArePerTask) {
    CommandResult piped =
            run_command({"/bin/sh", "-c",
                         "printf 'one\\ntwo\\n' | " + cohort_binary()
                                 + " run -N2 -n2 -l sh -c 'cat; echo done'"},
                        cluster_->conf(), std::chrono::seconds(60), cluster_->work_dir());
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(sorted_lines(piped.out),
              (std::vector<std::string>{"0: done", "0: one", "0: two", "1: done"}));
    CommandResult files = run({"run", "-N2", "-n3", "-o", "task-%t-of-%j.out", "sh", "-c",
                               "echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2"});
    ASSERT_EQ(files.exit_code, 0) << files.err;
    EXPECT_EQ(files.out, "");
    for (int rank = 0; rank < 3; ++rank) {
        std::string found;
        for (const auto& entry : std::filesystem::directory_iterator(cluster_->work_dir())) {
            const std::string name = entry.path().filename().string();
            if (name.rfind("task-" + std::to_string(rank) + "-of-", 0) == 0) {
                std::ifstream in(entry.path());
                std::stringstream text;
                text << in.rdbuf();
                found = text.str();
            }
        }
        EXPECT_EQ(found, "out " + std::to_string(rank) + "\nerr " + std::to_string(rank) + "\n");
    }
}

TEST_F(MpiLaunchTest, CyclicDistributionDealsRanksRoundRobinOverTheNodes) {
    CommandResult result =
            run({"run", "-N2", "-n4", "-l", "--distribution=cyclic", "sh", "-c",
                 "echo $SLURM_PROCID $SLURM_NODEID $SLURM_LOCALID $SLURM_DISTRIBUTION"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    // -l labels each line with the task's global rank.
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"0: 0 0 0 cyclic", "1: 1 1 0 cyclic", "2: 2 0 1 cyclic",
                                        "3: 3 1 1 cyclic"}));
}

TEST_F(MpiLaunchTest, OpenMpiAndMpichRanksAgreeWithACyclicLayout) {
    // The PMIx proc map and PMI_process_mapping follow the distribution, so the MPIs find
    // their local and remote peers where they are.
    CommandResult ompi = run({"run", "-N2", "-n4", "-m", "cyclic", kPrograms + "/allreduce_ompi"});
    ASSERT_EQ(ompi.exit_code, 0) << ompi.err;
    EXPECT_EQ(sorted_lines(ompi.out),
              (std::vector<std::string>{"rank 0 of 4 sum 6", "rank 1 of 4 sum 6",
                                        "rank 2 of 4 sum 6", "rank 3 of 4 sum 6"}));
    CommandResult mpich = run(
            {"run", "-N2", "-n4", "-m", "cyclic", "--mpi=pmi1", kPrograms + "/allreduce_mpich"});
    ASSERT_EQ(mpich.exit_code, 0) << mpich.err;
    EXPECT_EQ(sorted_lines(mpich.out).size(), 4u) << mpich.out;
    EXPECT_EQ(sorted_lines(mpich.out).back(), "rank 3 of 4 sum 6") << mpich.out;
}

TEST_F(MpiLaunchTest, AnUnknownDistributionIsRefusedWithTheValue) {
    CommandResult result = run({"run", "-N2", "-n4", "--distribution=arbitrary", "true"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("--distribution: invalid value 'arbitrary' (accepted: block, "
                              "cyclic, plane=N with N >= 1)"),
              std::string::npos)
            << result.err;
}

TEST_F(MpiLaunchTest, UnknownMpiTypeOrTransportIsRejected) {
    CommandResult result = run({"run", "--mpi=lam", "true"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("--mpi: invalid value 'lam' (accepted: pmix, pmix_v4, pmi1, pmi2, "
                              "none)"),
              std::string::npos)
            << result.err;
    result = run({"run", "--pmix-transport=ib", "true"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("--pmix-transport: invalid value 'ib' (accepted: tcp, ucx)"),
              std::string::npos)
            << result.err;
}

}  // namespace
}  // namespace cohort::testing
