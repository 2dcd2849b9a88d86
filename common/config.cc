// Reading and writing the cluster configuration file.
#include "common/config.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "common/hostlist.h"
#include "common/time_spec.h"

namespace cohort {
namespace {

using nlohmann::json;

Result<std::vector<std::string>> read_hosts(const json& object, const char* key) {
    if (!object.contains(key)) {
        return std::vector<std::string>{};
    }
    if (!object.at(key).is_string()) {
        return Status::invalid(std::string(key) + ": expected a hostlist string such as node[1-4]");
    }
    auto hosts = expand_hostlist(object.at(key).get<std::string>());
    if (!hosts) {
        return hosts.status().with_context(key);
    }
    return hosts;
}

Result<PartitionConfig> read_partition(const json& object) {
    PartitionConfig partition;
    partition.name = object.value("name", "");
    if (partition.name.empty()) {
        return Status::invalid("partitions[].name: missing (every partition needs a name)");
    }
    auto nodes = read_hosts(object, "nodes");
    if (!nodes) {
        return nodes.status().with_context("partition " + partition.name);
    }
    partition.nodes = std::move(*nodes);
    partition.is_default = object.value("default", false);
    auto max_time = read_duration(object, "max_time", -1);
    auto default_time = read_duration(object, "default_time", -1);
    if (!max_time || !default_time) {
        return (!max_time ? max_time.status() : default_time.status())
                .with_context("partition " + partition.name);
    }
    partition.max_time_s = *max_time;
    partition.default_time_s = *default_time;
    partition.max_nodes = object.value("max_nodes", partition.max_nodes);
    partition.allowed_accounts = object.value("allowed_accounts", std::vector<std::string>{});
    partition.priority_tier = object.value("priority_tier", partition.priority_tier);
    partition.def_mem_per_cpu_mib = object.value("def_mem_per_cpu", int64_t{0});
    partition.max_mem_per_cpu_mib = object.value("max_mem_per_cpu", int64_t{0});
    if (partition.max_nodes == 0 || partition.max_nodes < -1 || partition.priority_tier < 0
        || partition.def_mem_per_cpu_mib < 0 || partition.max_mem_per_cpu_mib < 0) {
        return Status::invalid("partition " + partition.name
                + ": max_nodes, priority_tier, def_mem_per_cpu and max_mem_per_cpu must be "
                  "non-negative (max_nodes: -1 or at least 1)");
    }
    return partition;
}

// "node_features": {"node[1-2]": ["a100", "ib"], ...}: hostlists of configured nodes.
Result<std::map<std::string, std::vector<std::string>>> read_node_features(
        const json& doc, const std::vector<std::string>& nodes) {
    std::map<std::string, std::vector<std::string>> out;
    if (!doc.contains("node_features")) {
        return out;
    }
    const json& object = doc.at("node_features");
    if (!object.is_object()) {
        return Status::invalid(
                "node_features: expected an object of hostlist: [features], e.g. "
                "{\"node[1-2]\": [\"a100\", \"ib\"]}");
    }
    for (const auto& [hosts_text, features] : object.items()) {
        auto hosts = expand_hostlist(hosts_text);
        if (!hosts) {
            return hosts.status().with_context("node_features");
        }
        if (!features.is_array()
            || !std::all_of(features.begin(), features.end(), [](const json& f) {
                   return f.is_string() && !f.get<std::string>().empty();
               })) {
            return Status::invalid("node_features: " + hosts_text + ": " + features.dump()
                                   + " (accepted: a list of feature names)");
        }
        for (const std::string& host : *hosts) {
            if (std::find(nodes.begin(), nodes.end(), host) == nodes.end()) {
                return Status::invalid("node_features: node '" + host
                                       + "' is not in the cluster (accepted: nodes listed under "
                                         "nodes)");
            }
            auto& list = out[host];
            for (const json& feature : features) {
                list.push_back(feature.get<std::string>());
            }
        }
    }
    return out;
}

// "node_gres": {"node[1-4]": {"nvme": 20}, ...}: countable resources of configured nodes,
// as Slurm's Gres= on a node line. GPUs are not declared here: each agent discovers its own.
Result<std::map<std::string, std::vector<GresCount>>> read_node_gres(
        const json& doc, const std::vector<std::string>& nodes) {
    std::map<std::string, std::vector<GresCount>> out;
    if (!doc.contains("node_gres")) {
        return out;
    }
    const json& object = doc.at("node_gres");
    const std::string accepted =
            "an object of hostlist: {name: count}, e.g. {\"node[1-2]\": {\"nvme\": 20}}";
    if (!object.is_object()) {
        return Status::invalid("node_gres: expected " + accepted);
    }
    for (const auto& [hosts_text, counts] : object.items()) {
        auto hosts = expand_hostlist(hosts_text);
        if (!hosts) {
            return hosts.status().with_context("node_gres");
        }
        if (!counts.is_object()) {
            return Status::invalid("node_gres: " + hosts_text + ": " + counts.dump()
                                   + " (accepted: " + accepted + ")");
        }
        std::vector<GresCount> declared;
        for (const auto& [name, count] : counts.items()) {
            if (!count.is_number_integer() || count.get<int64_t>() < 0
                || count.get<int64_t>() > kMaxGresCount) {
                return Status::invalid("node_gres: " + hosts_text + ": " + name + ": invalid count "
                                       + count.dump() + " (accepted: 0 to "
                                       + std::to_string(kMaxGresCount) + ")");
            }
            if (name == "gpu") {
                return Status::invalid("node_gres: " + hosts_text
                                       + ": gpu (accepted: other resources; each node's agent "
                                         "discovers its GPUs)");
            }
            auto parsed = parse_generic_gres("node_gres", name);
            if (!parsed) {
                return parsed.status();
            }
            declared.push_back({name, count.get<int64_t>()});
        }
        for (const std::string& host : *hosts) {
            if (std::find(nodes.begin(), nodes.end(), host) == nodes.end()) {
                return Status::invalid("node_gres: node '" + host
                                       + "' is not in the cluster (accepted: nodes listed under "
                                         "nodes)");
            }
            out[host] = declared;
        }
    }
    return out;
}

// "licenses": {"matlab": 4, ...}.
Result<std::map<std::string, int64_t>> read_licenses(const json& doc) {
    std::map<std::string, int64_t> out;
    if (!doc.contains("licenses")) {
        return out;
    }
    const json& object = doc.at("licenses");
    if (!object.is_object()) {
        return Status::invalid("licenses: expected an object of name: count, e.g. {\"matlab\": 4}");
    }
    for (const auto& [name, count] : object.items()) {
        if (!count.is_number_integer() || count.get<int64_t>() < 0) {
            return Status::invalid("licenses: " + name + ": invalid count " + count.dump()
                                   + " (accepted: 0 or more)");
        }
        out[name] = count.get<int64_t>();
    }
    return out;
}

Result<ClusterConfig> parse_config(const json& doc) {
    ClusterConfig config;
    config.cluster_name = doc.value("cluster_name", config.cluster_name);
    if (doc.contains("controller")) {
        const json& ctl = doc.at("controller");
        config.controller_host = ctl.value("host", config.controller_host);
        int port = ctl.value("port", static_cast<int>(config.controller_port));
        if (port <= 0 || port > 65535) {
            return Status::invalid(
                    fmt::format("controller.port: invalid value {} (accepted: 1-65535)", port));
        }
        config.controller_port = static_cast<uint16_t>(port);
        for (const json& backup : ctl.value("backups", json::array())) {
            const int backup_port = backup.value("port", 0);
            const std::string host = backup.value("host", "");
            if (host.empty() || backup_port <= 0 || backup_port > 65535) {
                return Status::invalid(fmt::format(
                        "controller.backups: invalid entry {} (accepted: {{\"host\": NAME, "
                        "\"port\": 1-65535}})",
                        backup.dump()));
            }
            config.controller_backups.push_back({host, static_cast<uint16_t>(backup_port)});
        }
    }
    config.key_file = doc.value("key_file", "");
    config.auth = doc.value("auth", config.auth);
    if (config.auth != "cluster_key" && config.auth != "munge") {
        return Status::invalid("auth: invalid value '" + config.auth
                               + "' (accepted: cluster_key, munge)");
    }
    config.munge_socket = doc.value("munge_socket", config.munge_socket);
    config.daemon_user = doc.value("daemon_user", config.daemon_user);
    config.operators = doc.value("operators", config.operators);
    config.admins = doc.value("admins", config.admins);
    config.private_data = doc.value("private_data", config.private_data);
    config.cgroup = doc.value("cgroup", config.cgroup);
    if (config.cgroup != "auto" && config.cgroup != "v1" && config.cgroup != "v2"
        && config.cgroup != "none") {
        return Status::invalid("cgroup: invalid value '" + config.cgroup
                               + "' (accepted: auto, v1, v2, none)");
    }
    config.job_pids_max = doc.value("job_pids_max", config.job_pids_max);
    if (config.job_pids_max < 0) {
        return Status::invalid(
                fmt::format("job_pids_max: invalid value '{}' (accepted: 0 for no cap, or a count)",
                            config.job_pids_max));
    }
    config.gpu_device_files = doc.value("gpu_device_files", config.gpu_device_files);
    if (!config.gpu_device_files.empty()) {
        auto files = expand_hostlist(config.gpu_device_files);
        if (!files || std::any_of(files->begin(), files->end(), [](const std::string& file) {
                return file.front() != '/';
            })) {
            return Status::invalid("gpu_device_files: invalid value '" + config.gpu_device_files
                                   + "' (accepted: absolute paths in hostlist form, e.g. "
                                     "/dev/nvidia[0-7])");
        }
    }
    for (auto [key, program] : {std::pair{"prolog", &config.prolog}, {"epilog", &config.epilog}}) {
        *program = doc.value(key, *program);
        if (!program->empty() && program->front() != '/') {
            return Status::invalid(fmt::format(
                    "{}: invalid value '{}' (accepted: an absolute path, or empty for none)", key,
                    *program));
        }
    }
    config.prolog_epilog_timeout_s =
            doc.value("prolog_epilog_timeout_s", config.prolog_epilog_timeout_s);
    if (config.prolog_epilog_timeout_s < 1) {
        return Status::invalid(
                fmt::format("prolog_epilog_timeout_s: invalid value '{}' (accepted: 1 or more)",
                            config.prolog_epilog_timeout_s));
    }
    for (const std::string& what : config.private_data) {
        if (what != "jobs") {
            return Status::invalid("private_data: invalid value '" + what + "' (accepted: jobs)");
        }
    }
    config.state_dir = doc.value("state_dir", "");
    config.heartbeat_interval_ms = doc.value("heartbeat_interval_ms", config.heartbeat_interval_ms);
    if (config.heartbeat_interval_ms < 100) {
        return Status::invalid(
                fmt::format("heartbeat_interval_ms: invalid value '{}' (accepted: 100 or more)",
                            config.heartbeat_interval_ms));
    }
    config.node_timeout_ms = doc.value("node_timeout_ms", config.node_timeout_ms);
    if (config.node_timeout_ms < 2 * config.heartbeat_interval_ms) {
        return Status::invalid(fmt::format(
                "node_timeout_ms: invalid value '{}' (accepted: twice heartbeat_interval_ms or "
                "more, {} or more)",
                config.node_timeout_ms, 2 * config.heartbeat_interval_ms));
    }
    config.max_heartbeats_per_s = doc.value("max_heartbeats_per_s", config.max_heartbeats_per_s);
    if (config.max_heartbeats_per_s < 1) {
        return Status::invalid(
                fmt::format("max_heartbeats_per_s: invalid value '{}' (accepted: 1 or more)",
                            config.max_heartbeats_per_s));
    }
    config.kill_wait_s = doc.value("kill_wait_s", config.kill_wait_s);
    config.launch_fanout = doc.value("launch_fanout", config.launch_fanout);
    if (config.launch_fanout < 1) {
        return Status::invalid(fmt::format(
                "launch_fanout: invalid value '{}' (accepted: 1 or more)", config.launch_fanout));
    }
    config.collective_fanout = doc.value("collective_fanout", config.collective_fanout);
    if (config.collective_fanout < 1) {
        return Status::invalid(
                fmt::format("collective_fanout: invalid value '{}' (accepted: 1 or more)",
                            config.collective_fanout));
    }
    config.max_array_size = doc.value("max_array_size", config.max_array_size);
    if (config.max_array_size < 1 || config.max_array_size > 4000001) {
        return Status::invalid(
                fmt::format("max_array_size: invalid value '{}' (accepted: 1 to 4000001)",
                            config.max_array_size));
    }
    config.purge_jobs_after_days = doc.value("purge_jobs_after_days", config.purge_jobs_after_days);
    if (config.purge_jobs_after_days < 0 || config.purge_jobs_after_days > 36500) {
        return Status::invalid(
                fmt::format("purge_jobs_after_days: invalid value '{}' (accepted: 0 to keep "
                            "finished jobs forever, or 1 to 36500 days)",
                            config.purge_jobs_after_days));
    }
    config.sqlite_synchronous = doc.value("sqlite_synchronous", config.sqlite_synchronous);
    if (config.sqlite_synchronous != "full" && config.sqlite_synchronous != "normal") {
        return Status::invalid("sqlite_synchronous: invalid value '" + config.sqlite_synchronous
                               + "' (accepted: full, normal)");
    }
    config.accounting = doc.value("accounting", config.accounting);
    config.state = doc.value("state", config.state);
    if (!config.state.empty() && !config.state.starts_with("postgresql://")
        && !config.state.starts_with("postgres://")) {
        return Status::invalid("state: invalid value '" + config.state
                               + "' (accepted: empty for STATE_DIR/cohort.db, or a PostgreSQL "
                                 "URI postgresql://...)");
    }
    if (!config.controller_backups.empty() && config.state.empty()) {
        return Status::invalid(
                "controller.backups: backup controllers need a shared state (accepted: with "
                "state = postgresql://...)");
    }
    config.tres_billing_weights = doc.value("tres_billing_weights", config.tres_billing_weights);
    auto weights = parse_billing_weights(config.tres_billing_weights);
    if (!weights) {
        return weights.status();
    }
    config.billing_weights = *weights;
    config.return_to_service = doc.value("return_to_service", config.return_to_service);
    if (config.return_to_service < 0 || config.return_to_service > 2) {
        return Status::invalid(fmt::format(
                "return_to_service: invalid value '{}' (accepted: 0 DOWN nodes stay down until "
                "resumed, 1 nodes DOWN for not responding return when they register, 2 every "
                "DOWN node returns when it registers)",
                config.return_to_service));
    }
    config.job_requeue = doc.value("job_requeue", config.job_requeue);
    config.max_batch_requeue = doc.value("max_batch_requeue", config.max_batch_requeue);
    if (config.max_batch_requeue < 0 || config.max_batch_requeue > 1000) {
        return Status::invalid(
                fmt::format("max_batch_requeue: invalid value '{}' (accepted: 0 to 1000)",
                            config.max_batch_requeue));
    }
    config.requeue_avoid_failed_nodes =
            doc.value("requeue_avoid_failed_nodes", config.requeue_avoid_failed_nodes);
    for (const char* key : {"requeue_exit", "requeue_exit_hold"}) {
        auto& codes = std::string_view(key) == "requeue_exit" ? config.requeue_exit
                                                              : config.requeue_exit_hold;
        codes = doc.value(key, std::vector<int32_t>{});
        for (int32_t code : codes) {
            if (code < 1 || code > 255) {
                return Status::invalid(fmt::format(
                        "{}: invalid exit code {} (accepted: a list of codes from 1 to 255)", key,
                        code));
            }
        }
    }
    config.mail_program = doc.value("mail_program", config.mail_program);
    if (config.mail_program.empty() || config.mail_program.front() != '/') {
        return Status::invalid("mail_program: invalid value '" + config.mail_program
                               + "' (accepted: an absolute path, such as /usr/bin/mail)");
    }
    if (doc.contains("backfill")) {
        if (!doc["backfill"].is_string()) {
            return Status::invalid("backfill: invalid value " + doc["backfill"].dump()
                                   + " (accepted: none, easy, conservative)");
        }
        auto backfill = parse_backfill_policy(doc["backfill"].get<std::string>(), "backfill");
        if (!backfill) {
            return backfill.status();
        }
        config.backfill = *backfill;
    }
    config.backfill_reservations = doc.value("backfill_reservations", config.backfill_reservations);
    auto nodes = read_hosts(doc, "nodes");
    if (!nodes) {
        return nodes.status();
    }
    config.nodes = std::move(*nodes);
    auto features = read_node_features(doc, config.nodes);
    if (!features) {
        return features.status();
    }
    config.node_features = std::move(*features);
    auto gres = read_node_gres(doc, config.nodes);
    if (!gres) {
        return gres.status();
    }
    config.node_gres = std::move(*gres);
    auto licenses = read_licenses(doc);
    if (!licenses) {
        return licenses.status();
    }
    config.licenses = std::move(*licenses);
    for (const json& entry : doc.value("partitions", json::array())) {
        auto partition = read_partition(entry);
        if (!partition) {
            return partition.status();
        }
        config.partitions.push_back(std::move(*partition));
    }
    if (config.partitions.empty() && !config.nodes.empty()) {
        PartitionConfig debug;
        debug.name = "debug";
        debug.nodes = config.nodes;
        debug.is_default = true;
        config.partitions.push_back(std::move(debug));
    }
    auto policy = read_policy(doc);
    if (!policy) {
        return policy.status();
    }
    config.policy = std::move(*policy);
    auto network = read_network(doc, config.nodes);
    if (!network) {
        return network.status();
    }
    config.network = std::move(*network);
    for (const auto& partition : config.partitions) {
        for (const auto& account : partition.allowed_accounts) {
            if (config.policy.find_account(account) == nullptr) {
                return Status::invalid("partition " + partition.name
                                       + ": allowed_accounts: unknown account '" + account
                                       + "' (accepted: accounts listed under accounts)");
            }
        }
    }
    return config;
}

}  // namespace

const PartitionConfig* ClusterConfig::default_partition() const {
    for (const auto& partition : partitions) {
        if (partition.is_default) {
            return &partition;
        }
    }
    return partitions.empty() ? nullptr : &partitions.front();
}

const PartitionConfig* ClusterConfig::find_partition(const std::string& name) const {
    for (const auto& partition : partitions) {
        if (partition.name == name) {
            return &partition;
        }
    }
    return nullptr;
}

std::vector<std::string> ClusterConfig::features_of(const std::string& node,
                                                    const std::string& gpu_type) const {
    std::vector<std::string> features;
    if (auto it = node_features.find(node); it != node_features.end()) {
        features = it->second;
    }
    if (!gpu_type.empty()) {
        features.push_back(gpu_type);
    }
    return features;
}

std::vector<std::string> ClusterConfig::gres_names() const {
    std::set<std::string> names;
    for (const auto& [node, counts] : node_gres) {
        for (const GresCount& gres : counts) {
            names.insert(gres.name);
        }
    }
    return {names.begin(), names.end()};
}

int64_t ClusterConfig::agent_heartbeat_interval_ms() const {
    const auto nodes_count = static_cast<int64_t>(nodes.size());
    const int64_t spread_ms =
            (nodes_count * 1000 + max_heartbeats_per_s - 1) / max_heartbeats_per_s;
    return std::max(heartbeat_interval_ms, spread_ms);
}

int64_t ClusterConfig::effective_node_timeout_ms() const {
    constexpr int64_t kMissedHeartbeats = 3;
    const int64_t interval_ms = agent_heartbeat_interval_ms();
    return interval_ms == heartbeat_interval_ms
                   ? node_timeout_ms
                   : std::max(node_timeout_ms, kMissedHeartbeats * interval_ms);
}

Result<ClusterConfig> load_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return Status::not_found(
                "cannot read config '" + path
                + "' (start a local instance with 'cohort start' or set COHORT_CONF)");
    }
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    return parse_config_text(text, path);
}

Result<ClusterConfig> parse_config_text(std::string_view text, const std::string& path) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
        return Status::invalid("config '" + path + "' is not a JSON object");
    }
    try {
        auto config = parse_config(doc);
        if (!config) {
            return config.status().with_context("config '" + path + "'");
        }
        config->path = path;
        return config;
    } catch (const json::exception& e) {
        return Status::invalid("config '" + path + "': " + e.what());
    }
}

Status save_config(const ClusterConfig& config, const std::string& path) {
    json backups = json::array();
    for (const auto& backup : config.controller_backups) {
        backups.push_back({{"host", backup.host}, {"port", backup.port}});
    }
    json partitions = json::array();
    for (const auto& p : config.partitions) {
        partitions.push_back({{"name", p.name},
                              {"nodes", compress_hostlist(p.nodes)},
                              {"default", p.is_default},
                              {"max_time", p.max_time_s},
                              {"default_time", p.default_time_s},
                              {"max_nodes", p.max_nodes},
                              {"allowed_accounts", p.allowed_accounts},
                              {"priority_tier", p.priority_tier},
                              {"def_mem_per_cpu", p.def_mem_per_cpu_mib},
                              {"max_mem_per_cpu", p.max_mem_per_cpu_mib}});
    }
    json doc = {{"cluster_name", config.cluster_name},
                {"controller",
                 {{"host", config.controller_host},
                  {"port", config.controller_port},
                  {"backups", backups}}},
                {"key_file", config.key_file},
                {"auth", config.auth},
                {"munge_socket", config.munge_socket},
                {"daemon_user", config.daemon_user},
                {"operators", config.operators},
                {"admins", config.admins},
                {"private_data", config.private_data},
                {"cgroup", config.cgroup},
                {"job_pids_max", config.job_pids_max},
                {"gpu_device_files", config.gpu_device_files},
                {"prolog", config.prolog},
                {"epilog", config.epilog},
                {"prolog_epilog_timeout_s", config.prolog_epilog_timeout_s},
                {"state_dir", config.state_dir},
                {"nodes", compress_hostlist(config.nodes)},
                {"partitions", partitions},
                {"heartbeat_interval_ms", config.heartbeat_interval_ms},
                {"node_timeout_ms", config.node_timeout_ms},
                {"max_heartbeats_per_s", config.max_heartbeats_per_s},
                {"return_to_service", config.return_to_service},
                {"kill_wait_s", config.kill_wait_s},
                {"launch_fanout", config.launch_fanout},
                {"collective_fanout", config.collective_fanout},
                {"max_array_size", config.max_array_size},
                {"purge_jobs_after_days", config.purge_jobs_after_days},
                {"sqlite_synchronous", config.sqlite_synchronous},
                {"accounting", config.accounting},
                {"state", config.state},
                {"tres_billing_weights", config.tres_billing_weights},
                {"job_requeue", config.job_requeue},
                {"max_batch_requeue", config.max_batch_requeue},
                {"requeue_avoid_failed_nodes", config.requeue_avoid_failed_nodes},
                {"requeue_exit", config.requeue_exit},
                {"requeue_exit_hold", config.requeue_exit_hold},
                {"mail_program", config.mail_program},
                {"backfill", backfill_policy_name(config.backfill)},
                {"backfill_reservations", config.backfill_reservations}};
    if (!config.node_features.empty()) {
        json features = json::object();
        for (const auto& [node, list] : config.node_features) {
            features[node] = list;
        }
        doc["node_features"] = features;
    }
    if (!config.node_gres.empty()) {
        json gres = json::object();
        for (const auto& [node, counts] : config.node_gres) {
            for (const GresCount& count : counts) {
                gres[node][count.name] = count.count;
            }
        }
        doc["node_gres"] = gres;
    }
    if (!config.licenses.empty()) {
        doc["licenses"] = config.licenses;
    }
    doc.update(write_policy(config.policy));
    if (!config.network.empty()) {
        doc["network"] = write_network(config.network);
    }
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << doc.dump(2) << "\n";
        if (!out) {
            return Status::io_error("cannot write config '" + tmp + "'");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        return Status::io_error("cannot rename '" + tmp + "' to '" + path + "'");
    }
    return Status::ok();
}

std::string default_state_dir() {
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
        return std::string(xdg) + "/cohort/local";
    }
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "/tmp") + "/.local/state/cohort/local";
}

std::string default_config_path() {
    if (const char* conf = std::getenv("COHORT_CONF"); conf != nullptr && *conf != '\0') {
        return conf;
    }
    // A user's own local instance first; else the host's cluster, as installed.
    const std::string local = default_state_dir() + "/cohort.json";
    constexpr const char* kInstalled = "/etc/cohort/cohort.json";
    return access(local.c_str(), F_OK) != 0 && access(kInstalled, F_OK) == 0 ? kInstalled : local;
}

Result<std::string> load_key(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Status::denied("cannot read cluster key '" + path
                              + "' (only the instance's owner can use it)");
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string key = buffer.str();
    if (key.size() < 16) {
        return Status::invalid("cluster key '" + path + "' is shorter than 16 bytes");
    }
    return key;
}

std::vector<ControllerAddress> controller_addresses(const ClusterConfig& config) {
    std::vector<ControllerAddress> addresses = {{config.controller_host, config.controller_port}};
    addresses.insert(addresses.end(), config.controller_backups.begin(),
                     config.controller_backups.end());
    return addresses;
}

}  // namespace cohort
