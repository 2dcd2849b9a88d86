// Which host CPUs the agent gives each job: as many as it holds, the least used, together.
#include "launcher/cpu_ledger.h"

#include <gtest/gtest.h>

namespace cohort::agent {
namespace {

using Cpus = std::vector<int>;

TEST(CpuLedger, JobsGetDistinctCpusWhileThereAreFreeOnes) {
    CpuLedger ledger({0, 1, 2, 3});
    EXPECT_EQ(ledger.take(1, 2), (Cpus{0, 1}));
    EXPECT_EQ(ledger.take(2, 1), (Cpus{2}));
    EXPECT_EQ(ledger.take(3, 1), (Cpus{3}));
    EXPECT_EQ(ledger.take(1, 2), (Cpus{0, 1})) << "asking again returns what the job holds";
}

TEST(CpuLedger, ReleasedCpusAreTakenAgain) {
    CpuLedger ledger({4, 5, 6, 7});
    ledger.take(1, 2);
    ledger.take(2, 2);
    ledger.release(1);
    EXPECT_EQ(ledger.take(3, 2), (Cpus{4, 5}));
    ledger.release(99);  // a job it never saw: nothing happens
}

TEST(CpuLedger, AnEmulatedNodeLargerThanTheHostSharesItsCpusEvenly) {
    CpuLedger ledger({0, 1});
    EXPECT_EQ(ledger.take(1, 1), (Cpus{0}));
    EXPECT_EQ(ledger.take(2, 1), (Cpus{1}));
    EXPECT_EQ(ledger.take(3, 1), (Cpus{0}));
    EXPECT_EQ(ledger.take(4, 8), (Cpus{0, 1})) << "more than the host has: all of them";
    EXPECT_EQ(ledger.take(5, 0), (Cpus{0, 1})) << "no count: all of them";
}

TEST(CpuLedger, TheAgentsOwnCpusAreThoseItMayRunOn) {
    const Cpus own = CpuLedger::own_cpus();
    EXPECT_FALSE(own.empty());
    EXPECT_TRUE(std::is_sorted(own.begin(), own.end()));
}

}  // namespace
}  // namespace cohort::agent
