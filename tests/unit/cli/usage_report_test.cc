// cohort report: the report words, and the tables as sreport prints them.
#include "cli/usage_report.h"

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

protocol::UsageTotalsReply two_users() {
    protocol::UsageTotalsReply totals;
    totals.start = 1700000000;
    totals.end = totals.start + 3600;
    totals.cluster_cpus = 10;  // 36,000 CPU-seconds in the hour: 600 CPU-minutes
    totals.cluster_gpus = 2;
    totals.totals = {{"physics", "alice", 6000, 600, 6000, 2},
                     {"physics", "bob", 1200, 0, 1200, 1},
                     {"chem", "carol", 3000, 0, 3000, 1}};
    return totals;
}

TEST(ReportWords, NamesTheReportAndItsWindow) {
    auto request = parse_report_words(
            {"cluster", "Utilization", "start=2026-01-01T00:00:00", "end=2026-01-02T00:00:00"},
            1800000000, {});
    ASSERT_TRUE(request) << request.status().message();
    EXPECT_EQ(request->kind, ReportKind::kClusterUtilization);
    EXPECT_EQ(request->end - request->start, 86400);
    auto top = parse_report_words({"user", "topusage", "TopCount=2", "accounts=physics"},
                                  1800000000, {});
    ASSERT_TRUE(top) << top.status().message();
    EXPECT_EQ(top->kind, ReportKind::kUserTopUsage);
    EXPECT_EQ(top->top_count, 2u);
    EXPECT_EQ(top->accounts, (std::vector<std::string>{"physics"}));
    // Without start= and end=: yesterday, midnight to midnight.
    auto yesterday = parse_report_words({"cluster", "AccountUtilizationByUser"}, 1800000000, {});
    ASSERT_TRUE(yesterday);
    EXPECT_GE(yesterday->end - yesterday->start, 23 * 3600);
    EXPECT_LE(yesterday->end, 1800000000);
}

TEST(ReportWords, RefusesWhatSreportRefusesInOneLine) {
    auto unknown = parse_report_words({"cluster", "bogus"}, 1800000000, {});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.status().message().find("unknown report 'cluster bogus'"), std::string::npos);
    auto key = parse_report_words({"cluster", "utilization", "colour=red"}, 1800000000, {});
    ASSERT_FALSE(key);
    EXPECT_NE(key.status().message().find("unknown key 'colour'"), std::string::npos);
    auto backwards = parse_report_words(
            {"cluster", "utilization", "start=2026-01-02", "end=2026-01-01"}, 1800000000, {});
    ASSERT_FALSE(backwards);
    EXPECT_FALSE(parse_report_unit("fortnights"));
    EXPECT_FALSE(parse_report_tres("cpu,licenses"));
}

TEST(RenderReport, ClusterUtilizationInMinutesAndPercent) {
    ReportRequest request;
    request.parsable2 = true;
    const std::string minutes = render_report(request, two_users(), "cohort");
    // 10,200 CPU-seconds allocated = 170 minutes of 600.
    EXPECT_NE(minutes.find("Cluster|Allocated|Down|PLND Down|Idle|Planned|Reported\n"
                           "cohort|170|0|0|430|0|600\n"),
              std::string::npos)
            << minutes;
    EXPECT_NE(minutes.find("Usage reported in CPU Minutes"), std::string::npos);
    request.unit = ReportUnit::kPercent;
    request.no_header = true;
    EXPECT_EQ(render_report(request, two_users(), "cohort"),
              "cohort|28.33%|0.00%|0.00%|71.67%|0.00%|100.00%\n");
}

TEST(RenderReport, DownAndMaintenanceTimeComeOutOfIdle) {
    protocol::UsageTotalsReply totals = two_users();
    totals.down_cpu_seconds = 4 * 1800;         // 4 CPUs down for half the hour: 120 minutes
    totals.planned_down_cpu_seconds = 2 * 900;  // 30 minutes
    totals.down_gpu_seconds = 1 * 1800;
    ReportRequest request;
    request.parsable2 = true;
    request.no_header = true;
    request.tres = {ReportTres::kCpu, ReportTres::kGpu};
    // CPU: 600 reported = 170 allocated + 120 down + 30 planned down + 280 idle. GPU: 120
    // reported = 10 allocated + 30 down + 80 idle.
    EXPECT_EQ(render_report(request, totals, "cohort"),
              "cohort|cpu|170|120|30|280|0|600\ncohort|gres/gpu|10|30|0|80|0|120\n");
}

TEST(RenderReport, PlannedTimeIsTakenFromTheIdleTime) {
    protocol::UsageTotalsReply totals = two_users();  // 600 CPU-minutes, 170 allocated
    ReportRequest request;
    request.parsable2 = true;
    request.no_header = true;
    request.fields = {UtilizationField::kIdle, UtilizationField::kPlanned,
                      UtilizationField::kOverCommitted, UtilizationField::kReported};
    totals.planned_cpu_seconds = 100 * 60;
    totals.overcommitted_cpu_seconds = 20 * 60;
    EXPECT_EQ(render_report(request, totals, "cohort"), "330|100|20|600\n");
}

TEST(ParseReportFormat, TakesSreportsFieldNamesAndPrefixes) {
    auto request =
            parse_report_words({"cluster", "utilization", "format=cl,al,d,planned,i,res,rep,over"},
                               1'800'000'000, ReportRequest{});
    ASSERT_TRUE(request) << request.status().message();
    EXPECT_EQ(request->fields,
              (std::vector<UtilizationField>{
                      UtilizationField::kCluster, UtilizationField::kAllocated,
                      UtilizationField::kDown, UtilizationField::kPlannedDown,
                      UtilizationField::kIdle, UtilizationField::kPlanned,
                      UtilizationField::kReported, UtilizationField::kOverCommitted}));
    auto unknown = parse_report_words({"cluster", "utilization", "format=Allocated,Bogus"},
                                      1'800'000'000, ReportRequest{});
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.status().message(),
              "report: format: unknown field 'Bogus' (accepted: Allocated, Cluster, Down, Idle, "
              "OverCommitted, PlannedDown, Reported, Reserved (the Planned column), TresName)");
}

TEST(RenderReport, AccountUtilizationByUserGivesEachAccountThenItsUsers) {
    ReportRequest request;
    request.kind = ReportKind::kAccountUtilizationByUser;
    request.parsable2 = true;
    request.no_header = true;
    request.unit = ReportUnit::kSeconds;
    const std::string out = render_report(request, two_users(), "cohort");
    EXPECT_NE(out.find("cohort|chem|||3000\n"), std::string::npos) << out;
    EXPECT_NE(out.find("cohort|physics|||7200\n"), std::string::npos) << out;
    EXPECT_NE(out.find("cohort|physics|alice|"), std::string::npos) << out;
    EXPECT_LT(out.find("cohort|chem|||"), out.find("cohort|physics|||"));
}

TEST(RenderReport, TopUsageRanksUsersAndKeepsTopCount) {
    ReportRequest request;
    request.kind = ReportKind::kUserTopUsage;
    request.top_count = 2;
    request.parsable2 = true;
    request.no_header = true;
    request.tres = {ReportTres::kCpu, ReportTres::kGpu};
    const std::string out = render_report(request, two_users(), "cohort");
    // CPU: alice 100 minutes, carol 50, bob cut; GPU: alice 10 minutes, then bob or carol at 0.
    EXPECT_EQ(out.find("cohort|alice||physics|cpu|100\ncohort|carol||chem|cpu|50\n"), 0u) << out;
    EXPECT_NE(out.find("cohort|alice||physics|gres/gpu|10\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("bob||physics|cpu"), std::string::npos) << out;
}

TEST(RenderReport, TableLayoutRightAlignsUnderARule) {
    ReportRequest request;
    const std::string out = render_report(request, two_users(), "cohort");
    EXPECT_NE(out.find("  Cluster      Allocated       Down  PLND Down           Idle        "
                       "Planned       Reported \n"
                       "--------- -------------- ---------- ---------- -------------- "
                       "-------------- -------------- \n"
                       "   cohort            170          0          0            430            "
                       "  0            600 \n"),
              std::string::npos)
            << out;
}

}  // namespace
}  // namespace cohort::cli
