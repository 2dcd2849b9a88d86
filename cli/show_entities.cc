#include "cli/show_entities.h"

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/client_context.h"
#include "cli/json_output.h"
#include "common/comma_list.h"
#include "common/hostlist.h"
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
              << "   Gres=" << (r.gpus > 0 ? node_gres(r) : "(null)") << "\n"
              << "   NodeAddr=" << node.address << " NodeHostName=" << node.name << "\n"
              << "   RealMemory=" << r.memory_mib << " AllocMem=" << node.memory_alloc_mib
              << " Sockets=" << r.sockets << "\n"
              << "   State=" << state_of(node) << "\n"
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

}  // namespace

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
        nlohmann::json nodes = nlohmann::json::array();
        for (const auto& node : shown) {
            nlohmann::json entry = node_to_json(node);
            entry["features"] = join_comma_list(
                    context->config.features_of(node.name, node.resources.gpu_type), "");
            nodes.push_back(std::move(entry));
        }
        std::cout << wrap_payload("nodes", nodes).dump(2) << "\n";
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
    nlohmann::json partitions = nlohmann::json::array();
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
        partitions.push_back(
                {{"name", partition.name},
                 {"nodes", compress_hostlist(partition.nodes)},
                 {"default", &partition == config.default_partition()},
                 {"max_time", partition.max_time_s < 0 ? -1 : partition.max_time_s / 60},
                 {"max_nodes", partition.max_nodes},
                 {"total_cpus", cpus},
                 {"total_nodes", partition.nodes.size()},
                 {"allowed_accounts", partition.allowed_accounts},
                 {"priority_tier", partition.priority_tier}});
    }
    if (json) {
        std::cout << wrap_payload("partitions", partitions).dump(2) << "\n";
    }
    return 0;
}

}  // namespace cohort::cli
