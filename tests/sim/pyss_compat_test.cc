// `--compat pyss` on the shared traces reproduces the published EASY figures, and every run
// keeps the simulator's invariants.
#include "scheduler/sim/pyss_compat.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "scheduler/sim/metrics.h"

namespace cohort::sim {
namespace {

const std::string kTraces = "../shared/data/traces/";

struct Published {
    const char* file;
    double mean_bsld;
    double mean_response_s;
};

// Tsafrir et al. / the SC'15 artifact (KTH, CTC); an independent pyss re-run on this SDSC copy.
const Published kPublished[] = {
        {"KTH-SP2-1996-2.swf.gz", 92.58, 15697},
        {"CTC-SP2-1996-3.1-cln.swf.gz", 49.57, 25527},
        {"SDSC-SP2-1998-4.2-cln.swf.gz", 87.83, 27834},
};

void PrintTo(const Published& published, std::ostream* os) {
    *os << published.file;
}

struct TraceRun {
    FilteredTrace trace;
    SimResult result;
    int64_t procs = 0;
};

TraceRun simulate(const std::string& file, sched::BackfillPolicy policy) {
    auto swf = read_swf(kTraces + file);
    EXPECT_TRUE(swf) << swf.status().message();
    TraceRun run;
    run.procs = swf->max_procs;
    run.trace = pyss_filter(*swf, run.procs);
    run.result = simulate_pyss(run.trace.jobs, run.procs, {policy});
    return run;
}

// No job starts before it is submitted, every job runs exactly once for its run time, and
// at no instant are more processors busy than the machine has.
void expect_invariants(const TraceRun& run) {
    ASSERT_EQ(run.result.jobs.size(), run.trace.jobs.size());
    std::map<int64_t, int64_t> delta;
    for (size_t i = 0; i < run.result.jobs.size(); ++i) {
        const JobOutcome& job = run.result.jobs[i];
        ASSERT_EQ(job.id, run.trace.jobs[i].id);
        ASSERT_GE(job.start, job.submit) << "job " << job.id;
        ASSERT_EQ(job.run, run.trace.jobs[i].run);
        delta[job.start] += job.procs;
        delta[job.start + job.run] -= job.procs;
    }
    int64_t busy = 0;
    for (const auto& [time, change] : delta) {
        busy += change;
        ASSERT_LE(busy, run.procs) << "over-allocated at t=" << time;
        ASSERT_GE(busy, 0);
    }
    EXPECT_EQ(busy, 0);  // processor-seconds in equal those out
}

class PyssCompat : public ::testing::TestWithParam<Published> {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(kTraces + GetParam().file)) {
            GTEST_SKIP() << "shared/data/traces not found (" << kTraces << GetParam().file
                         << "); the published figures need the shared traces";
        }
    }
};

TEST_P(PyssCompat, EasyReproducesThePublishedFigures) {
    TraceRun run = simulate(GetParam().file, sched::BackfillPolicy::kEasy);
    expect_invariants(run);
    Metrics m = compute_metrics(run.result, run.procs);
    EXPECT_EQ(std::round(m.mean_bsld * 100) / 100, GetParam().mean_bsld);
    EXPECT_EQ(std::round(m.mean_response_s), GetParam().mean_response_s);
}

TEST_P(PyssCompat, WithoutBackfillingTheInvariantsHoldAndSlowdownIsWorse) {
    TraceRun fcfs = simulate(GetParam().file, sched::BackfillPolicy::kNone);
    expect_invariants(fcfs);
    EXPECT_GT(compute_metrics(fcfs.result, fcfs.procs).mean_bsld, GetParam().mean_bsld);
}

TEST_P(PyssCompat, ConservativeKeepsTheInvariantsAndUtilization) {
    TraceRun easy = simulate(GetParam().file, sched::BackfillPolicy::kEasy);
    TraceRun conservative = simulate(GetParam().file, sched::BackfillPolicy::kConservative);
    expect_invariants(conservative);
    // Every job is planned, so nothing starves: utilization stays within 0.5% of EASY's.
    EXPECT_NEAR(compute_metrics(conservative.result, conservative.procs).utilization,
                compute_metrics(easy.result, easy.procs).utilization, 0.005);
}

INSTANTIATE_TEST_SUITE_P(Traces,
                         PyssCompat,
                         ::testing::ValuesIn(kPublished),
                         [](const ::testing::TestParamInfo<Published>& p) {
                             std::string name = p.param.file;
                             return name.substr(0, name.find('-'));
                         });

TEST(PyssFilter, FollowsPyssRules) {
    SwfTrace trace;
    trace.jobs = {
            {1, 0, 0, 100, 4, 8, 50, 1},     // size 8 (requested), run clipped to 50
            {2, 5, 0, 100, 4, -1, 200, 1},   // requested unknown: allocated 4 is the size
            {3, 5, 0, 100, -1, -1, 200, 1},  // no processor count
            {4, 5, 0, 100, 4, 200, 200, 1},  // above MaxProcs
            {5, 5, 0, 0, 4, 4, 200, 1},      // no run time
            {6, 5, 0, 10, 4, 4, -1, 1},      // no requested time
    };
    FilteredTrace out = pyss_filter(trace, 100);
    ASSERT_EQ(out.jobs.size(), 2u);
    EXPECT_EQ(out.jobs[0].procs, 8);
    EXPECT_EQ(out.jobs[0].run, 50);
    EXPECT_EQ(out.jobs[1].procs, 4);
    EXPECT_EQ(out.skipped.size(), 4u);
}

}  // namespace
}  // namespace cohort::sim
