// --hint on nodes with two hardware threads per core, end to end: what a job is allocated,
// what is refused, what `show job`/`show node` print and what the batch script sees, as
// Slurm 22.05 does with select/cons_tres (measured on loopback: 2 x 4 x 2 nodes, CR_Core).
// The nodes register a recorded JUWELS Booster topology (tests/data/topologies), 48 cores of
// 2 threads each: 96 CPUs.
#include <gtest/gtest.h>

#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

class HintTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        cluster_ = new LocalCluster(2, {"--topology", "tests/data/topologies/psmgmt-jwb0001.xml"});
    }

    static void TearDownTestSuite() {
        delete cluster_;
        cluster_ = nullptr;
    }

    void SetUp() override { ASSERT_TRUE(cluster_->up()); }

    std::string shown(uint64_t id) const {
        return cluster_->cohort({"show", "job", std::to_string(id)}).out;
    }

    // Runs a batch job of `options` to its end; what `show job` printed then.
    std::string ran(std::vector<std::string> options) const {
        options.insert(options.end(), {"--wrap", "true"});
        const uint64_t id = submit_batch(*cluster_, options);
        EXPECT_TRUE(eventually([&] { return cluster_->job_state(id) == "COMPLETED"; }, seconds(30)))
                << shown(id);
        return shown(id);
    }

    static LocalCluster* cluster_;
};

LocalCluster* HintTest::cluster_ = nullptr;

bool shows(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST_F(HintTest, NodesShowTheirThreadsPerCore) {
    const CommandResult node = cluster_->cohort({"scontrol", "show", "node", "node1"});
    ASSERT_EQ(node.exit_code, 0) << node.err;
    EXPECT_TRUE(shows(node.out, " CPUTot=96\n")) << node.out;
    EXPECT_TRUE(shows(node.out, " ThreadsPerCore=2\n")) << node.out;
}

// Each CPU a task asks for is a whole core: both its threads are the job's.
TEST_F(HintTest, NomultithreadTasksHoldWholeCores) {
    const std::string plain = ran({"-N1", "-n4"});
    EXPECT_TRUE(shows(plain, " NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n")) << plain;
    const std::string hinted = ran({"-N1", "-n4", "--hint=nomultithread"});
    EXPECT_TRUE(shows(hinted, " NumCPUs=8 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:1\n")) << hinted;
    EXPECT_TRUE(shows(ran({"-N1", "-n4", "--hint=memory_bound"}), " NumCPUs=8 "));
    EXPECT_TRUE(shows(ran({"-N1", "-n2", "-c2", "--hint=nomultithread"}), " NumCPUs=8 "));
    EXPECT_TRUE(shows(ran({"-N1", "-n1", "-c3", "--hint=compute_bound"}), " NumCPUs=6 "));
    EXPECT_TRUE(shows(ran({"-N1", "-n4", "--hint=multithread"}), " NumCPUs=4 "));
}

// 49 cores are more than one node has: refused with -N1, on two nodes without it.
TEST_F(HintTest, MoreCoresThanANodeHasSpanNodesOrAreRefused) {
    const std::string before = cluster_->cohort({"queue", "-h"}).out;
    const CommandResult refused =
            cluster_->cohort({"batch", "-N1", "-n49", "--hint=nomultithread", "--wrap", "true"});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_TRUE(shows(refused.err, "Requested node configuration is not available")) << refused.err;
    EXPECT_EQ(cluster_->cohort({"queue", "-h"}).out, before);
    const std::string spread = ran({"-n49", "--hint=nomultithread"});
    EXPECT_TRUE(shows(spread, "   NumNodes=2 NumCPUs=98 NumTasks=49 ")) << spread;
    EXPECT_TRUE(shows(ran({"-N1", "-n48", "--hint=nomultithread"}), "   NumNodes=1 NumCPUs=96 "));
}

// Pending, a job shows what its tasks ask for, as Slurm's does; its script sees the hint.
TEST_F(HintTest, APendingJobShowsItsTasksCpusAndTheScriptSeesTheHint) {
    const uint64_t held =
            submit_batch(*cluster_, {"-H", "-n4", "--hint=nomultithread", "--wrap", "true"});
    EXPECT_TRUE(shows(shown(held), " NumCPUs=4 ")) << shown(held);
    cluster_->cohort({"cancel", std::to_string(held)});

    const std::string out = cluster_->work_dir() + "/hint.out";
    const uint64_t id = submit_batch(
            *cluster_, {"-n2", "--hint=nomultithread", "-o", out, "--wrap",
                        "echo $SLURM_HINT $SLURM_THREADS_PER_CORE $SLURM_CPUS_ON_NODE"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(id) == "COMPLETED"; }, seconds(30)))
            << shown(id);
    EXPECT_EQ(read_text(out), "nomultithread 1 4\n");
}

}  // namespace
}  // namespace cohort::testing
