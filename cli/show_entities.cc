#include "cli/show_entities.h"

#include <algorithm>
#include <ctime>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/client_context.h"
#include "cli/json_output.h"
#include "common/comma_list.h"
#include "common/hostlist.h"
#include "common/job_state.h"
#include "common/licenses.h"
#include "common/node_state.h"
#include "common/time_spec.h"

namespace cohort::cli {
namespace {

std::string state_of(const protocol::NodeInfo& node) {
    std::string state(node_state_name(node.state));
    if (node.drain) {
        state += node.jobs.empty() ? "+DRAIN" : "+DRAINING";
    }
    return state;
}

std::string limit_text(int64_t seconds) {
    return seconds < 0 ? "UNLIMITED" : format_duration(seconds);
}

std::string count_text(int64_t count) {
    return count <= 0 ? "UNLIMITED" : std::to_string(count);
}

void print_node(const ClusterConfig& config, const protocol::NodeInfo& node) {
    const protocol::NodeResources& r = node.resources;
    const std::string features =
            join_comma_list(config.features_of(node.name, node.resources.gpu_type), "(null)");
    std::cout << "NodeName=" << node.name
              << " CoresPerSocket=" << (r.sockets > 0 ? r.cores / r.sockets : r.cores) << "\n"
              << "   CPUAlloc=" << node.cpus_alloc << " CPUTot=" << r.cpus << "\n"
              << "   AvailableFeatures=" << features << "\n"
              << "   ActiveFeatures=" << features << "\n"
              << "   Gres=" << (node_gres(node).empty() ? "(null)" : node_gres(node)) << "\n"
              << "   NodeAddr=" << node.address << " NodeHostName=" << node.name << "\n"
              << "   RealMemory=" << r.memory_mib << " AllocMem=" << node.memory_alloc_mib
              << " Sockets=" << r.sockets << "\n"
              << "   State=" << state_of(node) << " ThreadsPerCore=" << r.threads_per_core() << "\n"
              << "   Partitions=" << join_comma_list(node.partitions, "(null)") << "\n"
              << "   LastBusyTime=" << format_time(node.last_heartbeat) << "\n";
    if (!node.reason.empty()) {
        std::cout << "   Reason=" << node.reason << " [" << node.reason_user << "@"
                  << format_time(node.reason_time) << "]\n";
    }
    std::cout << "\n";
}

void print_partition(const ClusterConfig& config,
                     const PartitionConfig& partition,
                     int64_t total_cpus) {
    std::cout << "PartitionName=" << partition.name << "\n"
              << "   AllowAccounts=" << join_comma_list(partition.allowed_accounts, "ALL")
              << " Default=" << (&partition == config.default_partition() ? "YES" : "NO") << "\n"
              << "   DefaultTime="
              << (partition.default_time_s < 0 ? "NONE" : format_duration(partition.default_time_s))
              << " MaxNodes=" << count_text(partition.max_nodes)
              << " MaxTime=" << limit_text(partition.max_time_s) << "\n"
              << "   Nodes=" << compress_hostlist(partition.nodes) << "\n"
              << "   PriorityTier=" << partition.priority_tier << " OverSubscribe=NO\n"
              << "   State=UP TotalCPUs=" << total_cpus << " TotalNodes=" << partition.nodes.size()
              << "\n"
              << "   DefMemPerCPU=" << count_text(partition.def_mem_per_cpu_mib)
              << " MaxMemPerCPU=" << count_text(partition.max_mem_per_cpu_mib) << "\n\n";
}

void print_reservation(const protocol::ReservationRecord& r,
                       const std::vector<protocol::NodeInfo>& nodes,
                       int64_t now) {
    std::vector<std::string> flags;
    if (r.maintenance) {
        flags.emplace_back("MAINT");
    }
    if (r.ignore_jobs) {
        flags.emplace_back("IGNORE_JOBS");
    }
    int64_t cores = 0;
    int64_t cpus = 0;
    for (const protocol::NodeInfo& node : nodes) {
        if (std::find(r.nodes.begin(), r.nodes.end(), node.name) != r.nodes.end()) {
            cores += node.resources.cores > 0 ? node.resources.cores : node.resources.cpus;
            cpus += node.resources.cpus;
        }
    }
    const bool active = r.start_time <= now && now < r.end_time;
    std::cout << "ReservationName=" << r.name << " StartTime=" << format_time(r.start_time)
              << " EndTime=" << format_time(r.end_time)
              << " Duration=" << format_clock(r.end_time - r.start_time) << "\n"
              << "   Nodes=" << compress_hostlist(r.nodes) << " NodeCnt=" << r.nodes.size()
              << " CoreCnt=" << cores
              << " Features=(null) PartitionName=(null) Flags=" << join_comma_list(flags, "")
              << "\n"
              << "   TRES=cpu=" << cpus << "\n"
              << "   Users=" << join_comma_list(r.users, "(null)")
              << " Groups=(null) Accounts=" << join_comma_list(r.accounts, "(null)")
              << " Licenses=(null) State=" << (active ? "ACTIVE" : "INACTIVE")
              << " BurstBuffer=(null) Watts=n/a\n"
              << "   MaxStartDelay=(null)\n\n";
}

nlohmann::json reservation_to_json(const protocol::ReservationRecord& r) {
    return {{"name", r.name},
            {"start_time", r.start_time},
            {"end_time", r.end_time},
            {"node_list", compress_hostlist(r.nodes)},
            {"node_count", r.nodes.size()},
            {"users", r.users},
            {"accounts", r.accounts},
            {"maintenance", r.maintenance},
            {"ignore_jobs", r.ignore_jobs}};
}

std::string null_if_empty(const std::string& text) {
    return text.empty() ? "(null)" : text;
}

std::string joined_codes(const std::vector<int32_t>& codes) {
    std::vector<std::string> words;
    for (int32_t code : codes) {
        words.push_back(std::to_string(code));
    }
    return join_comma_list(words, "(null)");
}

// Where a URI is shown, its password is not.
std::string without_password(const std::string& uri) {
    const size_t scheme = uri.find("://");
    const size_t at = uri.find('@');
    if (scheme == std::string::npos || at == std::string::npos) {
        return uri;
    }
    const size_t colon = uri.find(':', scheme + 3);
    return colon != std::string::npos && colon < at
                   ? uri.substr(0, colon) + ":****" + uri.substr(at)
                   : uri;
}

}  // namespace

int show_config() {
    auto context = load_client_context();
    if (!context) {
        return report_error("show", context.status());
    }
    const ClusterConfig& c = context->config;
    const PriorityConfig& priority = c.policy.priority;
    std::vector<std::string> licenses;
    for (const auto& [name, count] : c.licenses) {
        licenses.push_back(name + ":" + std::to_string(count));
    }
    const bool postgres_accounting = c.accounting.rfind("postgres", 0) == 0;
    std::vector<std::pair<std::string, std::string>> entries = {
            {"AccountingStorageLoc", c.accounting.empty() ? c.state_dir + "/accounting.db"
                                                          : without_password(c.accounting)},
            {"AccountingStorageType",
             postgres_accounting ? "accounting_storage/postgresql" : "accounting_storage/sqlite"},
            {"AuthType", c.auth == "munge" ? "auth/munge" : "auth/cluster_key"},
            {"ClusterName", c.cluster_name},
            {"Epilog", null_if_empty(c.epilog)},
            {"JobRequeue", c.job_requeue ? "1" : "0"},
            {"KillWait", fmt::format("{} sec", c.kill_wait_s)},
            {"Licenses", join_comma_list(licenses, "(null)")},
            {"MailProg", c.mail_program},
            {"MaxArraySize", std::to_string(c.max_array_size)},
            {"PriorityDecayHalfLife", format_clock(priority.decay_half_life_s)},
            {"PriorityMaxAge", format_clock(priority.max_age_s)},
            {"PriorityType", "priority/multifactor"},
            {"PriorityWeightAge", std::to_string(priority.weight_age)},
            {"PriorityWeightFairShare", std::to_string(priority.weight_fairshare)},
            {"PriorityWeightJobSize", std::to_string(priority.weight_job_size)},
            {"PriorityWeightPartition", std::to_string(priority.weight_partition)},
            {"PriorityWeightQOS", std::to_string(priority.weight_qos)},
            {"PrivateData", join_comma_list(c.private_data, "none")},
            {"Prolog", null_if_empty(c.prolog)},
            {"PrologEpilogTimeout", std::to_string(c.prolog_epilog_timeout_s)},
            {"RequeueExit", joined_codes(c.requeue_exit)},
            {"RequeueExitHold", joined_codes(c.requeue_exit_hold)},
            {"ReturnToService", std::to_string(c.return_to_service)},
            {"SchedulerType",
             c.backfill == BackfillPolicy::kNone ? "sched/builtin" : "sched/backfill"},
            {"SlurmctldHost[0]", c.controller_host},
    };
    for (size_t i = 0; i < c.controller_backups.size(); ++i) {
        entries.emplace_back(fmt::format("SlurmctldHost[{}]", i + 1), c.controller_backups[i].host);
    }
    entries.insert(
            entries.end(),
            {{"SlurmctldPort", std::to_string(c.controller_port)},
             {"SlurmdTimeout", fmt::format("{} sec", c.effective_node_timeout_ms() / 1000)},
             {"StateSaveLocation", c.state.empty() ? c.state_dir : without_password(c.state)},
             {"TRESBillingWeights", null_if_empty(c.tres_billing_weights)}});
    std::cout << "Configuration data as of " << format_time(std::time(nullptr)) << "\n";
    for (const auto& [key, value] : entries) {
        std::cout << fmt::format("{:<23} = {}\n", key, value);
    }
    const bool up = static_cast<bool>(connect_controller(*context));
    std::cout << "\nCohortctld(primary) at " << c.controller_host << " is " << (up ? "UP" : "DOWN")
              << "\n";
    return 0;
}

int show_reservations(const std::string& name, bool json) {
    auto reply = ask<protocol::ReservationListReply>(protocol::ReservationQueryRequest{});
    if (!reply) {
        return report_error("show", reply.status());
    }
    std::vector<protocol::ReservationRecord> shown;
    for (const protocol::ReservationRecord& r : reply->reservations) {
        if (name.empty() || r.name == name) {
            shown.push_back(r);
        }
    }
    if (json) {
        nlohmann::json items = nlohmann::json::array();
        for (const auto& r : shown) {
            items.push_back(reservation_to_json(r));
        }
        std::cout << nlohmann::json{{"reservations", items}}.dump(2) << "\n";
        return 0;
    }
    if (!name.empty() && shown.empty()) {  // scontrol's words
        std::cout << "Reservation " << name << " not found\n";
        return 1;
    }
    if (shown.empty()) {
        std::cout << "No reservations in the system\n";
        return 0;
    }
    auto nodes = ask<protocol::NodeListReply>(protocol::QueryNodesRequest{});
    if (!nodes) {
        return report_error("show", nodes.status());
    }
    const auto now = static_cast<int64_t>(std::time(nullptr));
    for (const auto& r : shown) {
        print_reservation(r, nodes->nodes, now);
    }
    return 0;
}

int show_licenses(const std::string& name) {
    auto context = load_client_context();
    if (!context) {
        return report_error("show", context.status());
    }
    const std::map<std::string, int64_t>& totals = context->config.licenses;
    if (!name.empty() && totals.count(name) == 0) {
        std::vector<std::string> names;
        for (const auto& [license, total] : totals) {
            names.push_back(license);
        }
        return report_error("show", Status::not_found("license '" + name + "' not found (accepted: "
                                                      + join_comma_list(names, "none") + ")"));
    }
    if (totals.empty()) {
        std::cout << "No licenses configured in Slurm.\n";
        return 0;
    }
    // Held by the running and completing jobs that asked for them, as the scheduler counts.
    std::map<std::string, int64_t> used;
    protocol::QueryJobsRequest holders;
    holders.states = {JobState::kRunning, JobState::kCompleting};
    Status listed = ask_job_list(holders, [&used](protocol::JobListReply& frame) {
        for (const protocol::JobRecord& job : frame.jobs) {
            auto licenses = parse_licenses(job.spec.licenses);
            for (const LicenseRequest& license :
                 licenses ? *licenses : std::vector<LicenseRequest>{}) {
                used[license.name] += license.count;
            }
        }
    });
    if (!listed) {
        return report_error("show", listed);
    }
    for (const auto& [license, total] : totals) {
        if (!name.empty() && license != name) {
            continue;
        }
        const int64_t in_use = used[license];
        std::cout << "LicenseName=" << license << "\n    Total=" << total << " Used=" << in_use
                  << " Free=" << std::max<int64_t>(total - in_use, 0) << " Reserved=0 Remote=no\n";
    }
    return 0;
}

int show_nodes(const std::string& names, bool json) {
    auto context = load_client_context();
    if (!context) {
        return report_error("show", context.status());
    }
    std::vector<std::string> wanted;
    if (!names.empty()) {
        auto expanded = expand_hostlist(names);
        if (!expanded) {
            return report_error("show", expanded.status().with_context("node"));
        }
        wanted = std::move(*expanded);
    }
    auto reply = ask<protocol::NodeListReply>(protocol::QueryNodesRequest{});
    if (!reply) {
        return report_error("show", reply.status());
    }
    std::vector<protocol::NodeInfo> shown;
    for (const std::string& name : wanted) {
        auto it = std::find_if(reply->nodes.begin(), reply->nodes.end(),
                               [&](const protocol::NodeInfo& node) { return node.name == name; });
        if (it == reply->nodes.end()) {
            return report_error("show", Status::not_found("node '" + name + "' not found"));
        }
        shown.push_back(*it);
    }
    if (wanted.empty()) {
        shown = reply->nodes;
    }
    if (json) {
        JsonPayloadStream json_out(std::cout, "nodes");
        for (const auto& node : shown) {
            json_out.add([&](JsonWriter& w) {
                write_node_fields(w.begin_object(), node);
                w.member("features", join_comma_list(context->config.features_of(
                                                             node.name, node.resources.gpu_type),
                                                     ""));
                w.end_object();
            });
        }
        json_out.finish();
        return 0;
    }
    for (const auto& node : shown) {
        print_node(context->config, node);
    }
    return 0;
}

int show_partitions(const std::string& name, bool json) {
    auto context = load_client_context();
    if (!context) {
        return report_error("show", context.status());
    }
    const ClusterConfig& config = context->config;
    if (!name.empty() && config.find_partition(name) == nullptr) {
        return report_error("show", Status::not_found("partition '" + name + "' not found"));
    }
    auto reply = ask<protocol::NodeListReply>(protocol::QueryNodesRequest{});
    if (!reply) {
        return report_error("show", reply.status());
    }
    std::optional<JsonPayloadStream> json_out;
    if (json) {
        json_out.emplace(std::cout, "partitions");
    }
    for (const PartitionConfig& partition : config.partitions) {
        if (!name.empty() && partition.name != name) {
            continue;
        }
        int64_t cpus = 0;
        for (const auto& node : reply->nodes) {
            if (std::find(partition.nodes.begin(), partition.nodes.end(), node.name)
                != partition.nodes.end()) {
                cpus += node.resources.cpus;
            }
        }
        if (!json) {
            print_partition(config, partition, cpus);
            continue;
        }
        json_out->add([&](JsonWriter& w) {
            w.begin_object()
                    .member("name", partition.name)
                    .member("nodes", compress_hostlist(partition.nodes))
                    .member("default", &partition == config.default_partition())
                    .member("max_time", partition.max_time_s < 0 ? -1 : partition.max_time_s / 60)
                    .member("max_nodes", partition.max_nodes)
                    .member("total_cpus", cpus)
                    .member("total_nodes", partition.nodes.size())
                    .key("allowed_accounts")
                    .begin_array();
            for (const std::string& account : partition.allowed_accounts) {
                w.value(account);
            }
            w.end_array().member("priority_tier", partition.priority_tier).end_object();
        });
    }
    if (json_out) {
        json_out->finish();
    }
    return 0;
}

}  // namespace cohort::cli
