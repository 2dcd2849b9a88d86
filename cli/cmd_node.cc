// cohort node drain|down|resume, and scontrol's forms of the same and of job control:
// `scontrol update nodename=... state=... reason=...`, requeue, hold, release, show job,
// and its hostlist helpers (show hostnames, show hostlist).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/job_ids.h"
#include "common/ascii_lower.h"
#include "common/hostlist.h"
#include "common/size_spec.h"

namespace cohort::cli {
namespace {

Result<protocol::NodeAction> node_action(const std::string& word, const std::string& field) {
    const std::string action = ascii_lower(word);
    if (action == "drain") {
        return protocol::NodeAction::kDrain;
    }
    if (action == "down") {
        return protocol::NodeAction::kDown;
    }
    if (action == "resume") {
        return protocol::NodeAction::kResume;
    }
    return Status::invalid(
            fmt::format("{}: invalid value '{}' (accepted: drain, down, resume)", field, word));
}

// Expands each hostlist and sends one request for all of the nodes.
int change_nodes(const std::string& command,
                 protocol::NodeAction action,
                 const std::vector<std::string>& hostlists,
                 const std::string& reason) {
    protocol::NodeControlRequest request{action, {}, reason};
    for (const auto& hostlist : hostlists) {
        auto names = expand_hostlist(hostlist);
        if (!names) {
            return report_error(command, names.status().with_context("node"));
        }
        request.nodes.insert(request.nodes.end(), names->begin(), names->end());
    }
    auto reply = ask<protocol::AckReply>(request);
    if (!reply) {
        return report_error(command, reply.status());
    }
    return 0;
}

// `key=value` words of scontrol update, keys as Slurm spells them in any case.
// scontrol update JobId=N Key=Value...: one request, all changes or none.
int scontrol_update_job(const Args& args) {
    protocol::JobUpdateRequest request;
    for (const auto& word : args) {
        const size_t eq = word.find('=');
        if (eq == std::string::npos) {
            return report_error("scontrol update",
                                Status::invalid(fmt::format("'{}': expected KEY=VALUE", word)));
        }
        const std::string key = ascii_lower(word.substr(0, eq));
        const std::string value = word.substr(eq + 1);
        if (key == "jobid" || key == "job") {
            auto id = parse_job_id(value);
            if (!id) {
                return report_error("scontrol update",
                                    Status::invalid("JobId: invalid value '" + value
                                                    + "' (accepted: a job id, e.g. 42 or 42+1)"));
            }
            request.job_id = *id;
        } else {
            request.changes.emplace_back(key, value);
        }
    }
    if (request.changes.empty()) {
        return report_error("scontrol update",
                            Status::invalid("nothing to change (accepted: TimeLimit=, "
                                            "Partition=, QOS=, Nice=, JobName=, Dependency=, "
                                            "StartTime=, Comment=)"));
    }
    auto reply = ask<protocol::AckReply>(request);
    if (!reply) {
        return report_error("scontrol update", reply.status());
    }
    return 0;
}

int scontrol_update(const Args& args) {
    const bool names_a_job = std::any_of(args.begin(), args.end(), [](const std::string& word) {
        const std::string key = ascii_lower(word.substr(0, word.find('=')));
        return key == "jobid" || key == "job";
    });
    if (names_a_job) {
        return scontrol_update_job(args);
    }
    std::string nodes;
    std::string state;
    std::string reason;
    for (const auto& word : args) {
        const size_t eq = word.find('=');
        const std::string key = ascii_lower(word.substr(0, eq));
        if (eq == std::string::npos) {
            return report_error("scontrol update",
                                Status::invalid(fmt::format(
                                        "'{}': expected KEY=VALUE (accepted keys: NodeName, "
                                        "State, Reason)",
                                        word)));
        }
        const std::string value = word.substr(eq + 1);
        if (key == "nodename" || key == "node") {
            nodes = value;
        } else if (key == "state") {
            state = value;
        } else if (key == "reason") {
            reason = value;
        } else {
            return report_error("scontrol update",
                                Status::invalid(fmt::format(
                                        "{}: unknown key (accepted: NodeName, State, Reason)",
                                        word.substr(0, eq))));
        }
    }
    if (nodes.empty() || state.empty()) {
        return report_error("scontrol update",
                            Status::invalid("NodeName= and State= are required (accepted "
                                            "states: DRAIN, DOWN, RESUME)"));
    }
    auto action = node_action(state, "State");
    if (!action) {
        return report_error("scontrol update", action.status());
    }
    return change_nodes("scontrol update", *action, {nodes}, reason);
}

}  // namespace

int cmd_node(const Args& args) {
    CLI::App app{
            "Take nodes out of service or back (scontrol update nodename=... state=...): "
            "cohort node drain|down|resume NODE... [--reason TEXT]"};
    std::string action_word;
    std::vector<std::string> hostlists;
    std::string reason;
    app.add_option("action", action_word,
                   "drain: running jobs finish, nothing new starts; down: out of service now, "
                   "its jobs are requeued or end NODE_FAIL; resume: back in service")
            ->required();
    app.add_option("nodes", hostlists, "node names or hostlists (node[1-4])")->required();
    app.add_option("--reason", reason, "why (required for drain and down), shown by nodes -R");
    if (int rc = parse_args(app, "node", args); rc >= 0) {
        return rc;
    }
    auto action = node_action(action_word, "action");
    if (!action) {
        return report_error("node", action.status());
    }
    return change_nodes("node", *action, hostlists, reason);
}

// `scontrol show hostnames [LIST]`: one name a line, of LIST or else of the job this runs in
// (SLURM_JOB_NODELIST), as launch scripts use it to find their first host.
int show_hostnames(const Args& args) {
    const char* in_job = std::getenv("SLURM_JOB_NODELIST");
    if (args.size() > 1 || (args.empty() && in_job == nullptr)) {
        std::cerr << "cohort scontrol: error: show hostnames: give one hostlist, or run it inside "
                     "a job (accepted: show hostnames [node[1-4]])\n";
        return 1;
    }
    auto names = expand_hostlist(args.empty() ? std::string(in_job) : args.front());
    if (!names) {
        std::cerr << "cohort scontrol: error: show hostnames: " << names.status().message() << "\n";
        return 1;
    }
    for (const std::string& name : *names) {
        std::cout << name << "\n";
    }
    return 0;
}

// `scontrol show hostlist NAMES`: the names (commas between them) as one hostlist.
int show_hostlist(const Args& args) {
    if (args.size() != 1) {
        std::cerr << "cohort scontrol: error: show hostlist: give the names, separated by commas "
                     "(accepted: show hostlist node1,node2,node3)\n";
        return 1;
    }
    auto names = expand_hostlist(args.front());
    if (!names) {
        std::cerr << "cohort scontrol: error: show hostlist: " << names.status().message() << "\n";
        return 1;
    }
    std::cout << compress_hostlist(*names) << "\n";
    return 0;
}

int cmd_scontrol(const Args& args) {
    static const char* kUsage =
            "usage: scontrol update NodeName=NODES State=DRAIN|DOWN|RESUME [Reason=TEXT]\n"
            "       scontrol update JobId=ID TimeLimit=|Partition=|QOS=|Nice=|JobName=|\n"
            "                       Dependency=|StartTime=|Comment=VALUE...\n"
            "       scontrol show job ID | node [NODES] | partition [NAME] | reservation [NAME] |\n"
            "                     licenses [NAME] | config | hostnames [LIST] | hostlist NAMES\n"
            "       scontrol requeue ID... | requeuehold ID... | hold ID... | release ID...\n";
    if (args.empty() || args.front() == "-h" || args.front() == "--help") {
        std::cout << kUsage;
        return args.empty() ? 2 : 0;
    }
    const std::string what = ascii_lower(args.front());
    const Args rest(args.begin() + 1, args.end());
    if (what == "update") {
        return scontrol_update(rest);
    }
    if (what == "show") {
        const std::string object = rest.empty() ? "" : ascii_lower(rest.front());
        const Args operands(rest.begin() + (rest.empty() ? 0 : 1), rest.end());
        if (object == "hostnames") {
            return show_hostnames(operands);
        }
        if (object == "hostlist") {
            return show_hostlist(operands);
        }
        return cmd_show(rest);
    }
    if (what == "requeue" || what == "requeuehold") {
        return cmd_requeue(rest, what == "requeuehold");
    }
    if (what == "hold" || what == "release") {
        return cmd_hold(rest, what == "release");
    }
    const bool is_option = args.front().size() > 1 && args.front()[0] == '-';
    std::cerr << "cohort scontrol: error: "
              << (is_option ? "unrecognized option '" : "invalid command '") << args.front()
              << "' (accepted: update, show, requeue, requeuehold, hold, release; see scontrol "
                 "--help)\n";
    return 1;  // as scontrol exits on a keyword or option it does not know
}

}  // namespace cohort::cli
