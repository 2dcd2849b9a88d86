// --begin: every accepted form, resolved against a fixed `now`, and the rejected ones.
#include "common/begin_time.h"

#include <cstdlib>
#include <ctime>

#include <gtest/gtest.h>

namespace cohort {
namespace {

class BeginTime : public ::testing::Test {
protected:
    void SetUp() override {
        setenv("TZ", "UTC", 1);
        tzset();
    }

    // 2026-12-02 14:30:00 UTC
    static constexpr int64_t kNow = 1796221800;
};

TEST_F(BeginTime, RelativeForms) {
    EXPECT_EQ(*parse_begin_time("now", kNow), kNow);
    EXPECT_EQ(*parse_begin_time("now+60", kNow), kNow + 60);
    EXPECT_EQ(*parse_begin_time("now+1hour", kNow), kNow + 3600);
    EXPECT_EQ(*parse_begin_time("now+2days", kNow), kNow + 2 * 86400);
    EXPECT_EQ(*parse_begin_time("now+1weeks", kNow), kNow + 7 * 86400);
}

TEST_F(BeginTime, ReportTimesOfDayLookBack) {
    const int64_t midnight = kNow - (14 * 3600 + 30 * 60);
    EXPECT_EQ(*parse_report_time("midnight", kNow), midnight);
    EXPECT_EQ(*parse_report_time("08:00", kNow), midnight + 8 * 3600);
    EXPECT_EQ(*parse_report_time("16:00", kNow), midnight + 16 * 3600);  // later today
    EXPECT_EQ(*parse_report_time("2026-11-30", kNow), midnight - 2 * 86400);
    EXPECT_EQ(*parse_report_time("now", kNow), kNow);
    EXPECT_FALSE(parse_report_time("yesterday-ish", kNow));
}

TEST_F(BeginTime, NamedTimes) {
    EXPECT_EQ(*parse_begin_time("midnight", kNow), 1796256000);  // 2026-12-03 00:00
    EXPECT_EQ(*parse_begin_time("tomorrow", kNow), 1796256000);
    EXPECT_EQ(*parse_begin_time("teatime", kNow), kNow + 5400);          // 16:00 today
    EXPECT_EQ(*parse_begin_time("noon", kNow), 1796256000 + 12 * 3600);  // past: tomorrow
    EXPECT_EQ(*parse_begin_time("today", kNow), kNow);
}

TEST_F(BeginTime, ClockAndCalendarForms) {
    EXPECT_EQ(*parse_begin_time("16:00", kNow), kNow + 5400);
    EXPECT_EQ(*parse_begin_time("4:00PM", kNow), kNow + 5400);
    EXPECT_EQ(*parse_begin_time("14:30:10", kNow), kNow + 10);
    EXPECT_EQ(*parse_begin_time("10:00", kNow), 1796256000 + 10 * 3600);  // past: tomorrow
    EXPECT_EQ(*parse_begin_time("2026-12-25", kNow), 1798156800);
    EXPECT_EQ(*parse_begin_time("2026-12-25T08:30", kNow), 1798156800 + 8 * 3600 + 1800);
    EXPECT_EQ(*parse_begin_time("2026-12-25T08:30:05", kNow), 1798156800 + 8 * 3600 + 1805);
    EXPECT_EQ(*parse_begin_time("12/25", kNow), 1798156800);
    EXPECT_EQ(*parse_begin_time("12/25/26", kNow), 1798156800);
    EXPECT_EQ(*parse_begin_time("1225", kNow), 1798156800);
    EXPECT_EQ(*parse_begin_time("122526", kNow), 1798156800);
}

TEST_F(BeginTime, RejectsWithTheValueAndTheAcceptedForms) {
    for (const char* text : {"", "soon", "now+", "now+5fortnights", "now-5", "25:00", "13:00PM",
                             "2026-13-01", "2026-12-25T8", "13/45", "12/25/2026/1"}) {
        auto result = parse_begin_time(text, kNow);
        EXPECT_FALSE(result) << text;
        EXPECT_NE(result.status().message().find("accepted"), std::string::npos) << text;
    }
}

TEST_F(BeginTime, ReportTimesLookBackFromNow) {
    EXPECT_EQ(*parse_report_time("now-7days", kNow), kNow - 7 * 86400);
    EXPECT_EQ(*parse_report_time("now-90minutes", kNow), kNow - 90 * 60);
    EXPECT_FALSE(parse_report_time("now-5fortnights", kNow));
    EXPECT_FALSE(parse_begin_time("now-1days", kNow)) << "--begin never looks back";
}

}  // namespace
}  // namespace cohort
