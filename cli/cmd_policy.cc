// cohort priority (sprio) and cohort reservation (scontrol create/show/delete reservation).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/show_entities.h"
#include "common/begin_time.h"
#include "common/comma_list.h"
#include "common/hostlist.h"
#include "common/time_spec.h"

namespace cohort::cli {
namespace {

long long weighted(double factor, int64_t weight) {
    return std::llround(factor * static_cast<double>(weight));
}

struct CreateOptions {
    std::string name, start = "now", end, duration, nodes, users, accounts, flags;
    uint32_t node_count = 0;
};

Result<protocol::ReservationCreateRequest> create_request(const CreateOptions& o) {
    protocol::ReservationCreateRequest request;
    protocol::ReservationRecord& r = request.reservation;
    r.name = o.name;
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    auto start = parse_begin_time(o.start, now);
    if (!start) {
        return start.status().with_context("--start");
    }
    r.start_time = *start;
    if (o.end.empty() == o.duration.empty()) {
        return Status::invalid("--end/--duration: give exactly one of them");
    }
    if (!o.end.empty()) {
        auto end = parse_begin_time(o.end, now);
        if (!end) {
            return end.status().with_context("--end");
        }
        r.end_time = *end;
    } else {
        auto duration = parse_time_limit(o.duration);
        if (!duration || *duration <= 0) {
            return Status::invalid("--duration: invalid value '" + o.duration
                                   + "' (accepted: a positive time such as 2:00:00 or 1-00:00:00)");
        }
        r.end_time = r.start_time + *duration;
    }
    if (o.nodes.empty() == (o.node_count == 0)) {
        return Status::invalid("--nodes/--node-count: give exactly one of them");
    }
    if (!o.nodes.empty()) {
        auto nodes = expand_hostlist(o.nodes);
        if (!nodes) {
            return nodes.status().with_context("--nodes");
        }
        r.nodes = std::move(*nodes);
    }
    request.node_count = o.node_count;
    r.users = split_comma_list(o.users);
    r.accounts = split_comma_list(o.accounts);
    for (const auto& flag : split_comma_list(o.flags)) {
        if (flag == "maintenance" || flag == "maint") {
            r.maintenance = true;
        } else if (flag == "ignore_jobs") {
            r.ignore_jobs = true;
        } else {
            return Status::invalid("--flags: invalid value '" + flag
                                   + "' (accepted: maintenance, ignore_jobs)");
        }
    }
    return request;
}

}  // namespace

int cmd_priority(const Args& args) {
    CLI::App app{"Show the priority factors of pending jobs (sprio): cohort priority [ID...]"};
    std::vector<uint64_t> ids;
    bool json = false;
    app.add_option("-j,--jobs,ids", ids, "job ids (default: every pending job)")->delimiter(',');
    app.add_flag("--json", json, "print one JSON object");
    if (int rc = parse_args(app, "priority", args); rc >= 0) {
        return rc;
    }
    auto reply = ask<protocol::PriorityListReply>(protocol::PriorityQueryRequest{ids});
    if (!reply) {
        return report_error("priority", reply.status());
    }
    if (json) {
        nlohmann::json jobs = nlohmann::json::array();
        for (const auto& j : reply->jobs) {
            jobs.push_back({{"job_id", j.display_id},
                            {"user", j.user},
                            {"account", j.account},
                            {"partition", j.partition},
                            {"qos", j.qos},
                            {"priority", j.priority},
                            {"nice", j.nice},
                            {"factors",
                             {{"age", j.age},
                              {"fairshare", j.fairshare},
                              {"job_size", j.job_size},
                              {"partition", j.partition_factor},
                              {"qos", j.qos_factor}}},
                            {"weights",
                             {{"age", j.weight_age},
                              {"fairshare", j.weight_fairshare},
                              {"job_size", j.weight_job_size},
                              {"partition", j.weight_partition},
                              {"qos", j.weight_qos}}}});
        }
        std::cout << nlohmann::json{{"jobs", jobs}}.dump(2) << "\n";
        return 0;
    }
    // As sprio: each factor already multiplied by its weight, so the columns add up.
    std::printf("%-12s %-10s %-10s %-10s %10s %8s %9s %8s %9s %7s %6s\n", "JOBID", "PARTITION",
                "USER", "ACCOUNT", "PRIORITY", "AGE", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS",
                "NICE");
    for (const auto& j : reply->jobs) {
        std::printf("%-12s %-10s %-10s %-10s %10lld %8lld %9lld %8lld %9lld %7lld %6d\n",
                    j.display_id.c_str(), j.partition.c_str(), j.user.c_str(), j.account.c_str(),
                    static_cast<long long>(j.priority), weighted(j.age, j.weight_age),
                    weighted(j.fairshare, j.weight_fairshare),
                    weighted(j.job_size, j.weight_job_size),
                    weighted(j.partition_factor, j.weight_partition),
                    weighted(j.qos_factor, j.weight_qos), j.nice);
    }
    return 0;
}

int cmd_reservation(const Args& args) {
    CLI::App app{"Advance reservations: cohort reservation create|list|delete"};
    app.require_subcommand(1);
    CreateOptions o;
    CLI::App* create = app.add_subcommand("create", "reserve nodes for users or accounts");
    create->add_option("--name", o.name, "reservation name")->required();
    create->add_option("--start", o.start, "start: now, now+1hour, 16:00, 2026-12-25T08:00");
    create->add_option("--end", o.end, "end, in the same forms as --start");
    create->add_option("--duration", o.duration, "length: M, H:M:S, D-H:M:S");
    create->add_option("--nodes", o.nodes, "node list, e.g. node[1-4]");
    create->add_option("--node-count", o.node_count, "or how many nodes to pick");
    create->add_option("--users", o.users, "users allowed, comma-separated");
    create->add_option("--accounts", o.accounts, "accounts allowed, comma-separated");
    create->add_option("--flags", o.flags, "maintenance, ignore_jobs");
    bool json = false;
    CLI::App* list = app.add_subcommand("list", "list reservations (scontrol show res)");
    list->add_flag("--json", json, "print one JSON object");
    std::string name;
    CLI::App* remove = app.add_subcommand("delete", "delete a reservation");
    remove->add_option("name", name, "reservation name")->required();
    if (int rc = parse_args(app, "reservation", args); rc >= 0) {
        return rc;
    }
    if (create->parsed()) {
        auto request = create_request(o);
        if (!request) {
            return report_error("reservation", request.status());
        }
        auto reply = ask<protocol::ReservationListReply>(*request);
        if (!reply) {
            return report_error("reservation", reply.status());
        }
        for (const auto& r : reply->reservations) {
            std::printf("Reservation created: %s\n", r.name.c_str());
        }
        return show_reservations(
                reply->reservations.empty() ? "" : reply->reservations.front().name, false);
    }
    if (remove->parsed()) {
        auto reply = ask<protocol::AckReply>(protocol::ReservationDeleteRequest{name});
        if (!reply) {
            return report_error("reservation", reply.status());
        }
        std::printf("%s\n", reply->message.c_str());
        return 0;
    }
    return show_reservations("", json);
}

}  // namespace cohort::cli
