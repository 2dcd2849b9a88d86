// `--compat rlscheduler` reproduces the published RLScheduler (SC'20) heuristic tables.
#include "scheduler/sim/rlscheduler_compat.h"

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

namespace cohort::sim {
namespace {

struct Table {
    const char* file;
    bool backfill;
    double fcfs, sjf, f1;  // mean bounded slowdown over the ten 1,024-job windows
};

void PrintTo(const Table& table, std::ostream* os) {
    *os << table.file << (table.backfill ? " with backfilling" : " without");
}

const Table kPublishedTables[] = {
        {"lublin_256.swf", true, 235.82, 73.31, 75.07},
        {"SDSC-SP2-1998-4.2-cln.swf.gz", true, 1595.12, 2167.84, 1098.22},
        {"lublin_256_new2.swf", true, 247.61, 91.99, 148.25},
        {"lublin_256.swf", false, 7273.77, 277.35, 258.37},
        {"SDSC-SP2-1998-4.2-cln.swf.gz", false, 1727.54, 2680.55, 1232.06},
        {"lublin_256_new2.swf", false, 7842.47, 787.89, 698.34},
};

class RlschedulerCompat : public ::testing::TestWithParam<Table> {};

double mean_bsld(const std::vector<SimJob>& jobs,
                 const RlMachine& machine,
                 RlOrder order,
                 bool backfill) {
    double sum = 0;
    for (size_t first : rlscheduler_windows()) {
        sum += rlscheduler_window_bsld(jobs, machine, first, 1024, order, backfill);
    }
    return std::round(sum / static_cast<double>(rlscheduler_windows().size()) * 100) / 100;
}

TEST_P(RlschedulerCompat, ReproducesThePublishedTable) {
    const std::string path = std::string("../shared/data/traces/") + GetParam().file;
    if (!std::filesystem::exists(path)) {
        GTEST_SKIP() << "shared/data/traces not found (" << path << ")";
    }
    auto trace = read_swf(path);
    ASSERT_TRUE(trace) << trace.status().message();
    std::vector<SimJob> jobs = rlscheduler_filter(*trace);
    RlMachine machine = rlscheduler_machine(*trace);
    EXPECT_EQ(mean_bsld(jobs, machine, RlOrder::kFcfs, GetParam().backfill), GetParam().fcfs);
    EXPECT_EQ(mean_bsld(jobs, machine, RlOrder::kSjf, GetParam().backfill), GetParam().sjf);
    EXPECT_EQ(mean_bsld(jobs, machine, RlOrder::kF1, GetParam().backfill), GetParam().f1);
}

INSTANTIATE_TEST_SUITE_P(Tables,
                         RlschedulerCompat,
                         ::testing::ValuesIn(kPublishedTables),
                         [](const ::testing::TestParamInfo<Table>& p) {
                             std::string name = p.param.file;
                             name = name.substr(0, name.find('.'));
                             for (char& c : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(c))) {
                                     c = '_';
                                 }
                             }
                             return name + (p.param.backfill ? "_backfill" : "_plain");
                         });

TEST(RlschedulerFilter, KeepsItsRules) {
    SwfTrace trace;
    trace.jobs = {
            {2, 10, 0, 100, 4, 8, -1, 1},  // estimate = run; procs = max(4, 8)
            {1, 5, 0, -1, 2, 1, 50, 1},    // run < 0 becomes 10 s
            {3, 20, 0, 0, 2, 2, 50, 1},    // run 0: dropped
    };
    std::vector<SimJob> jobs = rlscheduler_filter(trace);
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].id, 1);  // sorted by id
    EXPECT_EQ(jobs[0].run, 10);
    EXPECT_EQ(jobs[1].procs, 8);
    EXPECT_EQ(jobs[1].estimate, 100);
}

}  // namespace
}  // namespace cohort::sim
