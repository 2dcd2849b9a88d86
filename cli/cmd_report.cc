// cohort report / sreport: usage reports over a time window, from accounting.
#include <ctime>
#include <iostream>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/usage_report.h"

namespace cohort::cli {

int cmd_report(const Args& args) {
    CLI::App app{"Usage reports from accounting (sreport)"};
    std::string unit_text = "minutes";
    std::string tres_text = "cpu";
    std::vector<std::string> words;
    ReportRequest request;
    app.add_option("-t,--time", unit_text, "seconds, minutes (default), hours or percent");
    app.add_option("-T,--tres", tres_text, "cpu (default), gres/gpu, billing; comma separated");
    app.add_flag("-p,--parsable", request.parsable, "fields separated by '|', one after the last");
    app.add_flag("-P,--parsable2", request.parsable2, "fields separated by '|'");
    app.add_flag("-n,--noheader", request.no_header, "no header");
    app.add_option("report", words,
                   "cluster utilization | cluster AccountUtilizationByUser | user topusage, then "
                   "start=TIME end=TIME users=LIST accounts=LIST TopCount=N");
    if (int rc = parse_args(app, "report", args); rc >= 0) {
        return rc;
    }
    auto unit = parse_report_unit(unit_text);
    if (!unit) {
        return report_error("report", unit.status());
    }
    request.unit = *unit;
    auto tres = parse_report_tres(tres_text);
    if (!tres) {
        return report_error("report", tres.status());
    }
    request.tres = std::move(*tres);
    auto parsed = parse_report_words(words, static_cast<int64_t>(std::time(nullptr)), request);
    if (!parsed) {
        return report_error("report", parsed.status());
    }
    auto context = load_client_context();
    if (!context) {
        return report_error("report", context.status());
    }
    protocol::UsageReportRequest ask_for;
    ask_for.start = parsed->start;
    ask_for.end = parsed->end;
    auto totals = ask<protocol::UsageTotalsReply>(ask_for);
    if (!totals) {
        return report_error("report", totals.status());
    }
    std::cout << render_report(*parsed, *totals, context->config.cluster_name);
    return 0;
}

}  // namespace cohort::cli
