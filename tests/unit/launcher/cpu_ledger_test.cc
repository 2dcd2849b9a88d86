// Which host CPUs the agent gives each job: as many as it holds, the least used, together;
// whole cores for --hint=nomultithread.
#include "launcher/cpu_ledger.h"

#include <algorithm>

#include <gtest/gtest.h>
#include <sched.h>

namespace cohort::agent {
namespace {

using Cpus = std::vector<int>;

// Cores of one thread each, as on a host without SMT.
std::vector<Cpus> single_threaded(const Cpus& cpus) {
    std::vector<Cpus> cores;
    for (int cpu : cpus) {
        cores.push_back({cpu});
    }
    return cores;
}

TEST(CpuLedger, JobsGetDistinctCpusWhileThereAreFreeOnes) {
    CpuLedger ledger(single_threaded({0, 1, 2, 3}));
    EXPECT_EQ(ledger.take(1, 2), (Cpus{0, 1}));
    EXPECT_EQ(ledger.take(2, 1), (Cpus{2}));
    EXPECT_EQ(ledger.take(3, 1), (Cpus{3}));
    EXPECT_EQ(ledger.take(1, 2), (Cpus{0, 1})) << "asking again returns what the job holds";
}

TEST(CpuLedger, ReleasedCpusAreTakenAgain) {
    CpuLedger ledger(single_threaded({4, 5, 6, 7}));
    ledger.take(1, 2);
    ledger.take(2, 2);
    ledger.release(1);
    EXPECT_EQ(ledger.take(3, 2), (Cpus{4, 5}));
    ledger.release(99);  // a job it never saw: nothing happens
}

TEST(CpuLedger, AnEmulatedNodeLargerThanTheHostSharesItsCpusEvenly) {
    CpuLedger ledger(single_threaded({0, 1}));
    EXPECT_EQ(ledger.take(1, 1), (Cpus{0}));
    EXPECT_EQ(ledger.take(2, 1), (Cpus{1}));
    EXPECT_EQ(ledger.take(3, 1), (Cpus{0}));
    EXPECT_EQ(ledger.take(4, 8), (Cpus{0, 1})) << "more than the host has: all of them";
    EXPECT_EQ(ledger.take(5, 0), (Cpus{0, 1})) << "no count: all of them";
}

// Two threads per core, numbered as Linux numbers them on most x86 hosts: CPU n and n + 4
// are one core's.
TEST(CpuLedger, AWholeCoreJobGetsEveryThreadOfItsCoresAndRunsOnOneOfEach) {
    CpuLedger ledger({{0, 4}, {1, 5}, {2, 6}, {3, 7}});
    EXPECT_EQ(ledger.take(1, 4, true), (Cpus{0, 1, 4, 5}));
    EXPECT_EQ(ledger.one_thread_per_core(1), (Cpus{0, 1}));
    EXPECT_EQ(ledger.take(2, 2), (Cpus{2, 3})) << "threads of other cores first";
    EXPECT_EQ(ledger.one_thread_per_core(2), Cpus{}) << "its tasks run on all it holds";
    ledger.release(2);
    EXPECT_EQ(ledger.take(3, 1), (Cpus{2}));
    EXPECT_EQ(ledger.take(4, 2, true), (Cpus{3, 7})) << "the core no job uses";
    EXPECT_EQ(ledger.one_thread_per_core(4), (Cpus{3}));
    EXPECT_EQ(ledger.one_thread_per_core(99), Cpus{});
}

TEST(CpuLedger, TheAgentsOwnCoresHoldTheCpusItMayRunOn) {
    const std::vector<Cpus> cores = CpuLedger::own_cores();
    ASSERT_FALSE(cores.empty());
    Cpus all;
    for (const Cpus& core : cores) {
        EXPECT_FALSE(core.empty());
        all.insert(all.end(), core.begin(), core.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "each CPU in one core";
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    EXPECT_EQ(all.size(), static_cast<size_t>(CPU_COUNT(&set)));
}

}  // namespace
}  // namespace cohort::agent
