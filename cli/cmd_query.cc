// cohort queue / nodes / show / acct (squeue, sinfo, scontrol show job, sacct).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/acct_format.h"
#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/job_ids.h"
#include "cli/json_output.h"
#include "cli/node_format.h"
#include "cli/queue_format.h"
#include "cli/show_entities.h"
#include "common/ascii_lower.h"
#include "common/begin_time.h"
#include "common/comma_list.h"
#include "common/hostlist.h"
#include "common/mail_type.h"
#include "common/time_spec.h"
#include "common/topology/topology_report.h"

namespace cohort::cli {
namespace {

std::string fit(const std::string& text, size_t width) {
    return text.size() > width ? text.substr(0, width) : text;
}

Result<std::vector<uint64_t>> parse_job_ids(const std::string& option, const std::string& text) {
    std::vector<uint64_t> ids;
    for (const std::string& id : split_comma_list(text)) {
        const auto value = parse_job_id(id);
        if (!value) {
            return Status::invalid(fmt::format(
                    "{}: invalid job id '{}' (accepted: comma-separated job ids)", option, id));
        }
        ids.push_back(*value);
    }
    return ids;
}

int64_t elapsed_of(const protocol::JobRecord& job) {
    if (job.start_time == 0) {
        return 0;
    }
    int64_t end = job.end_time != 0 ? job.end_time : static_cast<int64_t>(std::time(nullptr));
    return std::max<int64_t>(end - job.start_time, 0);
}

void print_acct_job(const protocol::JobRecord& job) {
    std::string exit = std::to_string(job.exit_code) + ":" + std::to_string(job.exit_signal);
    std::printf("%-12s %-10s %-9s %-8s %10s %8s %-19s %-19s %s\n", job.display_id().c_str(),
                fit(job.spec.name, 10).c_str(), fit(job.partition, 9).c_str(),
                fit(job.user_name, 8).c_str(), std::string(job_state_name(job.state)).c_str(),
                exit.c_str(), format_time(job.start_time).c_str(),
                format_time(job.end_time).c_str(), compress_hostlist(job.nodes).c_str());
}

void print_acct_step(const protocol::JobRecord& job, const protocol::StepRecord& step) {
    std::string id = job.display_id() + "." + std::to_string(step.step_id);
    std::string exit = std::to_string(step.exit_code) + ":" + std::to_string(step.exit_signal);
    std::printf("%-12s %-10s %-9s %-8s %10s %8s %-19s %-19s %s\n", id.c_str(),
                fit(step.name, 10).c_str(), "", "", std::string(job_state_name(step.state)).c_str(),
                exit.c_str(), format_time(step.start_time).c_str(),
                format_time(step.end_time).c_str(), compress_hostlist(step.nodes).c_str());
}

// sinfo -R: one line per reason, with the nodes that share it (and its user and time).
void print_node_reasons(const std::vector<protocol::NodeInfo>& nodes) {
    struct Group {
        std::string reason;
        std::string user;
        int64_t time = 0;
        std::vector<std::string> nodes;
    };

    std::vector<Group> groups;
    for (const auto& node : nodes) {
        if (!node.drain && node.state != NodeState::kDown) {
            continue;
        }
        auto same = [&node](const Group& g) {
            return g.reason == node.reason && g.user == node.reason_user
                   && g.time == node.reason_time;
        };
        auto group = std::find_if(groups.begin(), groups.end(), same);
        if (group == groups.end()) {
            group = groups.insert(groups.end(),
                                  Group{node.reason, node.reason_user, node.reason_time, {}});
        }
        group->nodes.push_back(node.name);
    }
    std::printf("%-20s %-9s %-19s %s\n", "REASON", "USER", "TIMESTAMP", "NODELIST");
    for (const auto& group : groups) {
        std::printf("%-20s %-9s %-19s %s\n", group.reason.empty() ? "none" : group.reason.c_str(),
                    group.user.empty() ? "Unknown" : group.user.c_str(),
                    format_time(group.time).c_str(), compress_hostlist(group.nodes).c_str());
    }
}

}  // namespace

int cmd_queue(const Args& args) {
    CLI::App app{"List pending and running jobs (squeue)"};
    app.set_help_flag("--help", "print this help");  // -h is squeue's --noheader
    bool json = false, start = false, no_header = false, me = false;
    std::string users, states_text, jobs_text, partitions, names, accounts, format, fields, sort;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_flag("-h,--noheader", no_header, "no header line");
    app.add_option("-o,--format", format, "columns as printf-like codes, e.g. '%.18i %j %T'");
    app.add_option("-O,--Format", fields, "columns by name, e.g. 'JobID,Name:30,State'");
    app.add_option("-S,--sort", sort, "sort by these codes, '-' for descending, e.g. '-t,i'");
    app.add_option("-u,--user", users, "only these users' jobs (comma separated)");
    app.add_flag("--me", me, "only my jobs");
    app.add_option("-j,--jobs", jobs_text, "only these job ids (comma separated)");
    app.add_option("-t,--states", states_text, "only these states, e.g. PD,R");
    app.add_option("-p,--partition", partitions, "only these partitions (comma separated)");
    app.add_option("-n,--name", names, "only jobs of these names (comma separated)");
    app.add_option("-A,--account", accounts, "only these accounts (comma separated)");
    app.add_flag("--start", start, "pending jobs with the start the scheduler plans for them");
    if (int rc = parse_args(app, "queue", args); rc >= 0) {
        return rc;
    }
    protocol::QueryJobsRequest request;
    auto states = parse_job_states("--states", start && states_text.empty() ? "PD" : states_text);
    if (!states) {
        return report_error("queue", states.status());
    }
    request.states = std::move(*states);
    auto ids = parse_job_ids("--jobs", jobs_text);
    if (!ids) {
        return report_error("queue", ids.status());
    }
    request.job_ids = std::move(*ids);
    request.users = split_comma_list(me ? current_user_name() : users);
    request.partitions = split_comma_list(partitions);
    request.names = split_comma_list(names);
    request.accounts = split_comma_list(accounts);
    auto columns = !fields.empty() ? parse_queue_fields(fields)
                   : !format.empty()
                           ? parse_queue_format(format)
                           : parse_queue_format(start ? "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %R"
                                                      : "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R");
    if (!columns) {
        return report_error("queue", columns.status());
    }
    auto sort_keys = parse_sort_keys(sort);
    if (!sort_keys) {
        return report_error("queue", sort_keys.status());
    }
    request.columns_only = !json && columns_only_suffice(*columns, *sort_keys);
    // Printed as frames arrive, unless the whole listing is needed first (--sort).
    const bool keep = !sort_keys->empty();
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    std::vector<protocol::JobRecord> kept;
    bool header_due = !no_header;
    auto print = [&](const protocol::JobRecord& job) {
        if (header_due) {
            std::cout << queue_header(*columns) << "\n";
            header_due = false;
        }
        std::cout << queue_line(*columns, job, now) << "\n";
    };
    std::optional<JsonPayloadStream> json_out;
    if (json) {
        json_out.emplace(std::cout, "jobs");
    }
    Status listed = ask_job_list(request, [&](protocol::JobListReply& frame) {
        for (auto& job : frame.jobs) {
            if (json_out) {
                json_out->add([&](JsonWriter& w) {
                    write_job_fields(w.begin_object(), job);
                    w.end_object();
                });
            } else {
                keep ? kept.push_back(std::move(job)) : print(job);
            }
        }
    });
    if (!listed) {
        return report_error("queue", listed);
    }
    if (json_out) {
        json_out->finish();
        return 0;
    }
    sort_jobs(kept, *sort_keys, now);
    for (const auto& job : kept) {
        print(job);
    }
    if (header_due) {
        std::cout << queue_header(*columns) << "\n";  // squeue prints it over an empty list
    }
    return 0;
}

namespace {

// `cohort nodes` prints a table of its own by default; as `sinfo`, or with -o, -N or -h, the
// rows and columns of sinfo.
int list_nodes(const Args& args, bool as_sinfo) {
    CLI::App app{"List nodes and partitions (sinfo)"};
    app.set_help_flag("--help", "print this help");  // -h is sinfo's --noheader
    bool json = false;
    bool reasons = false;
    bool no_header = false;
    bool node_oriented = false;
    bool summarize = false;
    bool long_listing = false;
    std::string topology_of;
    std::string format;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_flag("-R,--list-reasons", reasons,
                 "list DOWN, DRAINED and DRAINING nodes with the reason, who set it and when");
    app.add_option("--topology", topology_of,
                   "print NODE's GPU link matrix, NUMA nodes, local CPUs and closest NICs");
    app.add_option("-o,--format", format,
                   "columns as printf-like codes, e.g. '%P %.5a %.10l %.6D %.6t %N'");
    app.add_flag("-N,--Node", node_oriented, "one line per node (and partition)");
    app.add_flag("-h,--noheader", no_header, "no header line");
    app.add_flag("-s,--summarize", summarize, "one line per partition: NODES(A/I/O/T)");
    app.add_flag("-l,--long", long_listing, "more columns, and the time first");
    if (int rc = parse_args(app, as_sinfo ? "sinfo" : "nodes", args); rc >= 0) {
        return rc;
    }
    const bool sinfo_form =
            as_sinfo || !format.empty() || node_oriented || no_header || summarize || long_listing;
    // As sinfo: -s wins over -l, and -o over both.
    std::vector<NodeField> fields =
            default_node_format(node_oriented, summarize      ? NodeListing::kSummary
                                               : long_listing ? NodeListing::kLong
                                                              : NodeListing::kDefault);
    if (!format.empty()) {
        auto parsed = parse_node_format(format);
        if (!parsed) {
            return report_error("nodes", parsed.status());
        }
        fields = std::move(*parsed);
    }
    auto reply = ask<protocol::NodeListReply>(protocol::QueryNodesRequest{topology_of});
    if (!reply) {
        return report_error("nodes", reply.status());
    }
    if (!topology_of.empty()) {
        const protocol::NodeInfo& node = reply->nodes.front();
        const topology::NodeTopology& t = node.resources.topology;
        std::cout << (json ? topology::topology_json(t)
                           : node.name
                                      + (node.resources.gpu_type.empty()
                                                 ? ""
                                                 : " (gpu type " + node.resources.gpu_type + ")")
                                      + "\n" + topology::topology_text(t));
        return 0;
    }
    if (json) {
        JsonPayloadStream json_out(std::cout, "nodes");
        for (const auto& node : reply->nodes) {
            json_out.add([&](JsonWriter& w) {
                write_node_fields(w.begin_object(), node);
                w.end_object();
            });
        }
        json_out.finish();
        return 0;
    }
    if (reasons) {
        print_node_reasons(reply->nodes);
        return 0;
    }
    if (sinfo_form) {
        auto context = load_client_context();
        if (!context) {
            return report_error("nodes", context.status());
        }
        if (long_listing && !no_header) {
            const std::time_t now = std::time(nullptr);
            char stamp[64];
            std::tm local{};
            localtime_r(&now, &local);
            std::strftime(stamp, sizeof(stamp), "%a %b %d %H:%M:%S %Y", &local);
            std::cout << stamp << "\n";
        }
        for (const std::string& line :
             node_lines(fields, reply->nodes, context->config, node_oriented, !no_header)) {
            std::cout << line << "\n";
        }
        return 0;
    }
    std::printf("%-12s %-10s %9s %10s %5s %-12s %s\n", "NODELIST", "STATE", "CPUS(A/T)", "MEMORY",
                "GPUS", "PARTITION", "REASON");
    for (const auto& node : reply->nodes) {
        std::string partitions;
        for (const auto& p : node.partitions) {
            partitions += (partitions.empty() ? "" : ",") + p;
        }
        std::string cpus =
                std::to_string(node.cpus_alloc) + "/" + std::to_string(node.resources.cpus);
        std::printf(
                "%-12s %-10s %9s %10lld %5d %-12s %s\n", node.name.c_str(),
                std::string(node_state_label(node.state, node.drain, !node.jobs.empty())).c_str(),
                cpus.c_str(), static_cast<long long>(node.resources.memory_mib),
                node.resources.gpus, partitions.c_str(), node.reason.c_str());
    }
    return 0;
}

// One job as scontrol show job prints it.
void print_job(const protocol::JobRecord& job) {
    std::cout << "JobId=" << job.job_id;
    if (job.is_array_task()) {
        std::cout << " ArrayJobId=" << job.array_job_id << " ArrayTaskId="
                  << (job.is_array_remainder() ? job.array_pending
                                               : std::to_string(job.array_task_id));
    }
    if (job.is_het_component()) {
        std::cout << " HetJobId=" << job.het_job_id << " HetJobOffset=" << job.het_job_offset;
    }
    std::cout << " JobName=" << job.spec.name << "\n"
              << (job.is_het_component() ? "   HetJobIdSet=" + het_job_id_set(job) + "\n" : "")
              << "   UserId=" << job.user_name << "(" << job.uid << ") GroupId=" << job.gid << "\n"
              << "   JobState=" << job_state_name(job.state) << " Reason=" << job.reason
              << " ExitCode=" << job.exit_code << ":" << job.exit_signal << "\n"
              << "   Requeue=" << std::max(job.spec.requeue, 0) << " Restarts=" << job.restart_count
              << (job.failed_nodes.empty() ? ""
                                           : " FailedNodes=" + compress_hostlist(job.failed_nodes))
              << "\n"
              << "   RunTime=" << format_clock(elapsed_of(job))
              << " TimeLimit=" << format_clock(job.time_limit_s) << " TimeMin="
              << (job.spec.time_min_s > 0 ? format_clock(job.spec.time_min_s) : "N/A") << "\n"
              << "   SubmitTime=" << format_time(job.submit_time)
              << " EligibleTime=" << format_time(job.eligible_time) << "\n"
              << "   StartTime=" << format_time(job.start_time)
              << " EndTime=" << format_time(job.end_time) << "\n"
              << "   Partition=" << shown_partition(job)
              << " NodeList=" << compress_hostlist(job.nodes) << "\n"
              << "   NumNodes=" << job.nodes.size() << " NumCPUs=" << job_cpu_count(job)
              << " NumTasks=" << job.spec.ntasks << " CPUs/Task=" << job.spec.cpus_per_task
              << " ReqB:S:C:T=0:0:" << (job.spec.hint == "memory_bound" ? "1" : "*") << ":"
              << (protocol::one_thread_per_core(job.spec.hint) ? "1" : "*") << "\n"
              << "   MinCPUsNode=" << std::max<uint32_t>(job.spec.mincpus, 1)
              << (job.spec.mem_per_cpu_mib > 0
                          ? " MinMemoryCPU=" + std::to_string(job.spec.mem_per_cpu_mib)
                          : " MinMemoryNode=" + std::to_string(job.spec.mem_mib))
              << "M OverSubscribe=" << node_sharing_name(job.spec.sharing)
              << (job.spec.overcommit ? " Overcommit=1" : "") << "\n";
    const auto or_null = [](const std::string& text) {
        return text.empty() ? std::string("(null)") : text;
    };
    std::cout << "   Features=" << or_null(job.spec.constraint)
              << " Prefer=" << or_null(job.spec.prefer)
              << " Licenses=" << or_null(job.spec.licenses) << "\n";
    if (const std::string tres = tres_per_node(job.spec); !tres.empty()) {
        std::cout << "   TresPerNode=" << tres << "\n";
    }
    if (!job.spec.nodelist.empty()) {
        std::cout << "   ReqNodeList=" << compress_hostlist(job.spec.nodelist) << "\n";
    }
    if (!job.spec.kept_options.empty()) {
        // Accepted for compatibility, with no effect here.
        std::cout << "   KeptOptions=";
        for (size_t i = 0; i < job.spec.kept_options.size(); ++i) {
            const auto& [name, value] = job.spec.kept_options[i];
            std::cout << (i == 0 ? "" : ",") << name << (value.empty() ? "" : "=" + value);
        }
        std::cout << "\n";
    }
    if (job.spec.switches > 0) {
        // Without @max-wait the cluster's max_switch_wait applies.
        std::cout << "   Switches=" << job.spec.switches
                  << (job.spec.switches_wait_s >= 0
                              ? "@" + format_duration(job.spec.switches_wait_s)
                              : "")
                  << "\n";
    }
    if (!job.spec.exclude.empty()) {
        std::cout << "   ExcNodeList=" << compress_hostlist(job.spec.exclude) << "\n";
    }
    std::cout << "   WorkDir=" << job.spec.cwd << "\n"
              << "   StdOut=" << (job.spec.output.empty() ? "slurm-%j.out" : job.spec.output)
              << "\n";
    if (!job.spec.comment.empty()) {
        std::cout << "   Comment=" << job.spec.comment << "\n";
    }
    if (job.spec.mail_type != 0) {
        std::cout << "   MailUser="
                  << (job.spec.mail_user.empty() ? job.user_name : job.spec.mail_user)
                  << " MailType=" << mail_type_name(job.spec.mail_type) << "\n";
    }
}

}  // namespace

int cmd_nodes(const Args& args) {
    return list_nodes(args, false);
}

int cmd_sinfo(const Args& args) {
    return list_nodes(args, true);
}

int cmd_show(const Args& args) {
    CLI::App app{
            "Show a job, nodes, partitions, reservations or licenses (scontrol show): cohort show "
            "job ID | node [NODES] | partition [NAME] | reservation [NAME] | licenses [NAME] | "
            "config"};
    bool json = false;
    std::string what;
    std::string operand;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_option("what", what, "job, node or partition")->required();
    app.add_option("operand", operand, "the job id; a hostlist of nodes; a partition's name");
    if (int rc = parse_args(app, "show", args); rc >= 0) {
        return rc;
    }
    what = ascii_lower(what);
    if (what == "node" || what == "nodes") {
        return show_nodes(operand, json);
    }
    if (what == "partition" || what == "partitions") {
        return show_partitions(operand, json);
    }
    if (what == "reservation" || what == "reservations" || what == "res") {
        return show_reservations(operand, json);
    }
    if (what == "config") {
        return show_config();
    }
    if (what.size() >= 3 && std::string_view("licenses").substr(0, what.size()) == what) {
        return show_licenses(operand);  // lic, license, licenses, as scontrol abbreviates
    }
    if (what != "job") {
        return report_error("show", Status::invalid("invalid entity '" + what
                                                    + "' (accepted: job, node, partition, "
                                                      "reservation, licenses, config)"));
    }
    auto ids = parse_job_ids("job", operand);
    if (!ids || ids->size() != 1) {
        return report_error("show", Status::invalid("job: invalid job id '" + operand
                                                    + "' (accepted: one job id, e.g. 42)"));
    }
    const uint64_t job_id = ids->front();
    protocol::QueryJobsRequest request;
    request.job_ids = {job_id};
    request.states = {JobState::kPending, JobState::kRunning, JobState::kCompleting};
    std::vector<protocol::JobRecord> found;
    auto keep = [&found](protocol::JobListReply& frame) {
        std::move(frame.jobs.begin(), frame.jobs.end(), std::back_inserter(found));
    };
    Status listed = ask_job_list(request, keep);
    if (listed && found.empty()) {
        protocol::AcctQueryRequest acct;
        acct.job_ids = {job_id};
        acct.controller_record = true;
        listed = ask_job_list(acct, keep);
    }
    if (!listed) {
        return report_error("show", listed);
    }
    if (found.empty()) {
        return report_error("show", Status::not_found(fmt::format("job {}: no such job", job_id)));
    }
    // A hetjob's leader id shows every component, as scontrol does; another id one job.
    std::vector<protocol::JobRecord> shown{found.front()};
    if (found.front().is_het_component() && found.front().het_job_id == job_id) {
        shown.clear();
        std::copy_if(
                found.begin(), found.end(), std::back_inserter(shown),
                [&](const protocol::JobRecord& record) { return record.het_job_id == job_id; });
    }
    if (json) {
        JsonPayloadStream json_out(std::cout, "jobs");
        for (const protocol::JobRecord& job : shown) {
            json_out.add([&](JsonWriter& w) {
                write_job_fields(w.begin_object(), job);
                w.end_object();
            });
        }
        json_out.finish();
        return 0;
    }
    for (size_t i = 0; i < shown.size(); ++i) {
        std::cout << (i == 0 ? "" : "\n");
        print_job(shown[i]);
    }
    return 0;
}

namespace {

// sacct --json's TRES list: {"type", "name", "id", "count"}, ids as slurmdbd numbers them
// (gres/gpu as the first GRES a database registers, the others after it by name).
void write_tres(JsonWriter& w, const TresCounts& tres) {
    auto item = [&w](const char* type, const std::string& name, int id, int64_t count) {
        w.begin_object()
                .member("type", type)
                .member("name", name)
                .member("id", id)
                .member("count", count)
                .end_object();
    };
    w.begin_array();
    item("cpu", "", 1, tres.cpu);
    if (tres.mem_mib > 0) {
        item("mem", "", 2, tres.mem_mib);
    }
    item("node", "", 4, tres.node);
    item("billing", "", 5, static_cast<int64_t>(tres.billing + 0.5));
    if (tres.gpu > 0) {
        item("gres", "gpu", 1001, tres.gpu);
    }
    int id = 1002;
    for (const GresCount& gres : tres.gres) {
        item("gres", gres.name, id++, gres.count);
    }
    w.end_array();
}

// `cohort acct` prints a table of its own by default; as `sacct`, or with -o, -p, -P, -n or
// -X, sacct's columns.
int list_accounting(const Args& args, bool as_sacct) {
    CLI::App app{"Accounting records of jobs and steps (sacct)"};
    bool json = false;
    bool parsable = false;
    bool parsable2 = false;
    bool no_header = false;
    bool allocations = false;
    bool all_users = false;
    std::string users_text, accounts_text, states_text, jobs_text, start_text, end_text, format;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_option("-o,--format", format, "fields, e.g. JobID,JobName%30,State,Elapsed");
    app.add_flag("-p,--parsable", parsable, "fields separated by '|', one after the last too");
    app.add_flag("-P,--parsable2", parsable2, "fields separated by '|'");
    app.add_flag("-n,--noheader", no_header, "no header");
    app.add_flag("-X,--allocations", allocations, "jobs only, not their steps");
    app.add_option("-u,--user,--uid", users_text, "only these users' jobs, comma separated");
    app.add_option("-A,--accounts", accounts_text, "only jobs of these accounts, comma separated");
    app.add_flag("-a,--allusers", all_users,
                 "every user's jobs (the default for root; others see their own)");
    app.add_option("-s,--state", states_text, "only these states, e.g. CD,F");
    app.add_option("-j,--jobs", jobs_text, "only these job ids, comma separated");
    app.add_option("-S,--starttime", start_text,
                   "jobs active at or after this time (default: midnight, or any with --jobs)");
    app.add_option("-E,--endtime", end_text, "jobs submitted at or before this time");
    protocol::AcctQueryRequest request;
    app.add_flag("-D,--duplicates", request.attempts,
                 "also every earlier attempt of requeued jobs (NODE_FAIL, REQUEUED)");
    if (int rc = parse_args(app, "acct", args); rc >= 0) {
        return rc;
    }
    request.users = split_comma_list(users_text);
    request.accounts = split_comma_list(accounts_text);
    // As sacct: a user other than root lists their own jobs unless told otherwise.
    if (request.users.empty() && !all_users && getuid() != 0 && jobs_text.empty()) {
        request.users = {current_user_name()};
    }
    auto states = parse_job_states("--state", states_text);
    if (!states) {
        return report_error("acct", states.status());
    }
    request.states = *states;
    auto ids = parse_job_ids("--jobs", jobs_text);
    if (!ids) {
        return report_error("acct", ids.status());
    }
    request.job_ids = std::move(*ids);
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    // As sacct: today's jobs unless told otherwise; named jobs whenever they ran.
    const std::string since = !start_text.empty()       ? start_text
                              : request.job_ids.empty() ? "midnight"
                                                        : "";
    for (auto [option, text, bound] : {std::tuple{"--starttime", since, &request.since},
                                       std::tuple{"--endtime", end_text, &request.until}}) {
        if (text.empty()) {
            continue;
        }
        auto time = parse_report_time(text, now);
        if (!time) {
            return report_error("acct", time.status().with_context(option));
        }
        *bound = *time;
    }
    const bool sacct_form =
            as_sacct || !format.empty() || parsable || parsable2 || no_header || allocations;
    std::vector<AcctField> fields = default_acct_format();
    if (!format.empty()) {
        auto parsed = parse_acct_format(format);
        if (!parsed) {
            return report_error("acct", parsed.status());
        }
        fields = std::move(*parsed);
    }
    // The cluster's billing weights, for AllocTRES and ReqTRES.
    auto context = load_client_context();
    const BillingWeights weights = context ? context->config.billing_weights : BillingWeights{};
    const AcctStyle style = parsable2  ? AcctStyle::kParsable2
                            : parsable ? AcctStyle::kParsable
                                       : AcctStyle::kTable;
    std::optional<JsonPayloadStream> json_out;
    if (json) {
        json_out.emplace(std::cout, "jobs");
    }
    bool header_printed = false;
    Status listed = ask_job_list(request, [&](protocol::JobListReply& frame) {
        std::map<uint64_t, std::vector<const protocol::StepRecord*>> steps_of;
        for (const auto& step : frame.steps) {
            steps_of[step.job_id].push_back(&step);
        }
        if (!json && !header_printed && !(sacct_form && no_header)) {
            if (sacct_form) {
                for (const std::string& line : acct_header(fields, style)) {
                    std::cout << line << "\n";
                }
            } else {
                std::printf("%-12s %-10s %-9s %-8s %10s %8s %-19s %-19s %s\n", "JobID", "JobName",
                            "Partition", "User", "State", "ExitCode", "Start", "End", "NodeList");
            }
        }
        header_printed = true;
        for (size_t i = 0; i < frame.jobs.size(); ++i) {
            const protocol::JobRecord& job = frame.jobs[i];
            // An array's record shares its id with its first task, whose steps these are; a
            // requeued job's earlier attempts (-D) come before it, which lists the steps.
            const bool earlier_attempt = i + 1 < frame.jobs.size()
                                         && frame.jobs[i + 1].job_id == job.job_id
                                         && !frame.jobs[i + 1].is_array_remainder();
            static const std::vector<const protocol::StepRecord*> kNoSteps;
            const auto& steps =
                    job.is_array_remainder() || earlier_attempt ? kNoSteps : steps_of[job.job_id];
            if (json) {
                json_out->add([&](JsonWriter& w) {
                    w.begin_object();
                    write_job_fields(w, job);
                    w.key("tres").begin_object();
                    write_tres(w.key("allocated"), allocated_tres(job, weights));
                    write_tres(w.key("requested"), requested_tres(job, weights));
                    w.end_object();
                    w.key("steps").begin_array();
                    for (const protocol::StepRecord* step : steps) {
                        w.begin_object();
                        write_step_fields(w, *step, step_gpu_seconds(job, *step, now));
                        w.key("tres").begin_object();
                        write_tres(w.key("allocated"), step_tres(job, *step));
                        w.end_object().end_object();
                    }
                    w.end_array().end_object();
                });
                continue;
            }
            if (sacct_form) {
                std::cout << acct_line(fields, style, job, nullptr, now, weights) << "\n";
                for (const protocol::StepRecord* step : allocations ? kNoSteps : steps) {
                    std::cout << acct_line(fields, style, job, step, now, weights) << "\n";
                }
                continue;
            }
            print_acct_job(job);
            for (const protocol::StepRecord* step : steps) {
                print_acct_step(job, *step);
            }
        }
    });
    if (!listed) {
        return report_error("acct", listed);
    }
    if (json_out) {
        json_out->finish();
    }
    return 0;
}

}  // namespace

int cmd_acct(const Args& args) {
    return list_accounting(args, false);
}

int cmd_sacct(const Args& args) {
    return list_accounting(args, true);
}

}  // namespace cohort::cli
