// The node-level model (`cohort sim` without --compat): on a real trace every run keeps the
// simulator's invariants, and Cohort's default policy beats FCFS + EASY on bounded slowdown.
#include "scheduler/sim/node_sim.h"

#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "scheduler/sim/metrics.h"

namespace cohort::sim {
namespace {

const std::string kTrace = "../shared/data/traces/KTH-SP2-1996-2.swf.gz";

class NodeSimTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(kTrace)) {
            GTEST_SKIP() << "shared/data/traces not found (" << kTrace
                         << "); the node-level tests replay the shared KTH-SP2 trace";
        }
        auto swf = read_swf(kTrace);
        ASSERT_TRUE(swf) << swf.status().message();
        auto machine = node_machine(*swf, 0, 0);
        ASSERT_TRUE(machine) << machine.status().message();
        machine_ = *machine;
        FilteredTrace filtered = pyss_filter(*swf, machine_.procs());
        jobs_.assign(filtered.jobs.begin(),
                     filtered.jobs.begin() + std::min<size_t>(filtered.jobs.size(), 5000));
    }

    NodeSimResult run(const std::string& policy) {
        auto named = policy_by_name(policy);
        EXPECT_TRUE(named);
        return simulate_nodes(jobs_, {machine_, named->order, named->backfill, named->estimates});
    }

    NodeMachine machine_;
    std::vector<SimJob> jobs_;
};

// Every job runs once for its run time, never before its submit, on nodes that are never
// over-allocated, and the busy-CPU integral equals the work.
TEST_F(NodeSimTest, KeepsInvariants) {
    for (const char* policy : {"easy", "cohort"}) {
        NodeSimResult result = run(policy);
        ASSERT_EQ(result.jobs.size(), jobs_.size());
        std::map<int64_t, std::map<int, int64_t>> delta;  // time -> node -> change in busy CPUs
        double work = 0;
        for (size_t i = 0; i < result.jobs.size(); ++i) {
            const NodeOutcome& job = result.jobs[i];
            ASSERT_GE(job.start, job.submit) << policy << " job " << job.id;
            ASSERT_EQ(job.run, jobs_[i].run);
            int64_t held = 0;
            for (size_t n = 0; n < job.nodes.size(); ++n) {
                ASSERT_GE(job.nodes[n], 0);
                ASSERT_LT(job.nodes[n], machine_.nodes);
                held += job.cpus_per_node[n];
                delta[job.start][job.nodes[n]] += job.cpus_per_node[n];
                delta[job.start + job.run][job.nodes[n]] -= job.cpus_per_node[n];
            }
            ASSERT_EQ(held, job.procs) << policy << " job " << job.id;
            work += static_cast<double>(job.run * job.procs);
        }
        std::vector<int64_t> busy(static_cast<size_t>(machine_.nodes), 0);
        int64_t busy_total = 0;
        int64_t last = delta.begin()->first;
        double integral = 0;
        for (const auto& [time, changes] : delta) {
            integral += static_cast<double>(busy_total * (time - last));
            last = time;
            for (const auto& [node, change] : changes) {
                busy[static_cast<size_t>(node)] += change;
                busy_total += change;
                ASSERT_LE(busy[static_cast<size_t>(node)], machine_.cpus_per_node)
                        << policy << " node " << node << " at " << time;
                ASSERT_GE(busy[static_cast<size_t>(node)], 0);
            }
        }
        EXPECT_EQ(busy_total, 0) << policy << ": every job finishes";
        EXPECT_DOUBLE_EQ(integral, work) << policy << ": node-seconds conserved";
    }
}

TEST_F(NodeSimTest, DefaultPolicyBeatsEasyOnBoundedSlowdown) {
    Metrics easy = compute_metrics(run("easy").as_sim_result(), machine_.procs());
    Metrics cohort = compute_metrics(run("cohort").as_sim_result(), machine_.procs());
    EXPECT_LT(cohort.mean_bsld, easy.mean_bsld);
    EXPECT_GE(cohort.utilization, easy.utilization - 1e-9);
}

void expect_same_outcomes(const NodeSimResult& planned_all, const NodeSimResult& planned_changed) {
    ASSERT_EQ(planned_all.jobs.size(), planned_changed.jobs.size());
    for (size_t i = 0; i < planned_all.jobs.size(); ++i) {
        const NodeOutcome& a = planned_all.jobs[i];
        const NodeOutcome& b = planned_changed.jobs[i];
        ASSERT_EQ(a.start, b.start) << "job " << a.id;
        ASSERT_EQ(a.nodes, b.nodes) << "job " << a.id;
        ASSERT_EQ(a.cpus_per_node, b.cpus_per_node) << "job " << a.id;
    }
}

// FCFS + EASY plans only the new jobs and the head where no job ended or overran: on a real
// trace every job starts when and where it would if every event replanned every job.
TEST_F(NodeSimTest, PlanningOnlyWhatChangedDecidesAsReplanningEverything) {
    auto easy = policy_by_name("easy");
    ASSERT_TRUE(easy);
    NodeSimOptions options{machine_, easy->order, easy->backfill, easy->estimates};
    const NodeSimResult changed = simulate_nodes(jobs_, options);
    options.plan_only_what_changed = false;
    const NodeSimResult all = simulate_nodes(jobs_, options);
    EXPECT_GT(changed.passes_over_new_jobs, 0);
    EXPECT_EQ(all.passes_over_new_jobs, 0);
    expect_same_outcomes(all, changed);
}

// The same on nodes of 16 CPUs shared by several jobs: the first 4,000 jobs of CEA Curie's
// log on 400 of its nodes, so that the queue is long and big jobs get reservations.
TEST(NodeSimCurie, PlanningOnlyWhatChangedDecidesAsReplanningEverything) {
    const std::string trace =
            std::string(COHORT_BENCHMARK_TRACES) + "/CEA-Curie-2011-2.1-cln.swf.gz";
    auto swf = read_swf(trace);
    ASSERT_TRUE(swf) << swf.status().message();
    auto machine = node_machine(*swf, 400, 0);
    ASSERT_TRUE(machine);
    ASSERT_EQ(machine->cpus_per_node, 16);
    FilteredTrace filtered = pyss_filter(*swf, machine->procs());
    std::vector<SimJob> jobs(filtered.jobs.begin(), filtered.jobs.begin() + 4000);
    auto easy = policy_by_name("easy");
    ASSERT_TRUE(easy);
    NodeSimOptions options{*machine, easy->order, easy->backfill, easy->estimates};
    const NodeSimResult changed = simulate_nodes(jobs, options);
    options.plan_only_what_changed = false;
    const NodeSimResult all = simulate_nodes(jobs, options);
    EXPECT_GT(changed.passes_over_new_jobs, 0);
    expect_same_outcomes(all, changed);
}

TEST(NodeSimOptions, BadValuesNameTheOption) {
    auto policy = policy_by_name("fast");
    ASSERT_FALSE(policy);
    EXPECT_NE(policy.status().message().find("--policy: invalid value 'fast'"), std::string::npos);
    SwfTrace trace;
    trace.max_procs = 100;
    trace.max_nodes = 100;
    EXPECT_FALSE(node_machine(trace, -1, 0));
    EXPECT_FALSE(node_machine(trace, 10, 10));
    auto machine = node_machine(trace, 0, 64);
    ASSERT_TRUE(machine);
    EXPECT_EQ(machine->nodes, 64);
    EXPECT_EQ(machine->cpus_per_node, 1);
}

}  // namespace
}  // namespace cohort::sim
