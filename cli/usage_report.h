// cohort report (sreport): the report named on the command line, its window and units, and
// the tables printed from the controller's usage totals. Pure: no connection here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/protocol/messages.h"
#include "common/status.h"

namespace cohort::cli {

enum class ReportKind {
    kClusterUtilization,
    kAccountUtilizationByUser,
    kUserTopUsage,
};

enum class ReportUnit {
    kSeconds,
    kMinutes,  // sreport's default
    kHours,
    kPercent,  // of the cluster's capacity in the window
};

enum class ReportTres {
    kCpu,
    kGpu,
    kBilling,
};

// The columns of cluster utilization, as sreport's format= names them.
enum class UtilizationField {
    kCluster,
    kTresName,
    kAllocated,
    kDown,
    kPlannedDown,  // in maintenance reservations
    kIdle,
    kPlanned,        // idle while eligible jobs waited (format=Reserved)
    kOverCommitted,  // eligible jobs' waits beyond Planned
    kReported,
};

struct ReportRequest {
    ReportKind kind = ReportKind::kClusterUtilization;
    int64_t start = 0;
    int64_t end = 0;
    ReportUnit unit = ReportUnit::kMinutes;
    std::vector<ReportTres> tres = {ReportTres::kCpu};
    std::vector<std::string> users;     // users=
    std::vector<std::string> accounts;  // accounts=
    size_t top_count = 10;              // TopCount=
    bool parsable = false;              // -p: '|' after every field
    bool parsable2 = false;             // -P: '|' between fields
    bool no_header = false;             // -n
    // format= of cluster utilization; empty: sreport's default (TRES Name added with --tres).
    std::vector<UtilizationField> fields;
};

// The words after the options: "cluster utilization start=... end=...". `now` sets the
// default window (yesterday, midnight to midnight, as sreport).
Result<ReportRequest> parse_report_words(const std::vector<std::string>& words,
                                         int64_t now,
                                         ReportRequest request);
Result<ReportUnit> parse_report_unit(const std::string& text);
Result<std::vector<ReportTres>> parse_report_tres(const std::string& text);

// The report as sreport prints it; `cluster` names the cluster.
std::string render_report(const ReportRequest& request,
                          const protocol::UsageTotalsReply& totals,
                          const std::string& cluster);

}  // namespace cohort::cli
