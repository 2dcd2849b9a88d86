// cohort sim: replays an SWF trace through the scheduling core on a virtual clock.
#include <cstdio>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "scheduler/sim/metrics.h"
#include "scheduler/sim/node_sim.h"
#include "scheduler/sim/pyss_compat.h"
#include "scheduler/sim/rlscheduler_compat.h"

namespace cohort::cli {
namespace {

// The RLScheduler tables: mean over its ten 1,024-job windows of each window's mean bsld.
int run_rlscheduler(const sim::SwfTrace& trace,
                    const std::string& order,
                    bool backfill,
                    bool json) {
    sim::RlOrder rl_order = order == "sjf"  ? sim::RlOrder::kSjf
                            : order == "f1" ? sim::RlOrder::kF1
                                            : sim::RlOrder::kFcfs;
    std::vector<sim::SimJob> jobs = sim::rlscheduler_filter(trace);
    sim::RlMachine machine = sim::rlscheduler_machine(trace);
    nlohmann::json windows = nlohmann::json::array();
    double sum = 0;
    for (size_t first : sim::rlscheduler_windows()) {
        if (first + 1024 > jobs.size()) {
            return report_error(
                    "sim", Status::invalid(fmt::format(
                                   "--trace: {} jobs after filtering, too few for the window at {}",
                                   jobs.size(), first)));
        }
        double bsld = sim::rlscheduler_window_bsld(jobs, machine, first, 1024, rl_order, backfill);
        windows.push_back({{"first_job_index", first}, {"mean_bsld", bsld}});
        sum += bsld;
    }
    const double mean = sum / static_cast<double>(sim::rlscheduler_windows().size());
    if (json) {
        std::cout << nlohmann::json{{"trace", trace.path},
                                    {"compat", "rlscheduler"},
                                    {"order", order},
                                    {"backfill", backfill ? "easy" : "none"},
                                    {"nodes", machine.nodes},
                                    {"jobs", 1024 * windows.size()},
                                    {"mean_bsld", mean},
                                    {"windows", windows}}
                             .dump(2)
                  << "\n";
    } else {
        std::printf(
                "trace %s: %zu windows of 1024 jobs on %lld nodes, order %s, backfill %s\n"
                "mean bounded slowdown (tau 10 s) %.2f\n",
                trace.path.c_str(), windows.size(), static_cast<long long>(machine.nodes),
                order.c_str(), backfill ? "easy" : "none", mean);
    }
    return 0;
}

// Cohort's own node-level model: the trace through sched::plan() on a virtual clock.
int run_nodes(const sim::SwfTrace& trace,
              const sim::NodeSimOptions& options,
              const std::string& label,
              bool json) {
    sim::FilteredTrace filtered = sim::pyss_filter(trace, options.machine.procs());
    sim::NodeSimResult result = sim::simulate_nodes(filtered.jobs, options);
    sim::Metrics m = sim::compute_metrics(result.as_sim_result(), options.machine.procs());
    int64_t skipped = 0;
    nlohmann::json reasons = nlohmann::json::object();
    for (const auto& [reason, count] : filtered.skipped) {
        skipped += count;
        reasons[reason] = count;
    }
    if (json) {
        std::cout << nlohmann::json{{"trace", trace.path},
                                    {"policy", label},
                                    {"nodes", options.machine.nodes},
                                    {"cpus_per_node", options.machine.cpus_per_node},
                                    {"jobs", m.jobs},
                                    {"skipped", skipped},
                                    {"skipped_reasons", reasons},
                                    {"utilization", m.utilization},
                                    {"mean_wait_s", m.mean_wait_s},
                                    {"median_wait_s", m.median_wait_s},
                                    {"mean_bsld", m.mean_bsld},
                                    {"max_wait_s", m.max_wait_s},
                                    {"makespan_s", m.makespan_s},
                                    {"passes", result.pass_ms.size()},
                                    {"passes_skipped", result.passes_skipped},
                                    {"estimate_overruns", result.estimate_overruns},
                                    {"mean_pass_ms", m.mean_pass_ms},
                                    {"max_pass_ms", m.max_pass_ms}}
                             .dump(2)
                  << "\n";
        return 0;
    }
    std::printf("trace %s: %lld jobs on %lld nodes x %lld CPUs, %lld skipped, policy %s\n",
                trace.path.c_str(), static_cast<long long>(m.jobs),
                static_cast<long long>(options.machine.nodes),
                static_cast<long long>(options.machine.cpus_per_node),
                static_cast<long long>(skipped), label.c_str());
    for (const auto& [reason, count] : filtered.skipped) {
        std::printf("  skipped %lld: %s\n", static_cast<long long>(count), reason.c_str());
    }
    std::printf(
            "utilization %.4f\nmean wait %.1f s, median %.0f s, max %lld s\n"
            "mean bounded slowdown (tau 10 s) %.2f\nmakespan %lld s\n"
            "%zu scheduling passes: mean %.4f ms, max %.4f ms\n",
            m.utilization, m.mean_wait_s, m.median_wait_s, static_cast<long long>(m.max_wait_s),
            m.mean_bsld, static_cast<long long>(m.makespan_s), result.pass_ms.size(),
            m.mean_pass_ms, m.max_pass_ms);
    return 0;
}

}  // namespace

int cmd_sim(const Args& args) {
    CLI::App app{"Replay an SWF trace: cohort sim --trace FILE.swf[.gz] --compat pyss"};
    std::string trace_path, backfill, compat, order, estimates, policy;
    int64_t procs = 0, nodes = 0;
    size_t reservations = std::numeric_limits<size_t>::max();
    bool json = false;
    app.add_option("--trace", trace_path, "SWF trace, plain or gzip")->required();
    app.add_option("--procs", procs, "machine size in processors (default: MaxProcs)");
    app.add_option("--nodes", nodes, "machine size in nodes of MaxProcs/MaxNodes CPUs");
    app.add_option("--estimates", estimates,
                   "requested, actual or predicted (EASY++: the user's last two run times)");
    app.add_option("--policy", policy,
                   "cohort (default), easy (FCFS + EASY + requested) or easy++");
    app.add_option("--backfill", backfill, "none, easy or conservative");
    app.add_option("--reservations", reservations,
                   "conservative: how many waiting jobs get a reservation (default: all)");
    app.add_option(
            "--order", order,
            "queue order: fcfs, sjf (shortest estimate first), f1 or priority (multifactor)");
    app.add_option("--compat", compat, "reproduce another simulator exactly: pyss or rlscheduler");
    app.add_flag("--json", json, "print one JSON object");
    if (int rc = parse_args(app, "sim", args); rc >= 0) {
        return rc;
    }
    if (compat.empty()) {
        sim::NamedPolicy named{"custom", sim::NodeOrder::kFcfs, {}, sim::Estimates::kRequested};
        const bool custom = !order.empty() || !backfill.empty() || !estimates.empty();
        auto base = sim::policy_by_name(policy.empty() ? (custom ? "easy" : "cohort") : policy);
        if (!base) {
            return report_error("sim", base.status());
        }
        named = *base;
        if (custom) {
            named.name = policy.empty() ? "custom" : policy + "+options";
        }
        if (order == "fcfs") {
            named.order = sim::NodeOrder::kFcfs;
        } else if (order == "sjf") {
            named.order = sim::NodeOrder::kSjf;
        } else if (order == "f1") {
            named.order = sim::NodeOrder::kF1;
        } else if (order == "priority") {
            named.order = sim::NodeOrder::kPriority;
        } else if (!order.empty()) {
            return report_error("sim", Status::invalid("--order: invalid value '" + order
                                                       + "' (accepted: fcfs, sjf, f1, priority)"));
        }
        if (!backfill.empty()) {
            auto parsed = parse_backfill_policy(backfill, "--backfill");
            if (!parsed) {
                return report_error("sim", parsed.status());
            }
            named.backfill.policy = *parsed;
            if (*parsed == sched::BackfillPolicy::kConservative) {
                named.backfill.reservations = reservations;
            }
        }
        if (estimates == "requested") {
            named.estimates = sim::Estimates::kRequested;
        } else if (estimates == "actual") {
            named.estimates = sim::Estimates::kActual;
        } else if (estimates == "predicted") {
            named.estimates = sim::Estimates::kPredicted;
        } else if (!estimates.empty()) {
            return report_error("sim",
                                Status::invalid("--estimates: invalid value '" + estimates
                                                + "' (accepted: requested, actual, predicted)"));
        }
        auto trace = sim::read_swf(trace_path);
        if (!trace) {
            return report_error("sim", trace.status());
        }
        auto machine = sim::node_machine(*trace, nodes, procs);
        if (!machine) {
            return report_error("sim", machine.status());
        }
        return run_nodes(*trace, {*machine, named.order, named.backfill, named.estimates},
                         named.name, json);
    }
    if (compat != "pyss" && compat != "rlscheduler") {
        return report_error("sim", Status::invalid("--compat: invalid value '" + compat
                                                   + "' (accepted: pyss, rlscheduler; or none for "
                                                     "Cohort's node-level model)"));
    }
    if (backfill.empty()) {
        backfill = "easy";
    }
    if (order.empty()) {
        order = "fcfs";
    }
    sched::BackfillOptions options;
    auto parsed = parse_backfill_policy(backfill, "--backfill");
    if (!parsed) {
        return report_error("sim", parsed.status());
    }
    options.policy = *parsed;
    if (options.policy == sched::BackfillPolicy::kConservative) {
        options.reservations = reservations;
    }
    const bool rl = compat == "rlscheduler";
    if (order != "fcfs" && order != "sjf" && !(rl && order == "f1")) {
        return report_error("sim", Status::invalid("--order: invalid value '" + order
                                                   + (rl ? "' (accepted: fcfs, sjf, f1)"
                                                         : "' (accepted: fcfs, sjf)")));
    }
    if (rl && options.policy == sched::BackfillPolicy::kConservative) {
        return report_error("sim", Status::invalid("--backfill: 'conservative' with --compat "
                                                   "rlscheduler (accepted: none, easy)"));
    }
    auto trace = sim::read_swf(trace_path);
    if (!trace) {
        return report_error("sim", trace.status());
    }
    if (rl) {
        return run_rlscheduler(*trace, order, options.policy == sched::BackfillPolicy::kEasy, json);
    }
    if (procs <= 0) {
        procs = trace->max_procs;
    }
    if (procs <= 0) {
        return report_error("sim", Status::invalid("--procs: the trace has no MaxProcs header; "
                                                   "give the machine size"));
    }
    sim::FilteredTrace filtered = sim::pyss_filter(*trace, procs);
    sim::SimResult result =
            sim::simulate_pyss(filtered.jobs, procs, options,
                               order == "sjf" ? sim::QueueOrder::kSjf : sim::QueueOrder::kFcfs);
    sim::Metrics m = sim::compute_metrics(result, procs);
    int64_t skipped = 0;
    nlohmann::json reasons = nlohmann::json::object();
    for (const auto& [reason, count] : filtered.skipped) {
        skipped += count;
        reasons[reason] = count;
    }
    if (json) {
        nlohmann::json doc = {{"trace", trace_path},
                              {"procs", procs},
                              {"backfill", backfill},
                              {"order", order},
                              {"compat", compat},
                              {"jobs", m.jobs},
                              {"skipped", skipped},
                              {"skipped_reasons", reasons},
                              {"utilization", m.utilization},
                              {"mean_wait_s", m.mean_wait_s},
                              {"median_wait_s", m.median_wait_s},
                              {"mean_response_s", m.mean_response_s},
                              {"mean_bsld", m.mean_bsld},
                              {"max_wait_s", m.max_wait_s},
                              {"makespan_s", m.makespan_s},
                              {"mean_pass_ms", m.mean_pass_ms},
                              {"max_pass_ms", m.max_pass_ms}};
        std::cout << doc.dump(2) << "\n";
        return 0;
    }
    std::printf("trace %s: %lld jobs on %lld processors, %lld skipped\n", trace_path.c_str(),
                static_cast<long long>(m.jobs), static_cast<long long>(procs),
                static_cast<long long>(skipped));
    for (const auto& [reason, count] : filtered.skipped) {
        std::printf("  skipped %lld: %s\n", static_cast<long long>(count), reason.c_str());
    }
    std::printf(
            "utilization %.4f\nmean wait %.1f s, median %.0f s, max %lld s\n"
            "mean wait + run %.1f s\nmean bounded slowdown (tau 10 s) %.2f\n"
            "makespan %lld s\nscheduling pass mean %.4f ms, max %.4f ms\n",
            m.utilization, m.mean_wait_s, m.median_wait_s, static_cast<long long>(m.max_wait_s),
            m.mean_response_s, m.mean_bsld, static_cast<long long>(m.makespan_s), m.mean_pass_ms,
            m.max_pass_ms);
    return 0;
}

}  // namespace cohort::cli
