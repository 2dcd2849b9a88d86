#include "cli/usage_report.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include <fmt/format.h>
#include <pwd.h>

#include "cli/json_output.h"
#include "common/ascii_lower.h"
#include "common/begin_time.h"
#include "common/comma_list.h"

namespace cohort::cli {
namespace {

int64_t local_midnight(int64_t when) {
    std::time_t t = when;
    std::tm tm{};
    localtime_r(&t, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    return std::mktime(&tm);
}

std::string tres_name(ReportTres tres) {
    switch (tres) {
        case ReportTres::kCpu:
            return "cpu";
        case ReportTres::kGpu:
            return "gres/gpu";
        case ReportTres::kBilling:
            return "billing";
    }
    return "cpu";
}

double used_seconds(const protocol::UsageTotalEntry& entry, ReportTres tres) {
    switch (tres) {
        case ReportTres::kCpu:
            return entry.cpu_seconds;
        case ReportTres::kGpu:
            return entry.gpu_seconds;
        case ReportTres::kBilling:
            return entry.billing_seconds;
    }
    return 0;
}

// What the cluster could have given in the window: its CPUs (or GPUs) times the seconds.
// Billing is weighted per job, so its capacity is taken as the CPUs'.
double capacity_seconds(const protocol::UsageTotalsReply& totals, ReportTres tres) {
    const double seconds = static_cast<double>(totals.end - totals.start);
    const int64_t units = tres == ReportTres::kGpu ? totals.cluster_gpus : totals.cluster_cpus;
    return static_cast<double>(units) * seconds;
}

// sreport's names for format=, matched by any prefix, the first in sreport's order winning:
// "d" is Down, "r" Reported, "planned" PlannedDown; the Planned column is asked for as
// Reserved.
struct UtilizationFieldName {
    const char* name;
    UtilizationField field;
    const char* title;
    size_t width;
};

constexpr UtilizationFieldName kUtilizationFields[] = {
        {"Allocated", UtilizationField::kAllocated, "Allocated", 14},
        {"Cluster", UtilizationField::kCluster, "Cluster", 9},
        {"Down", UtilizationField::kDown, "Down", 10},
        {"Idle", UtilizationField::kIdle, "Idle", 14},
        {"OverCommitted", UtilizationField::kOverCommitted, "Over Comm", 9},
        {"PlannedDown", UtilizationField::kPlannedDown, "PLND Down", 10},
        {"Reported", UtilizationField::kReported, "Reported", 14},
        {"Reserved", UtilizationField::kPlanned, "Planned", 14},
        {"TresName", UtilizationField::kTresName, "TRES Name", 14},
};

const UtilizationFieldName& field_name(UtilizationField field) {
    for (const UtilizationFieldName& name : kUtilizationFields) {
        if (name.field == field) {
            return name;
        }
    }
    return kUtilizationFields[0];
}

Result<std::vector<UtilizationField>> parse_utilization_fields(const std::string& text) {
    std::vector<UtilizationField> fields;
    for (const std::string& item : split_comma_list(text)) {
        const std::string wanted = ascii_lower(item);
        const UtilizationFieldName* found = nullptr;
        for (const UtilizationFieldName& name : kUtilizationFields) {
            if (!wanted.empty() && ascii_lower(name.name).rfind(wanted, 0) == 0) {
                found = &name;
                break;
            }
        }
        if (found == nullptr) {
            return Status::invalid("report: format: unknown field '" + item
                                   + "' (accepted: Allocated, Cluster, Down, Idle, "
                                     "OverCommitted, PlannedDown, Reported, Reserved (the "
                                     "Planned column), TresName)");
        }
        fields.push_back(found->field);
    }
    return fields;
}

std::string amount(double seconds, double capacity, ReportUnit unit) {
    switch (unit) {
        case ReportUnit::kSeconds:
            return fmt::format("{}", static_cast<int64_t>(seconds));
        case ReportUnit::kMinutes:
            return fmt::format("{}", static_cast<int64_t>(seconds / 60));
        case ReportUnit::kHours:
            return fmt::format("{}", static_cast<int64_t>(seconds / 3600));
        case ReportUnit::kPercent:
            return fmt::format("{:.2f}%", capacity > 0 ? 100.0 * seconds / capacity : 0.0);
    }
    return "";
}

std::string unit_words(ReportUnit unit) {
    switch (unit) {
        case ReportUnit::kSeconds:
            return "Seconds";
        case ReportUnit::kMinutes:
            return "Minutes";
        case ReportUnit::kHours:
            return "Hours";
        case ReportUnit::kPercent:
            return "Percentage of Total";
    }
    return "";
}

std::string proper_name(const std::string& login) {
    passwd pw{};
    passwd* found = nullptr;
    char buffer[4096];
    if (getpwnam_r(login.c_str(), &pw, buffer, sizeof(buffer), &found) != 0 || found == nullptr
        || pw.pw_gecos == nullptr) {
        return "";
    }
    const std::string gecos = pw.pw_gecos;
    return gecos.substr(0, gecos.find(','));
}

struct TableColumn {
    std::string title;
    size_t width;
};

// sreport's layout: right-aligned columns under a dashed rule, or '|'-separated with -p/-P.
std::string render_table(const ReportRequest& request,
                         const std::vector<TableColumn>& columns,
                         const std::vector<std::vector<std::string>>& rows) {
    const bool parsable = request.parsable || request.parsable2;
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out;
        for (size_t i = 0; i < cells.size(); ++i) {
            if (parsable) {
                out += cells[i] + (request.parsable || i + 1 < cells.size() ? "|" : "");
            } else {
                out += fmt::format("{:>{}} ", cells[i], columns[i].width);
            }
        }
        return out + "\n";
    };
    std::string out;
    if (!request.no_header) {
        std::vector<std::string> titles;
        std::vector<std::string> rules;
        for (const TableColumn& column : columns) {
            titles.push_back(parsable ? column.title : column.title.substr(0, column.width));
            rules.push_back(std::string(column.width, '-'));
        }
        out += line(titles);
        if (!parsable) {
            out += line(rules);
        }
    }
    for (const auto& row : rows) {
        out += line(row);
    }
    return out;
}

std::vector<protocol::UsageTotalEntry> selected(const ReportRequest& request,
                                                const protocol::UsageTotalsReply& totals) {
    std::vector<protocol::UsageTotalEntry> out;
    for (const auto& entry : totals.totals) {
        const bool user_ok = request.users.empty()
                             || std::count(request.users.begin(), request.users.end(), entry.user);
        const bool account_ok =
                request.accounts.empty()
                || std::count(request.accounts.begin(), request.accounts.end(), entry.account);
        if (user_ok && account_ok) {
            out.push_back(entry);
        }
    }
    return out;
}

}  // namespace

Result<ReportUnit> parse_report_unit(const std::string& text) {
    const std::string unit = ascii_lower(text);
    if (unit == "seconds" || unit == "second" || unit == "s") {
        return ReportUnit::kSeconds;
    }
    if (unit == "minutes" || unit == "minute" || unit == "m") {
        return ReportUnit::kMinutes;
    }
    if (unit == "hours" || unit == "hour" || unit == "h") {
        return ReportUnit::kHours;
    }
    if (unit == "percent" || unit == "per" || unit == "%") {
        return ReportUnit::kPercent;
    }
    return Status::invalid("--time: invalid value '" + text
                           + "' (accepted: seconds, minutes, hours, percent)");
}

Result<std::vector<ReportTres>> parse_report_tres(const std::string& text) {
    std::vector<ReportTres> tres;
    for (const std::string& item : split_comma_list(ascii_lower(text))) {
        if (item == "cpu") {
            tres.push_back(ReportTres::kCpu);
        } else if (item == "gres/gpu" || item == "gpu") {
            tres.push_back(ReportTres::kGpu);
        } else if (item == "billing") {
            tres.push_back(ReportTres::kBilling);
        } else {
            return Status::invalid("--tres: invalid TRES '" + item
                                   + "' (accepted: cpu, gres/gpu, billing)");
        }
    }
    if (tres.empty()) {
        return Status::invalid("--tres: no TRES given (accepted: cpu, gres/gpu, billing)");
    }
    return tres;
}

Result<ReportRequest> parse_report_words(const std::vector<std::string>& words,
                                         int64_t now,
                                         ReportRequest request) {
    static const char* kAccepted =
            "accepted: cluster utilization, cluster AccountUtilizationByUser, user topusage";
    if (words.size() < 2) {
        return Status::invalid(std::string("report: name a report (") + kAccepted + ")");
    }
    const std::string entity = ascii_lower(words[0]);
    const std::string report = ascii_lower(words[1]);
    if (entity == "cluster" && report == "utilization") {
        request.kind = ReportKind::kClusterUtilization;
    } else if (entity == "cluster" && report == "accountutilizationbyuser") {
        request.kind = ReportKind::kAccountUtilizationByUser;
    } else if (entity == "user" && report == "topusage") {
        request.kind = ReportKind::kUserTopUsage;
    } else {
        return Status::invalid("report: unknown report '" + words[0] + " " + words[1] + "' ("
                               + kAccepted + ")");
    }
    const int64_t today = local_midnight(now);
    request.start = local_midnight(today - 12 * 3600);  // yesterday, whatever the DST shift
    request.end = today;
    for (size_t i = 2; i < words.size(); ++i) {
        const size_t eq = words[i].find('=');
        const std::string key = ascii_lower(words[i].substr(0, eq));
        const std::string value = eq == std::string::npos ? "" : words[i].substr(eq + 1);
        if (eq == std::string::npos || value.empty()) {
            return Status::invalid("report: '" + words[i]
                                   + "' is not KEY=VALUE (accepted: start=, end=, users=, "
                                     "accounts=, TopCount=)");
        }
        if (key == "start" || key == "end") {
            auto time = parse_report_time(value, now);
            if (!time) {
                return time.status().with_context("report: " + key);
            }
            (key == "start" ? request.start : request.end) = *time;
        } else if (key == "users" || key == "user") {
            request.users = split_comma_list(value);
        } else if (key == "accounts" || key == "account") {
            request.accounts = split_comma_list(value);
        } else if (key == "format" && request.kind == ReportKind::kClusterUtilization) {
            auto fields = parse_utilization_fields(value);
            if (!fields) {
                return fields.status();
            }
            request.fields = std::move(*fields);
        } else if (key == "topcount") {
            char* end = nullptr;
            const long count = std::strtol(value.c_str(), &end, 10);
            if (*end != '\0' || count < 1) {
                return Status::invalid("report: TopCount: invalid value '" + value
                                       + "' (accepted: 1 or more)");
            }
            request.top_count = static_cast<size_t>(count);
        } else {
            return Status::invalid("report: unknown key '" + words[i].substr(0, eq)
                                   + "' (accepted: start, end, users, accounts, TopCount, and "
                                     "format with cluster utilization)");
        }
    }
    if (request.end <= request.start) {
        return Status::invalid(
                fmt::format("report: end {} is not after start {} (accepted: an end "
                            "after the start)",
                            format_time(request.end), format_time(request.start)));
    }
    if (request.kind == ReportKind::kClusterUtilization
        && std::count(request.tres.begin(), request.tres.end(), ReportTres::kBilling)) {
        return Status::invalid(
                "report: cluster utilization counts cpu and gres/gpu (accepted: --tres "
                "cpu,gres/gpu)");
    }
    return request;
}

std::string render_report(const ReportRequest& request,
                          const protocol::UsageTotalsReply& totals,
                          const std::string& cluster) {
    const bool tres_column = request.tres != std::vector<ReportTres>{ReportTres::kCpu};
    const std::string window =
            fmt::format("{} - {}", format_time(totals.start), format_time(totals.end - 1));
    const std::string rule(80, '-');
    std::string title;
    std::vector<TableColumn> columns = {{"Cluster", 9}};
    std::vector<std::vector<std::string>> rows;
    const std::vector<protocol::UsageTotalEntry> entries = selected(request, totals);

    switch (request.kind) {
        case ReportKind::kClusterUtilization: {
            title = "Cluster Utilization " + window;
            std::vector<UtilizationField> fields = request.fields;
            if (fields.empty()) {
                fields = {UtilizationField::kCluster, UtilizationField::kAllocated,
                          UtilizationField::kDown,    UtilizationField::kPlannedDown,
                          UtilizationField::kIdle,    UtilizationField::kPlanned,
                          UtilizationField::kReported};
                if (tres_column) {
                    fields.insert(fields.begin() + 1, UtilizationField::kTresName);
                }
            }
            columns.clear();
            for (UtilizationField field : fields) {
                columns.push_back({field_name(field).title, field_name(field).width});
            }
            for (ReportTres tres : request.tres) {
                double used = 0;
                for (const auto& entry : entries) {
                    used += used_seconds(entry, tres);
                }
                const bool gpu = tres == ReportTres::kGpu;
                const double down = gpu ? totals.down_gpu_seconds : totals.down_cpu_seconds;
                const double planned_down =
                        gpu ? totals.planned_down_gpu_seconds : totals.planned_down_cpu_seconds;
                const double capacity = capacity_seconds(totals, tres);
                // The controller split the waits hour by hour: Planned is time each hour left
                // idle that eligible jobs waited for, OverCommitted the rest of their waiting.
                const double planned =
                        gpu ? totals.planned_gpu_seconds : totals.planned_cpu_seconds;
                const double over_committed =
                        gpu ? totals.overcommitted_gpu_seconds : totals.overcommitted_cpu_seconds;
                const double idle = std::max(capacity - used - down - planned_down - planned, 0.0);
                std::vector<std::string> row;
                for (UtilizationField field : fields) {
                    const ReportUnit unit = request.unit;
                    switch (field) {
                        case UtilizationField::kCluster:
                            row.push_back(cluster);
                            break;
                        case UtilizationField::kTresName:
                            row.push_back(tres_name(tres));
                            break;
                        case UtilizationField::kAllocated:
                            row.push_back(amount(used, capacity, unit));
                            break;
                        case UtilizationField::kDown:
                            row.push_back(amount(down, capacity, unit));
                            break;
                        case UtilizationField::kPlannedDown:
                            row.push_back(amount(planned_down, capacity, unit));
                            break;
                        case UtilizationField::kIdle:
                            row.push_back(amount(idle, capacity, unit));
                            break;
                        case UtilizationField::kPlanned:
                            row.push_back(amount(planned, capacity, unit));
                            break;
                        case UtilizationField::kOverCommitted:
                            row.push_back(amount(over_committed, capacity, unit));
                            break;
                        case UtilizationField::kReported:
                            row.push_back(amount(capacity, capacity, unit));
                            break;
                    }
                }
                rows.push_back(std::move(row));
            }
            break;
        }
        case ReportKind::kAccountUtilizationByUser: {
            title = fmt::format("Cluster/Account/User Utilization {} ({} secs)", window,
                                totals.end - totals.start);
            columns.insert(columns.end(), {{"Account", 15}, {"Login", 9}, {"Proper Name", 15}});
            if (tres_column) {
                columns.push_back({"TRES Name", 14});
            }
            columns.push_back({"Used", 10});
            std::map<std::string, std::vector<const protocol::UsageTotalEntry*>> by_account;
            for (const auto& entry : entries) {
                by_account[entry.account].push_back(&entry);
            }
            for (ReportTres tres : request.tres) {
                const double capacity = capacity_seconds(totals, tres);
                // Named, not a structured binding: row_of captures it (clang 14 cannot).
                for (const auto& account_users : by_account) {
                    const std::string& account = account_users.first;
                    const auto& users = account_users.second;
                    double account_used = 0;
                    for (const auto* entry : users) {
                        account_used += used_seconds(*entry, tres);
                    }
                    auto row_of = [&](const std::string& login, const std::string& name,
                                      double used) {
                        std::vector<std::string> row = {cluster, account, login, name};
                        if (tres_column) {
                            row.push_back(tres_name(tres));
                        }
                        row.push_back(amount(used, capacity, request.unit));
                        return row;
                    };
                    rows.push_back(row_of("", "", account_used));
                    for (const auto* entry : users) {
                        rows.push_back(row_of(entry->user, proper_name(entry->user),
                                              used_seconds(*entry, tres)));
                    }
                }
            }
            break;
        }
        case ReportKind::kUserTopUsage: {
            title = fmt::format("Top {} Users {} ({} secs)", request.top_count, window,
                                totals.end - totals.start);
            columns.insert(columns.end(), {{"Login", 9}, {"Proper Name", 15}, {"Account", 15}});
            if (tres_column) {
                columns.push_back({"TRES Name", 14});
            }
            columns.push_back({"Used", 10});
            for (ReportTres tres : request.tres) {
                struct UserUse {
                    double used = 0;
                    std::vector<std::string> accounts;
                };

                std::map<std::string, UserUse> by_user;
                for (const auto& entry : entries) {
                    UserUse& use = by_user[entry.user];
                    use.used += used_seconds(entry, tres);
                    use.accounts.push_back(entry.account);
                }
                std::vector<std::pair<std::string, UserUse>> ranked(by_user.begin(), by_user.end());
                std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
                    return a.second.used > b.second.used;
                });
                ranked.resize(std::min(ranked.size(), request.top_count));
                const double capacity = capacity_seconds(totals, tres);
                for (const auto& [user, use] : ranked) {
                    std::vector<std::string> row = {cluster, user, proper_name(user),
                                                    join_comma_list(use.accounts)};
                    if (tres_column) {
                        row.push_back(tres_name(tres));
                    }
                    row.push_back(amount(use.used, capacity, request.unit));
                    rows.push_back(std::move(row));
                }
            }
            break;
        }
    }
    std::string out;
    if (!request.no_header) {
        const std::string what = tres_column ? "TRES" : "CPU";
        out += rule + "\n" + title + "\n";
        out += request.unit == ReportUnit::kPercent
                       ? "Usage reported in " + unit_words(request.unit) + "\n"
                       : fmt::format("Usage reported in {} {}\n", what, unit_words(request.unit));
        out += rule + "\n";
    }
    return out + render_table(request, columns, rows);
}

}  // namespace cohort::cli
