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
                                    {"passes_over_new_jobs", result.passes_over_new_jobs},
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
            "%zu scheduling passes (%lld over new jobs only): mean %.4f ms, max %.4f ms\n",
            m.utilization, m.mean_wait_s, m.median_wait_s, static_cast<long long>(m.max_wait_s),
            m.mean_bsld, static_cast<long long>(m.makespan_s), result.pass_ms.size(),
            static_cast<long long>(result.passes_over_new_jobs), m.mean_pass_ms, m.max_pass_ms);
    return 0;
}

// What `cohort sim` was asked.
struct SimOptions {
    std::string trace_path, backfill, compat, order, estimates, policy;
    int64_t procs = 0, nodes = 0;
    size_t reservations = std::numeric_limits<size_t>::max();
    bool json = false;
};

// Cohort's node-level model: a named policy, adjusted by --order, --backfill, --estimates.
int sim_nodes(const SimOptions& o) {
    sim::NamedPolicy named{"custom", sim::NodeOrder::kFcfs, {}, sim::Estimates::kRequested};
    const bool custom = !o.order.empty() || !o.backfill.empty() || !o.estimates.empty();
    auto base = sim::policy_by_name(o.policy.empty() ? (custom ? "easy" : "cohort") : o.policy);
    if (!base) {
        return report_error("sim", base.status());
    }
    named = *base;
    if (custom) {
        named.name = o.policy.empty() ? "custom" : o.policy + "+options";
    }
    if (o.order == "fcfs") {
        named.order = sim::NodeOrder::kFcfs;
    } else if (o.order == "sjf") {
        named.order = sim::NodeOrder::kSjf;
    } else if (o.order == "f1") {
        named.order = sim::NodeOrder::kF1;
    } else if (o.order == "priority") {
        named.order = sim::NodeOrder::kPriority;
    } else if (!o.order.empty()) {
        return report_error("sim", Status::invalid("--order: invalid value '" + o.order
                                                   + "' (accepted: fcfs, sjf, f1, priority)"));
    }
    if (!o.backfill.empty()) {
        auto parsed = parse_backfill_policy(o.backfill, "--backfill");
        if (!parsed) {
            return report_error("sim", parsed.status());
        }
        named.backfill.policy = *parsed;
        if (*parsed == sched::BackfillPolicy::kConservative) {
            named.backfill.reservations = o.reservations;
        }
    }
    if (o.estimates == "requested") {
        named.estimates = sim::Estimates::kRequested;
    } else if (o.estimates == "actual") {
        named.estimates = sim::Estimates::kActual;
    } else if (o.estimates == "predicted") {
        named.estimates = sim::Estimates::kPredicted;
    } else if (!o.estimates.empty()) {
        return report_error("sim", Status::invalid("--estimates: invalid value '" + o.estimates
                                                   + "' (accepted: requested, actual, predicted)"));
    }
    auto trace = sim::read_swf(o.trace_path);
    if (!trace) {
        return report_error("sim", trace.status());
    }
    auto machine = sim::node_machine(*trace, o.nodes, o.procs);
    if (!machine) {
        return report_error("sim", machine.status());
    }
    return run_nodes(*trace, {*machine, named.order, named.backfill, named.estimates}, named.name,
                     o.json);
}

// pyss's processor-level model, as that simulator computes it.
int sim_pyss(const sim::SwfTrace& trace, SimOptions o, const sched::BackfillOptions& options) {
    if (o.procs <= 0) {
        o.procs = trace.max_procs;
    }
    if (o.procs <= 0) {
        return report_error("sim", Status::invalid("--procs: the trace has no MaxProcs header; "
                                                   "give the machine size"));
    }
    sim::FilteredTrace filtered = sim::pyss_filter(trace, o.procs);
    sim::SimResult result =
            sim::simulate_pyss(filtered.jobs, o.procs, options,
                               o.order == "sjf" ? sim::QueueOrder::kSjf : sim::QueueOrder::kFcfs);
    sim::Metrics m = sim::compute_metrics(result, o.procs);
    int64_t skipped = 0;
    nlohmann::json reasons = nlohmann::json::object();
    for (const auto& [reason, count] : filtered.skipped) {
        skipped += count;
        reasons[reason] = count;
    }
    if (o.json) {
        nlohmann::json doc = {{"trace", o.trace_path},
                              {"procs", o.procs},
                              {"backfill", o.backfill},
                              {"order", o.order},
                              {"compat", o.compat},
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
    std::printf("trace %s: %lld jobs on %lld processors, %lld skipped\n", o.trace_path.c_str(),
                static_cast<long long>(m.jobs), static_cast<long long>(o.procs),
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

// --compat pyss or rlscheduler: reproduce that simulator exactly.
int sim_compat(SimOptions o) {
    if (o.compat != "pyss" && o.compat != "rlscheduler") {
        return report_error("sim", Status::invalid("--compat: invalid value '" + o.compat
                                                   + "' (accepted: pyss, rlscheduler; or none for "
                                                     "Cohort's node-level model)"));
    }
    if (o.backfill.empty()) {
        o.backfill = "easy";
    }
    if (o.order.empty()) {
        o.order = "fcfs";
    }
    sched::BackfillOptions options;
    auto parsed = parse_backfill_policy(o.backfill, "--backfill");
    if (!parsed) {
        return report_error("sim", parsed.status());
    }
    options.policy = *parsed;
    if (options.policy == sched::BackfillPolicy::kConservative) {
        options.reservations = o.reservations;
    }
    const bool rl = o.compat == "rlscheduler";
    if (o.order != "fcfs" && o.order != "sjf" && !(rl && o.order == "f1")) {
        return report_error("sim", Status::invalid("--order: invalid value '" + o.order
                                                   + (rl ? "' (accepted: fcfs, sjf, f1)"
                                                         : "' (accepted: fcfs, sjf)")));
    }
    if (rl && options.policy == sched::BackfillPolicy::kConservative) {
        return report_error("sim", Status::invalid("--backfill: 'conservative' with --compat "
                                                   "rlscheduler (accepted: none, easy)"));
    }
    auto trace = sim::read_swf(o.trace_path);
    if (!trace) {
        return report_error("sim", trace.status());
    }
    if (rl) {
        return run_rlscheduler(*trace, o.order, options.policy == sched::BackfillPolicy::kEasy,
                               o.json);
    }
    return sim_pyss(*trace, o, options);
}

}  // namespace

int cmd_sim(const Args& args) {
    SimOptions o;
    CLI::App app{"Replay an SWF trace: cohort sim --trace FILE.swf[.gz] --compat pyss"};
    app.add_option("--trace", o.trace_path, "SWF trace, plain or gzip")->required();
    app.add_option("--procs", o.procs, "machine size in processors (default: MaxProcs)");
    app.add_option("--nodes", o.nodes, "machine size in nodes of MaxProcs/MaxNodes CPUs");
    app.add_option("--estimates", o.estimates,
                   "requested, actual or predicted (EASY++: the user's last two run times)");
    app.add_option("--policy", o.policy,
                   "cohort (default), easy (FCFS + EASY + requested) or easy++");
    app.add_option("--backfill", o.backfill, "none, easy or conservative");
    app.add_option("--reservations", o.reservations,
                   "conservative: how many waiting jobs get a reservation (default: all)");
    app.add_option(
            "--order", o.order,
            "queue order: fcfs, sjf (shortest estimate first), f1 or priority (multifactor)");
    app.add_option("--compat", o.compat,
                   "reproduce another simulator exactly: pyss or rlscheduler");
    app.add_flag("--json", o.json, "print one JSON object");
    if (int rc = parse_args(app, "sim", args); rc >= 0) {
        return rc;
    }
    return o.compat.empty() ? sim_nodes(o) : sim_compat(std::move(o));
}

}  // namespace cohort::cli
