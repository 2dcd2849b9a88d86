// cohort cancel / hold / release (scancel, scontrol hold/release).
#include <cstdlib>

#include <fmt/format.h>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/job_ids.h"
#include "common/warning_signal.h"

namespace cohort::cli {
namespace {

Result<std::vector<uint64_t>> parse_ids(const std::vector<std::string>& words) {
    std::vector<uint64_t> ids;
    for (const auto& word : words) {
        const auto id = parse_job_id(word);
        if (!id) {
            return Status::invalid("job id: invalid value '" + word
                                   + "' (accepted: a positive job id such as 42, or 42+1 for a "
                                     "heterogeneous job's component)");
        }
        ids.push_back(*id);
    }
    return ids;
}

// Sends the request; prints one line per job it could not act on, and exits 1 if any.
int control(const std::string& command, const protocol::JobControlRequest& request) {
    auto client = connect_controller();
    if (!client) {
        return report_error(command, client.status());
    }
    auto reply = client->call<protocol::JobControlReply>(request);
    if (!reply) {
        return report_error(command, reply.status());
    }
    for (const auto& error : reply->errors) {
        report_error(command, Status::not_found(error));
    }
    return reply->errors.empty() ? 0 : 1;
}

// `action` for the jobs named by `ids` (as typed), all or nothing.
int control_ids(const std::string& command,
                protocol::JobAction action,
                const std::vector<std::string>& ids) {
    auto parsed = parse_ids(ids);
    if (!parsed) {
        return report_error(command, parsed.status());
    }
    protocol::JobControlRequest request;
    request.action = action;
    request.job_ids = std::move(*parsed);
    return control(command, request);
}

}  // namespace

int cmd_cancel(const Args& args) {
    CLI::App app{"Cancel jobs (scancel): cohort cancel [-s SIGNAL] [filters] [ID...]"};
    std::vector<std::string> ids;
    std::string signal_text, states_text;
    bool me = false;
    bool batch = false;
    bool full = false;
    protocol::JobControlRequest request;
    protocol::JobFilterSpec& filter = request.filter;
    app.add_option("-s,--signal", signal_text,
                   "send this signal instead of ending the job (to its steps; see -b, -f)");
    app.add_flag("-b,--batch", batch, "signal the batch shell only, not its children or steps");
    app.add_flag("-f,--full", full, "signal the batch shell, its children and every step");
    app.add_option("-u,--user", filter.user, "only this user's jobs");
    app.add_flag("--me", me, "only my jobs");
    app.add_option("-t,--state", states_text, "only jobs in these states, e.g. PD or R");
    app.add_option("-n,--name,--jobname", filter.name, "only jobs of this name");
    app.add_option("-p,--partition", filter.partition, "only jobs in this partition");
    app.add_option("-A,--account", filter.account, "only jobs charged to this account");
    app.add_option("ids", ids, "job ids");
    if (int rc = parse_args(app, "cancel", args); rc >= 0) {
        return rc;
    }
    if (!signal_text.empty()) {
        auto signal = parse_signal_name("--signal", signal_text);
        if (!signal) {
            return report_error("cancel", signal.status());
        }
        request.signal = *signal;
    }
    if ((batch || full) && request.signal == 0) {
        return report_error("cancel",
                            Status::invalid(fmt::format(
                                    "{}: only with --signal (accepted: -s SIGNAL {})",
                                    batch ? "--batch" : "--full", batch ? "--batch" : "--full")));
    }
    if (batch && full) {
        return report_error("cancel", Status::invalid("--batch and --full: give one (accepted: "
                                                      "--batch for the shell alone, --full for "
                                                      "everything)"));
    }
    request.signal_target = batch  ? protocol::SignalTarget::kBatchShell
                            : full ? protocol::SignalTarget::kFull
                                   : protocol::SignalTarget::kSteps;
    auto states = parse_job_states("--state", states_text);
    if (!states) {
        return report_error("cancel", states.status());
    }
    filter.states = std::move(*states);
    if (me) {
        filter.user = current_user_name();
    }
    if (ids.empty() && !filter.any()) {
        return report_error("cancel", Status::invalid("job id: missing (accepted: job ids, or a "
                                                      "filter such as --user, --me or --state)"));
    }
    auto parsed = parse_ids(ids);
    if (!parsed) {
        return report_error("cancel", parsed.status());
    }
    request.job_ids = std::move(*parsed);
    return control("cancel", request);
}

int cmd_hold(const Args& args, bool release) {
    const std::string command = release ? "release" : "hold";
    CLI::App app{release ? "Release held jobs: cohort release ID..."
                         : "Hold pending jobs: cohort hold ID..."};
    std::vector<std::string> ids;
    app.add_option("ids", ids, "job ids");
    if (int rc = parse_args(app, command, args); rc >= 0) {
        return rc;
    }
    return control_ids(command,
                       release ? protocol::JobAction::kRelease : protocol::JobAction::kHold, ids);
}

int cmd_requeue(const Args& args, bool hold) {
    const std::string command = hold ? "requeuehold" : "requeue";
    CLI::App app{
            "End running batch jobs' attempts to run them again with the same ids "
            "(scontrol requeue): cohort requeue [--hold] ID..."};
    std::vector<std::string> ids;
    app.add_flag("--hold", hold, "hold them once requeued (scontrol requeuehold)");
    app.add_option("ids", ids, "job ids");
    if (int rc = parse_args(app, command, args); rc >= 0) {
        return rc;
    }
    return control_ids(
            command, hold ? protocol::JobAction::kRequeueHold : protocol::JobAction::kRequeue, ids);
}

}  // namespace cohort::cli
