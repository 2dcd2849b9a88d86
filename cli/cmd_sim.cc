// cohort sim: replays an SWF trace through the scheduling core on a virtual clock.
#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "scheduler/sim/metrics.h"
#include "scheduler/sim/pyss_compat.h"

namespace cohort::cli {

int cmd_sim(const Args& args) {
    CLI::App app{"Replay an SWF trace: cohort sim --trace FILE.swf[.gz] --compat pyss"};
    std::string trace_path, backfill = "easy", compat, order = "fcfs";
    int64_t procs = 0;
    size_t reservations = std::numeric_limits<size_t>::max();
    bool json = false;
    app.add_option("--trace", trace_path, "SWF trace, plain or gzip")->required();
    app.add_option("--procs", procs, "machine size in processors (default: MaxProcs)");
    app.add_option("--backfill", backfill, "none, easy or conservative");
    app.add_option("--reservations", reservations,
            "conservative: how many waiting jobs get a reservation (default: all)");
    app.add_option("--order", order, "queue order: fcfs or sjf (shortest estimate first)");
    app.add_option("--compat", compat, "reproduce another simulator exactly: pyss");
    app.add_flag("--json", json, "print one JSON object");
    if (int rc = parse_args(app, "sim", args); rc >= 0) {
        return rc;
    }
    if (compat != "pyss") {
        return report_error("sim", Status::invalid("--compat: invalid value '" + compat
                + "' (accepted: pyss; Cohort's own node-level model is not built yet)"));
    }
    sched::BackfillOptions options;
    if (backfill == "none") {
        options.policy = sched::BackfillPolicy::kNone;
    } else if (backfill == "easy") {
        options.policy = sched::BackfillPolicy::kEasy;
    } else if (backfill == "conservative") {
        options.policy = sched::BackfillPolicy::kConservative;
        options.reservations = reservations;
    } else {
        return report_error("sim", Status::invalid("--backfill: invalid value '" + backfill
                + "' (accepted: none, easy, conservative)"));
    }
    if (order != "fcfs" && order != "sjf") {
        return report_error("sim", Status::invalid("--order: invalid value '" + order
                + "' (accepted: fcfs, sjf)"));
    }
    auto trace = sim::read_swf(trace_path);
    if (!trace) {
        return report_error("sim", trace.status());
    }
    if (procs <= 0) {
        procs = trace->max_procs;
    }
    if (procs <= 0) {
        return report_error("sim", Status::invalid("--procs: the trace has no MaxProcs header; "
                "give the machine size"));
    }
    sim::FilteredTrace filtered = sim::pyss_filter(*trace, procs);
    sim::SimResult result = sim::simulate_pyss(filtered.jobs, procs, options,
            order == "sjf" ? sim::QueueOrder::kSjf : sim::QueueOrder::kFcfs);
    sim::Metrics m = sim::compute_metrics(result, procs);
    int64_t skipped = 0;
    nlohmann::json reasons = nlohmann::json::object();
    for (const auto& [reason, count] : filtered.skipped) {
        skipped += count;
        reasons[reason] = count;
    }
    if (json) {
        nlohmann::json doc = {{"trace", trace_path}, {"procs", procs}, {"backfill", backfill}, {"order", order},
                {"compat", compat}, {"jobs", m.jobs}, {"skipped", skipped},
                {"skipped_reasons", reasons}, {"utilization", m.utilization},
                {"mean_wait_s", m.mean_wait_s}, {"median_wait_s", m.median_wait_s},
                {"mean_response_s", m.mean_response_s}, {"mean_bsld", m.mean_bsld},
                {"max_wait_s", m.max_wait_s}, {"makespan_s", m.makespan_s},
                {"mean_pass_ms", m.mean_pass_ms}, {"max_pass_ms", m.max_pass_ms}};
        std::cout << doc.dump(2) << "\n";
        return 0;
    }
    std::printf("trace %s: %lld jobs on %lld processors, %lld skipped\n", trace_path.c_str(),
            static_cast<long long>(m.jobs), static_cast<long long>(procs),
            static_cast<long long>(skipped));
    for (const auto& [reason, count] : filtered.skipped) {
        std::printf("  skipped %lld: %s\n", static_cast<long long>(count), reason.c_str());
    }
    std::printf("utilization %.4f\nmean wait %.1f s, median %.0f s, max %lld s\n"
                "mean wait + run %.1f s\nmean bounded slowdown (tau 10 s) %.2f\n"
                "makespan %lld s\nscheduling pass mean %.4f ms, max %.4f ms\n",
            m.utilization, m.mean_wait_s, m.median_wait_s, static_cast<long long>(m.max_wait_s),
            m.mean_response_s, m.mean_bsld, static_cast<long long>(m.makespan_s),
            m.mean_pass_ms, m.max_pass_ms);
    return 0;
}

}  // namespace cohort::cli
