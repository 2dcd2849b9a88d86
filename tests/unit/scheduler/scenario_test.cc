// Golden scheduler scenarios: each tests/data/scenarios/*.json file holds a cluster, its jobs and
// a time, and what the pure core must decide (the format is in the README beside them). The
// timeline runner keeps the jobs and a virtual clock and calls the core's own rules, as the
// controller does: check_eligibility() (dependencies, array throttles), expected_end(),
// FairShareUsage and PriorityModel around sched::plan(). It holds no copy of a rule: GPU
// layouts are given as the values NodeGpuLayout holds, and the network is read and indexed by
// the controller's read_network() and build_network().
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/job_state.h"
#include "common/network_config.h"
#include "scheduler/backfill/plan.h"
#include "scheduler/dependency.h"
#include "scheduler/job_array.h"
#include "scheduler/job_rules.h"
#include "scheduler/placement/gpu_layout.h"
#include "scheduler/placement/network_topology.h"
#include "scheduler/priority/fairshare_usage.h"
#include "scheduler/priority/priority_model.h"

#ifndef COHORT_SCENARIO_DIR
#error "COHORT_SCENARIO_DIR must name tests/data/scenarios (see tests/unit/CMakeLists.txt)"
#endif

namespace cohort::sched {
namespace {

using Json = nlohmann::json;
using KeySet = std::set<std::string>;

// A mistake in a scenario file. It is thrown, so that one bad key anywhere ends the scenario
// with a message naming the file and the key, rather than letting it check less than it says.
class ScenarioError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void bad_file(const std::string& where, const std::string& what) {
    throw ScenarioError(where + ": " + what);
}

int64_t as_integer(const Json& value, const std::string& where) {
    if (!value.is_number_integer()) {
        bad_file(where, "expected a whole number, got " + value.dump());
    }
    return value.get<int64_t>();
}

// One JSON object of a scenario, read strictly: a missing key, a value of the wrong type, and a
// key it does not know (usually a misspelling that would otherwise be ignored) all throw.
class Fields {
public:
    Fields(const Json& object, std::string where, const KeySet& known)
        : object_(object), where_(std::move(where)) {
        if (!object_.is_object()) {
            bad_file(where_, "expected an object, got " + object_.dump());
        }
        for (const auto& item : object_.items()) {
            if (known.count(item.key()) == 0) {
                bad_file(where_, "unknown key \"" + item.key() + "\"");
            }
        }
    }

    bool has(const std::string& key) const { return object_.contains(key); }

    const std::string& where() const { return where_; }

    std::string path(const std::string& key) const { return where_ + "." + key; }

    const Json& value(const std::string& key) const {
        auto it = object_.find(key);
        if (it == object_.end()) {
            bad_file(where_, "missing key \"" + key + "\"");
        }
        return *it;
    }

    int64_t integer(const std::string& key) const { return as_integer(value(key), path(key)); }

    // A whole number in [min, max].
    int64_t bounded(const std::string& key, int64_t min, int64_t max) const {
        const int64_t number = integer(key);
        if (number < min || number > max) {
            bad_file(path(key), std::to_string(number) + " is outside [" + std::to_string(min)
                                        + ", " + std::to_string(max) + "]");
        }
        return number;
    }

    int64_t bounded_or(const std::string& key, int64_t min, int64_t max, int64_t fallback) const {
        return has(key) ? bounded(key, min, max) : fallback;
    }

    std::string text(const std::string& key) const {
        const Json& v = value(key);
        if (!v.is_string() || v.get<std::string>().empty()) {
            bad_file(path(key), "expected a non-empty string, got " + v.dump());
        }
        return v.get<std::string>();
    }

    bool flag_or(const std::string& key, bool fallback) const {
        if (!has(key)) {
            return fallback;
        }
        const Json& v = value(key);
        if (!v.is_boolean()) {
            bad_file(path(key), "expected true or false, got " + v.dump());
        }
        return v.get<bool>();
    }

    const Json& list(const std::string& key) const {
        const Json& v = value(key);
        if (!v.is_array()) {
            bad_file(path(key), "expected a list, got " + v.dump());
        }
        return v;
    }

    std::vector<std::string> names(const std::string& key) const {
        std::vector<std::string> out;
        const Json& items = list(key);
        for (size_t i = 0; i < items.size(); ++i) {
            if (!items[i].is_string()) {
                bad_file(path(key) + "[" + std::to_string(i) + "]",
                         "expected a name, got " + items[i].dump());
            }
            out.push_back(items[i].get<std::string>());
        }
        return out;
    }

    Fields object(const std::string& key, const KeySet& known) const {
        return Fields(value(key), path(key), known);
    }

    // The objects of a list, each read with `known` keys; an absent optional list is empty.
    std::vector<Fields> each(const std::string& key, const KeySet& known) const {
        std::vector<Fields> out;
        const Json& items = list(key);
        for (size_t i = 0; i < items.size(); ++i) {
            out.emplace_back(items[i], path(key) + "[" + std::to_string(i) + "]", known);
        }
        return out;
    }

    std::vector<Fields> each_optional(const std::string& key, const KeySet& known) const {
        return has(key) ? each(key, known) : std::vector<Fields>{};
    }

private:
    const Json& object_;
    std::string where_;
};

// ---- The cluster and the jobs' requests, shared by both kinds of scenario ----

struct Cluster {
    std::vector<NodeCapacity> nodes;
    std::vector<std::string> node_where;  // per node: its entry's path, for errors
    std::vector<std::vector<int>> partitions;
    std::vector<ReservationWindow> windows;
    NetworkTopology network;
    std::map<std::string, int> node_index;
    std::map<std::string, int> partition_index;
    std::map<std::string, int> window_index;
};

int index_of(const std::map<std::string, int>& index,
             const std::string& name,
             const std::string& where) {
    auto it = index.find(name);
    if (it == index.end()) {
        bad_file(where, "'" + name + "' is not defined in this scenario");
    }
    return it->second;
}

std::vector<int> node_indexes(const Fields& fields,
                              const std::string& key,
                              const Cluster& cluster) {
    std::vector<int> out;
    for (const std::string& name : fields.names(key)) {
        out.push_back(index_of(cluster.node_index, name, fields.path(key)));
    }
    return out;
}

// Adds `name` to `index` as the next entry; a name used twice is a file error.
void add_name(std::map<std::string, int>& index,
              const std::string& name,
              const std::string& where) {
    const int next = static_cast<int>(index.size());
    if (!index.emplace(name, next).second) {
        bad_file(where, "'" + name + "' is defined twice");
    }
}

// A whole number of a list, at least `min`.
int read_list_integer(const Json& items, size_t i, const std::string& where, int64_t min) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const int64_t number = as_integer(items[i], at);
    if (number < min || number > INT32_MAX) {
        bad_file(at, std::to_string(number) + " is outside [" + std::to_string(min) + ", "
                             + std::to_string(INT32_MAX) + "]");
    }
    return static_cast<int>(number);
}

// One GPU's place in its node: the domain ids GpuLocality holds, -1 (or no switches) where
// the GPU shares that kind of domain with no other. Local CPUs and NICs only bind tasks, which
// the pass does not do, so a scenario does not give them.
GpuLocality read_gpu_locality(const Fields& gpu) {
    GpuLocality locality;
    auto id = [&](const std::string& key) {
        return static_cast<int>(gpu.bounded_or(key, 0, INT32_MAX, -1));
    };
    locality.clique = id("clique");
    locality.host_bridge = id("host_bridge");
    locality.numa = id("numa");
    locality.socket = id("socket");
    if (gpu.has("switches")) {
        const Json& switches = gpu.list("switches");
        for (size_t i = 0; i < switches.size(); ++i) {
            locality.switches.push_back(read_list_integer(switches, i, gpu.path("switches"), 0));
        }
    }
    return locality;
}

// The named GPU layouts nodes may share ("gpu_layouts", pass scenarios only).
std::map<std::string, std::shared_ptr<const NodeGpuLayout>> read_gpu_layouts(
        const Fields& scenario) {
    std::map<std::string, std::shared_ptr<const NodeGpuLayout>> layouts;
    std::map<std::string, int> names;
    for (const Fields& entry : scenario.each_optional("gpu_layouts", {"name", "gpus"})) {
        const std::string name = entry.text("name");
        add_name(names, name, entry.path("name"));
        NodeGpuLayout layout;
        for (const Fields& gpu :
             entry.each("gpus", {"clique", "switches", "host_bridge", "numa", "socket"})) {
            layout.gpus.push_back(read_gpu_locality(gpu));
        }
        if (layout.gpus.empty()) {
            bad_file(entry.path("gpus"), "a layout needs at least one GPU");
        }
        layouts.emplace(name, std::make_shared<const NodeGpuLayout>(std::move(layout)));
    }
    return layouts;
}

// The GPU indexes free on a node with a layout: ascending and below its GPU count; all of
// them when not given.
std::vector<int> read_free_gpus(const Fields& entry, int32_t gpus) {
    std::vector<int> free;
    if (!entry.has("free_gpus")) {
        for (int gpu = 0; gpu < gpus; ++gpu) {
            free.push_back(gpu);
        }
        return free;
    }
    const Json& items = entry.list("free_gpus");
    for (size_t i = 0; i < items.size(); ++i) {
        const int gpu = read_list_integer(items, i, entry.path("free_gpus"), 0);
        if (gpu >= gpus || (!free.empty() && gpu <= free.back())) {
            bad_file(entry.path("free_gpus") + "[" + std::to_string(i) + "]",
                     std::to_string(gpu) + ": expected ascending GPU indexes below "
                             + std::to_string(gpus) + ", each once");
        }
        free.push_back(gpu);
    }
    return free;
}

NodeCapacity read_node(const Fields& entry,
                       const std::map<std::string, std::shared_ptr<const NodeGpuLayout>>& layouts) {
    NodeCapacity node;
    node.name = entry.text("name");
    node.cpus = static_cast<int32_t>(entry.bounded("cpus", 1, INT32_MAX));
    node.memory_mib = entry.bounded_or("memory_mib", 0, INT64_MAX, 0);
    node.gpus = static_cast<int32_t>(entry.bounded_or("gpus", 0, INT32_MAX, 0));
    node.up = entry.flag_or("up", true);
    if (entry.has("gpu_layout")) {
        const std::string name = entry.text("gpu_layout");
        auto it = layouts.find(name);
        if (it == layouts.end()) {
            bad_file(entry.path("gpu_layout"), "'" + name + "' is not in \"gpu_layouts\"");
        }
        const auto layout_gpus = static_cast<int32_t>(it->second->gpus.size());
        if (entry.has("gpus") && node.gpus != layout_gpus) {
            const std::string layout_has = std::to_string(layout_gpus) + " GPUs";
            bad_file(entry.path("gpus"),
                     std::to_string(node.gpus) + ", but layout '" + name + "' has " + layout_has);
        }
        node.gpus = layout_gpus;
        node.gpu_layout = it->second;
        node.free_gpus = read_free_gpus(entry, node.gpus);
    } else if (entry.has("free_gpus")) {
        bad_file(entry.path("free_gpus"), "only a node with a \"gpu_layout\" has GPU indexes");
    }
    if (entry.has("gpu_type")) {
        node.gpu_type = entry.text("gpu_type");
        if (node.gpus == 0) {
            bad_file(entry.path("gpu_type"), "a node without GPUs has no GPU type");
        }
    }
    return node;
}

// "network": the cluster configuration's own format, read by its own reader (hostlist
// strings, the tree checked), after a strict look at the keys that reader lets pass.
NetworkTopology read_network_of(const Fields& scenario, const Cluster& cluster) {
    if (!scenario.has("network")) {
        return {};
    }
    const Fields network = scenario.object("network", {"switches", "blocks"});
    network.each_optional("switches", {"name", "nodes", "switches"});
    network.each_optional("blocks", {"name", "nodes"});
    std::vector<std::string> names;
    for (const NodeCapacity& node : cluster.nodes) {
        names.push_back(node.name);
    }
    auto config = read_network(Json{{"network", scenario.value("network")}}, names);
    if (!config) {
        bad_file(scenario.where(), config.status().message());
    }
    if (config->empty()) {
        bad_file(network.where(), "names no switches and no blocks (omit it for a flat network)");
    }
    return build_network(*config, names);
}

Cluster read_cluster(const Fields& scenario) {
    Cluster cluster;
    const auto layouts = read_gpu_layouts(scenario);
    for (const Fields& entry : scenario.each("nodes", {"name", "cpus", "memory_mib", "gpus", "up",
                                                       "gpu_type", "gpu_layout", "free_gpus"})) {
        NodeCapacity node = read_node(entry, layouts);
        add_name(cluster.node_index, node.name, entry.path("name"));
        cluster.nodes.push_back(std::move(node));
        cluster.node_where.push_back(entry.where());
    }
    cluster.network = read_network_of(scenario, cluster);
    for (const Fields& entry : scenario.each("partitions", {"name", "nodes"})) {
        add_name(cluster.partition_index, entry.text("name"), entry.path("name"));
        cluster.partitions.push_back(node_indexes(entry, "nodes", cluster));
    }
    if (cluster.partitions.empty()) {
        bad_file(scenario.path("partitions"), "at least one partition is needed");
    }
    for (const Fields& entry : scenario.each_optional(
                 "advance_reservations", {"name", "start", "end", "nodes", "maintenance"})) {
        ReservationWindow window;
        window.name = entry.text("name");
        window.start = entry.integer("start");
        window.end = entry.integer("end");
        if (window.end <= window.start) {
            bad_file(entry.path("end"), "the window must end after it starts");
        }
        window.nodes = node_indexes(entry, "nodes", cluster);
        window.maintenance = entry.flag_or("maintenance", false);
        add_name(cluster.window_index, window.name, entry.path("name"));
        cluster.windows.push_back(std::move(window));
    }
    return cluster;
}

BackfillOptions read_policy(const Fields& scenario) {
    const Fields policy = scenario.object("policy", {"backfill", "reservations"});
    auto parsed = parse_backfill_policy(policy.text("backfill"), policy.path("backfill"));
    if (!parsed) {
        throw ScenarioError(parsed.status().message());
    }
    BackfillOptions options;
    options.policy = *parsed;
    if (policy.has("reservations")) {
        if (options.policy != BackfillPolicy::kConservative) {
            bad_file(policy.path("reservations"), "only conservative backfill takes a depth");
        }
        options.reservations = static_cast<size_t>(policy.bounded("reservations", 1, INT32_MAX));
    }
    return options;
}

ResourceRequest read_request(const Fields& job) {
    ResourceRequest request;
    if (!job.has("request")) {
        return request;  // one task of one CPU
    }
    const Fields r = job.object("request", {"ntasks", "nodes", "nodes_max", "ntasks_per_node",
                                            "cpus_per_task", "memory_mib_per_node", "gpus_per_node",
                                            "gpu_type", "max_leaf_switches", "segment_nodes"});
    auto count = [&](const std::string& key, int64_t min, int64_t fallback) {
        return static_cast<uint32_t>(r.bounded_or(key, min, UINT32_MAX, fallback));
    };
    request.ntasks = count("ntasks", 0, 0);
    request.nodes_min = count("nodes", 0, 0);
    request.nodes_max = count("nodes_max", 0, 0);
    request.ntasks_per_node = count("ntasks_per_node", 0, 0);
    request.cpus_per_task = count("cpus_per_task", 1, 1);
    request.memory_mib_per_node = r.bounded_or("memory_mib_per_node", 0, INT64_MAX, 0);
    request.gpus_per_node = static_cast<int32_t>(r.bounded_or("gpus_per_node", 0, INT32_MAX, 0));
    if (r.has("gpu_type")) {
        request.gpu_type = r.text("gpu_type");
    }
    request.max_leaf_switches = count("max_leaf_switches", 0, 0);
    request.segment_nodes = count("segment_nodes", 0, 0);
    // As the controller checks at submit (--segment).
    if (request.segment_nodes > 0
        && (request.nodes_min == 0 || request.nodes_min % request.segment_nodes != 0)) {
        const std::string nodes = std::to_string(request.nodes_min);
        bad_file(r.path("segment_nodes"),
                 std::to_string(request.segment_nodes) + " must divide \"nodes\" (" + nodes + ")");
    }
    return request;
}

// The keys every job has, in both kinds of scenario.
KeySet job_keys(KeySet more) {
    more.insert({"id", "submit", "time_limit_s", "request", "partition", "reservation",
                 "switches_wait_until"});
    return more;
}

// Everything but the priority, which the two kinds of scenario get differently.
PendingJob read_job(const Fields& entry, const Cluster& cluster) {
    PendingJob job;
    job.id = static_cast<uint64_t>(entry.bounded("id", 1, INT64_MAX));
    job.submit_time = entry.integer("submit");
    job.time_limit_s = entry.bounded("time_limit_s", -1, kForever);
    if (job.time_limit_s == 0) {
        bad_file(entry.path("time_limit_s"), "0 s (accepted: -1 for unlimited, or >= 1)");
    }
    job.request = read_request(entry);
    if (entry.has("switches_wait_until")) {
        if (job.request.max_leaf_switches == 0) {
            bad_file(entry.path("switches_wait_until"),
                     "only binds with request.max_leaf_switches");
        }
        job.switches_wait_until = entry.integer("switches_wait_until");
    }
    if (entry.has("partition")) {
        job.partition =
                index_of(cluster.partition_index, entry.text("partition"), entry.path("partition"));
    }
    if (entry.has("reservation")) {
        job.reservation = index_of(cluster.window_index, entry.text("reservation"),
                                   entry.path("reservation"));
    }
    return job;
}

Snapshot empty_snapshot(const Cluster& cluster, int64_t now) {
    Snapshot snapshot;
    snapshot.now = now;
    snapshot.nodes = cluster.nodes;
    snapshot.partitions = cluster.partitions;
    snapshot.windows = cluster.windows;
    snapshot.network = cluster.network;
    return snapshot;
}

// ---- Comparing what happened with what the file expects ----

uint64_t expected_job(const Fields& entry) {
    return static_cast<uint64_t>(entry.bounded("job", 1, INT64_MAX));
}

template <typename Value>
void put_once(std::map<uint64_t, Value>& expected, const Fields& entry, Value value) {
    const uint64_t job = expected_job(entry);
    if (!expected.emplace(job, std::move(value)).second) {
        bad_file(entry.path("job"), "job " + std::to_string(job) + " is listed twice");
    }
}

// `actual` must hold exactly the jobs of `expected`, each with its expected value.
template <typename Value>
void expect_exactly(const std::map<uint64_t, Value>& expected,
                    const std::map<uint64_t, Value>& actual,
                    const std::string& what) {
    for (const auto& [job, expected_value] : expected) {
        auto it = actual.find(job);
        if (it == actual.end()) {
            ADD_FAILURE() << "job " << job << ": expected " << what << " " << expected_value
                          << ", got none";
        } else {
            const Value& actual_value = it->second;
            EXPECT_EQ(actual_value, expected_value) << "job " << job << ": " << what;
        }
    }
    for (const auto& [job, value] : actual) {
        if (expected.count(job) == 0) {
            ADD_FAILURE() << "job " << job << ": unexpected " << what << " " << value;
        }
    }
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& name : names) {
        out += (out.empty() ? "" : ",") + name;
    }
    return "[" + out + "]";
}

// ---- "kind": "pass": one scheduling pass ----

RunningAllocation read_running(const Fields& entry, const Cluster& cluster) {
    RunningAllocation running;
    running.nodes = node_indexes(entry, "nodes", cluster);
    const Json& cpus = entry.list("cpus_per_node");
    if (cpus.size() != running.nodes.size()) {
        bad_file(entry.path("cpus_per_node"), "needs one count per node");
    }
    for (size_t i = 0; i < cpus.size(); ++i) {
        running.cpus_per_node.push_back(static_cast<int32_t>(
                as_integer(cpus[i], entry.path("cpus_per_node") + "[" + std::to_string(i) + "]")));
    }
    running.expected_end = entry.integer("expected_end");
    running.memory_mib_per_node = entry.bounded_or("memory_mib_per_node", 0, INT64_MAX, 0);
    running.gpus_per_node =
            static_cast<int32_t>(entry.bounded_or("gpus_per_node", 0, INT32_MAX, 0));
    return running;
}

void check_pass(const Fields& expect, const Decisions& decisions, const Snapshot& snapshot) {
    std::map<uint64_t, std::string> expected_starts;
    std::map<uint64_t, int32_t> expected_gpus;
    for (const Fields& entry : expect.each("starts", {"job", "nodes", "gpus_per_node"})) {
        put_once(expected_starts, entry, joined(entry.names("nodes")));
        if (entry.has("gpus_per_node")) {
            expected_gpus[expected_job(entry)] =
                    static_cast<int32_t>(entry.bounded("gpus_per_node", 0, INT32_MAX));
        }
    }
    std::map<uint64_t, std::string> starts;
    for (const StartJob& start : decisions.starts) {
        std::vector<std::string> names;
        for (int node : start.placement.nodes) {
            names.push_back(snapshot.nodes[static_cast<size_t>(node)].name);
        }
        starts[start.job_id] = joined(names);
        if (auto it = expected_gpus.find(start.job_id); it != expected_gpus.end()) {
            EXPECT_EQ(start.placement.gpus_per_node, it->second)
                    << "job " << start.job_id << ": GPUs per node";
        }
    }
    expect_exactly(expected_starts, starts, "start now on nodes");

    std::map<uint64_t, int64_t> expected_reservations;
    for (const Fields& entry : expect.each("reservations", {"job", "start"})) {
        put_once(expected_reservations, entry, entry.integer("start"));
    }
    std::map<uint64_t, int64_t> reservations;
    for (const ReservedJob& reserved : decisions.reservations) {
        reservations[reserved.job_id] = reserved.start;
    }
    expect_exactly(expected_reservations, reservations, "reservation at");

    std::map<uint64_t, std::string> waits;
    for (const WaitJob& wait : decisions.waits) {
        waits[wait.job_id] = wait_reason_name(wait, snapshot.limits);
    }
    std::map<uint64_t, std::string> expected_waits;
    for (const Fields& entry : expect.each_optional("waits", {"job", "reason"})) {
        put_once(expected_waits, entry, entry.text("reason"));
    }
    for (const auto& [job, reason] : expected_waits) {
        auto it = waits.find(job);
        if (it == waits.end()) {
            ADD_FAILURE() << "job " << job << ": expected to wait (" << reason
                          << "), but the pass did not make it wait";
        } else {
            EXPECT_EQ(it->second, reason) << "job " << job << ": wait reason";
        }
    }
}

// A node's free GPU indexes and the running jobs' GPU counts describe one state: the indexes
// free are as many as the GPUs the running jobs leave.
void check_free_gpus(const Cluster& cluster, const std::vector<RunningAllocation>& running) {
    std::vector<int64_t> held(cluster.nodes.size(), 0);
    for (const RunningAllocation& allocation : running) {
        for (int node : allocation.nodes) {
            held[static_cast<size_t>(node)] += allocation.gpus_per_node;
        }
    }
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
        const NodeCapacity& node = cluster.nodes[i];
        const int64_t left = node.gpus - held[i];
        if (node.gpu_layout && static_cast<int64_t>(node.free_gpus.size()) != left) {
            bad_file(cluster.node_where[i] + ".free_gpus",
                     "lists " + std::to_string(node.free_gpus.size()) + ", but the running jobs "
                             + "leave " + std::to_string(left) + " of its "
                             + std::to_string(node.gpus) + " GPUs free");
        }
    }
}

void run_pass(const Fields& scenario) {
    const Cluster cluster = read_cluster(scenario);
    Snapshot snapshot = empty_snapshot(cluster, scenario.integer("now"));
    for (const Fields& entry :
         scenario.each_optional("running", {"nodes", "cpus_per_node", "expected_end",
                                            "memory_mib_per_node", "gpus_per_node"})) {
        snapshot.running.push_back(read_running(entry, cluster));
    }
    check_free_gpus(cluster, snapshot.running);
    std::set<uint64_t> ids;
    for (const Fields& entry : scenario.each("pending", job_keys({"priority"}))) {
        PendingJob job = read_job(entry, cluster);
        job.priority = entry.integer("priority");
        if (!ids.insert(job.id).second) {
            bad_file(entry.path("id"), "job " + std::to_string(job.id) + " is defined twice");
        }
        snapshot.pending.push_back(std::move(job));
    }
    const Decisions decisions = plan(snapshot, read_policy(scenario));
    check_pass(scenario.object("expect", {"starts", "reservations", "waits"}), decisions, snapshot);
}

// ---- "kind": "timeline": jobs run on a virtual clock ----

// A job of a timeline: what it asks for and how it will run, then what happened to it.
struct TimelineJob {
    PendingJob spec;  // the priority is set anew for every pass
    std::string user;
    int64_t run_s = 0;
    JobState exit_state = JobState::kCompleted;
    std::optional<Dependency> dependency;
    bool kill_on_invalid_dep = true;
    uint64_t array_id = 0;           // the array's id for its tasks; 0: not an array task
    uint32_t array_max_running = 0;  // the %N throttle; 0: none

    JobState state = JobState::kPending;
    std::string reason;  // why it last waited
    int64_t start = -1;
    int64_t end = -1;
    JobState ends_as = JobState::kCompleted;
    Placement placement;
};

// How priorities come from usage when the scenario has a "fairshare" block: the priority
// settings of a cluster with no accounts (one leaf per user under root), as the controller.
struct FairShare {
    ClusterConfig config;
    std::map<UsageLedger::Key, double> usage;  // recorded before the scenario's start
};

int64_t cpus_of(const Placement& placement) {
    int64_t cpus = 0;
    for (int32_t c : placement.cpus_per_node) {
        cpus += c;
    }
    return cpus;
}

class Timeline {
public:
    Timeline(Cluster cluster,
             BackfillOptions options,
             std::map<uint64_t, TimelineJob> jobs,
             std::optional<FairShare> fairshare,
             int64_t start)
        : cluster_(std::move(cluster)),
          options_(options),
          jobs_(std::move(jobs)),
          fairshare_(std::move(fairshare)),
          config_(fairshare_ ? fairshare_->config : ClusterConfig{}),
          usage_(config_.policy.priority.decay_half_life_s),
          priority_(config_) {
        if (fairshare_) {
            usage_.restore(start, fairshare_->usage);
        }
    }

    // Steps from `start` through every submit and job end until nothing is left to happen.
    void run(int64_t start) {
        for (std::optional<int64_t> now = start; now; now = next_event(*now)) {
            step(*now);
        }
    }

    const std::map<uint64_t, TimelineJob>& jobs() const { return jobs_; }

private:
    struct Offer {
        std::vector<uint64_t> jobs;   // eligible: offered to the pass
        std::vector<uint64_t> never;  // to cancel: their dependency can never be met
    };

    // Passes run at one instant until one changes nothing: a start or a cancellation can make
    // another job eligible (after:ID, afterany on the cancelled job) with no other event.
    void step(int64_t now) {
        charge_usage(now);
        end_jobs_due(now);
        for (bool changed = true; changed;) {
            const Offer offer = offer_pending(now);
            for (uint64_t id : offer.never) {
                cancel(jobs_.at(id), now);
            }
            changed = !offer.never.empty() || schedule(offer.jobs, now) > 0;
        }
    }

    // Decay everything to now, then charge running jobs for the time since they were last
    // charged (the controller's charge_usage()).
    void charge_usage(int64_t now) {
        if (!fairshare_) {
            return;
        }
        usage_.decay_to(now);
        for (auto& [id, job] : jobs_) {
            if (job.state == JobState::kRunning) {
                usage_.charge(id, {job.user, kRootAccount}, cpus_of(job.placement), job.start, now);
            }
        }
    }

    void end_jobs_due(int64_t now) {
        for (auto& [id, job] : jobs_) {
            if (job.state == JobState::kRunning && job.end <= now) {
                job.state = job.ends_as;
            }
        }
    }

    // Submitted pending jobs that check_eligibility() offers, as build_snapshot() does.
    Offer offer_pending(int64_t now) {
        Offer offer;
        ArrayThrottle throttle;
        for (const auto& [id, job] : jobs_) {
            throttle.count(job.array_id, job.array_max_running, job.state == JobState::kRunning);
        }
        for (auto& [id, job] : jobs_) {
            if (job.state != JobState::kPending || job.spec.submit_time > now) {
                continue;
            }
            EligibilityFacts facts;
            if (job.dependency) {
                facts.dependency = evaluate_dependency(
                        *job.dependency, [&](uint64_t other) { return other_job(other, now); }, now,
                        true);
            }
            facts.kill_on_invalid_dep = job.kill_on_invalid_dep;
            facts.array_id = job.array_id;
            const Eligibility eligibility = check_eligibility(facts, now, throttle);
            if (eligibility.verdict == Eligibility::Verdict::kOffer) {
                offer.jobs.push_back(id);
                continue;
            }
            job.reason = std::string(eligibility.reason);
            if (eligibility.verdict == Eligibility::Verdict::kCancel) {
                offer.never.push_back(id);
            }
        }
        return offer;
    }

    std::optional<OtherJob> other_job(uint64_t id, int64_t now) const {
        auto it = jobs_.find(id);
        if (it == jobs_.end() || it->second.spec.submit_time > now) {
            return std::nullopt;
        }
        return OtherJob{it->second.state, std::max<int64_t>(it->second.start, 0)};
    }

    static void cancel(TimelineJob& job, int64_t now) {
        job.state = JobState::kCancelled;
        job.end = now;
    }

    // Returns how many jobs it started.
    size_t schedule(const std::vector<uint64_t>& offered, int64_t now) {
        if (offered.empty()) {
            return 0;
        }
        Snapshot snapshot = empty_snapshot(cluster_, now);
        for (const auto& [id, job] : jobs_) {
            if (job.state == JobState::kRunning) {
                snapshot.running.push_back(allocation_of(job, now));
            }
        }
        refresh_priorities(now);
        for (uint64_t id : offered) {
            PendingJob pending = jobs_.at(id).spec;
            pending.priority = priority_of(jobs_.at(id), now);
            snapshot.pending.push_back(std::move(pending));
        }
        const Decisions decisions = plan(snapshot, options_);
        for (const WaitJob& wait : decisions.waits) {
            jobs_.at(wait.job_id).reason = wait_reason_name(wait, snapshot.limits);
        }
        for (const StartJob& start : decisions.starts) {
            start_job(jobs_.at(start.job_id), start.placement, now);
        }
        return decisions.starts.size();
    }

    // What a running job holds as the controller plans it: until its time limit, since the
    // controller cannot know the run time.
    static RunningAllocation allocation_of(const TimelineJob& job, int64_t now) {
        RunningAllocation running;
        running.nodes = job.placement.nodes;
        running.cpus_per_node = job.placement.cpus_per_node;
        running.memory_mib_per_node = job.placement.memory_mib_per_node;
        running.gpus_per_node = job.placement.gpus_per_node;
        running.expected_end = expected_end(job.start, job.spec.time_limit_s, now);
        return running;
    }

    // The users with jobs get a fair-share leaf even before they have usage.
    void refresh_priorities(int64_t now) {
        if (!fairshare_) {
            return;
        }
        std::set<UsageLedger::Key> users;
        for (const auto& [id, job] : jobs_) {
            if (job.spec.submit_time <= now && !is_final(job.state)) {
                users.insert({job.user, kRootAccount});
            }
        }
        priority_.refresh(usage_.ledger(), users, cluster_cpus());
    }

    int64_t priority_of(const TimelineJob& job, int64_t now) const {
        if (!fairshare_) {
            return job.spec.priority;
        }
        PriorityJob view;
        view.user = job.user;
        view.eligible_since = job.spec.submit_time;
        view.cpus = requested_cpus(job.spec.request);
        return priority_.factors(view, now).priority;
    }

    int64_t cluster_cpus() const {
        int64_t cpus = 0;
        for (const NodeCapacity& node : cluster_.nodes) {
            cpus += node.cpus;
        }
        return cpus;
    }

    // A job that outruns its time limit is ended there, as TIMEOUT.
    static void start_job(TimelineJob& job, Placement placement, int64_t now) {
        const bool times_out = job.spec.time_limit_s >= 0 && job.run_s > job.spec.time_limit_s;
        job.state = JobState::kRunning;
        job.reason = "None";
        job.start = now;
        job.end = now + (times_out ? job.spec.time_limit_s : job.run_s);
        job.ends_as = times_out ? JobState::kTimeout : job.exit_state;
        job.placement = std::move(placement);
    }

    std::optional<int64_t> next_event(int64_t now) const {
        std::optional<int64_t> next;
        auto consider = [&](int64_t t) {
            if (t > now && (!next || t < *next)) {
                next = t;
            }
        };
        for (const auto& [id, job] : jobs_) {
            if (job.state == JobState::kPending) {
                consider(job.spec.submit_time);
            } else if (job.state == JobState::kRunning) {
                consider(job.end);
            }
        }
        return next;
    }

    Cluster cluster_;
    BackfillOptions options_;
    std::map<uint64_t, TimelineJob> jobs_;
    std::optional<FairShare> fairshare_;
    ClusterConfig config_;  // the priority settings, for priority_
    FairShareUsage usage_;
    PriorityModel priority_;
};

std::optional<Dependency> read_dependency(const Fields& entry) {
    if (!entry.has("dependency")) {
        return std::nullopt;
    }
    auto dependency = parse_dependency(entry.text("dependency"));
    if (!dependency) {
        bad_file(entry.path("dependency"), dependency.status().message());
    }
    for (const DependencyTerm& term : dependency->terms) {
        // The clock stops only at submits and ends, so it would miss when these are met.
        if (term.type == DependencyType::kSingleton || term.delay_s > 0) {
            bad_file(entry.path("dependency"),
                     "singleton and after:ID+MIN are not modelled by the timeline runner");
        }
    }
    return std::move(*dependency);
}

JobState read_exit(const Fields& entry) {
    if (!entry.has("exit")) {
        return JobState::kCompleted;
    }
    auto state = parse_job_state(entry.text("exit"));
    if (!state || !is_final(*state) || *state == JobState::kCancelled
        || *state == JobState::kRequeued) {
        bad_file(entry.path("exit"), "'" + entry.text("exit")
                        + "' is not how a job ends by itself (accepted: COMPLETED, FAILED, "
                          "TIMEOUT, NODE_FAIL)");
    }
    return *state;
}

// One job, or the tasks of an array: ids `id`, `id + 1`, ... in index order.
std::vector<TimelineJob> read_timeline_job(const Fields& entry,
                                           const Cluster& cluster,
                                           bool fairshare) {
    TimelineJob job;
    job.spec = read_job(entry, cluster);
    if (fairshare) {
        job.user = entry.text("user");
        if (entry.has("priority")) {
            bad_file(entry.path("priority"), "fair-share sets the priority; name a user instead");
        }
    } else {
        job.spec.priority = entry.integer("priority");
        if (entry.has("user")) {
            bad_file(entry.path("user"), "users only matter with a \"fairshare\" block");
        }
    }
    job.exit_state = read_exit(entry);
    job.kill_on_invalid_dep = entry.flag_or("kill_on_invalid_dep", true);
    job.dependency = read_dependency(entry);
    if (!entry.has("array")) {
        job.run_s = entry.bounded("run_s", 1, kForever);
        return {job};
    }
    auto spec = parse_array_spec(entry.text("array"));
    if (!spec) {
        bad_file(entry.path("array"), spec.status().message());
    }
    const Json& runs = entry.value("run_s");
    if (runs.is_array() && runs.size() != spec->indexes.size()) {
        bad_file(entry.path("run_s"), "needs one run time per array task");
    }
    std::vector<TimelineJob> tasks;
    for (size_t i = 0; i < spec->indexes.size(); ++i) {
        TimelineJob task = job;
        task.spec.id = job.spec.id + i;
        task.array_id = job.spec.id;
        task.array_max_running = spec->max_running;
        const std::string where =
                entry.path("run_s") + (runs.is_array() ? "[" + std::to_string(i) + "]" : "");
        task.run_s = as_integer(runs.is_array() ? runs[i] : runs, where);
        if (task.run_s < 1) {
            bad_file(where, "a job runs for at least 1 s");
        }
        tasks.push_back(std::move(task));
    }
    return tasks;
}

// As the controller checks at submit: a dependency names a job submitted before it. Arrays as
// a whole are left out, since only the controller knows how to combine their tasks' states.
void check_dependencies(const std::map<uint64_t, TimelineJob>& jobs, const std::string& where) {
    for (const auto& [id, job] : jobs) {
        if (!job.dependency) {
            continue;
        }
        for (const DependencyTerm& term : job.dependency->terms) {
            for (uint64_t other : term.job_ids) {
                auto it = jobs.find(other);
                if (it == jobs.end() || it->second.spec.submit_time > job.spec.submit_time) {
                    bad_file(where, "job " + std::to_string(id) + " depends on job "
                                            + std::to_string(other)
                                            + ", which is not submitted before it");
                }
                if (it->second.array_id != 0) {
                    bad_file(where, "job " + std::to_string(id) + " depends on array task "
                                            + std::to_string(other) + ", which is not modelled");
                }
            }
        }
    }
}

std::optional<FairShare> read_fairshare(const Fields& scenario, int64_t now) {
    if (!scenario.has("fairshare")) {
        return std::nullopt;
    }
    const Fields block =
            scenario.object("fairshare", {"half_life_s", "algorithm", "usage", "weights"});
    if (now <= 0) {
        bad_file(scenario.path("now"),
                 "must be above 0 with fair-share (the usage ledger reads "
                 "time 0 as never advanced)");
    }
    FairShare fairshare;
    PriorityConfig& priority = fairshare.config.policy.priority;
    priority.decay_half_life_s = block.bounded("half_life_s", 0, kForever);
    priority.fairshare = block.has("algorithm") ? block.text("algorithm") : "classic";
    if (priority.fairshare != "classic" && priority.fairshare != "fair_tree") {
        bad_file(block.path("algorithm"),
                 "'" + priority.fairshare + "' (accepted: classic, fair_tree)");
    }
    std::map<UsageLedger::Key, double>& usage = fairshare.usage;
    const Json& recorded = block.value("usage");
    if (!recorded.is_object()) {
        bad_file(block.path("usage"), "expected {user: CPU-seconds}");
    }
    for (const auto& item : recorded.items()) {
        if (!item.value().is_number() || item.value().get<double>() < 0) {
            bad_file(block.path("usage") + "." + item.key(), "expected CPU-seconds >= 0");
        }
        usage[{item.key(), kRootAccount}] = item.value().get<double>();
    }
    if (block.has("weights")) {
        const Fields w = block.object(
                "weights", {"age", "fairshare", "job_size", "partition", "qos", "max_age_s"});
        priority.weight_age = w.bounded_or("age", 0, INT32_MAX, priority.weight_age);
        priority.weight_fairshare =
                w.bounded_or("fairshare", 0, INT32_MAX, priority.weight_fairshare);
        priority.weight_job_size = w.bounded_or("job_size", 0, INT32_MAX, priority.weight_job_size);
        priority.weight_partition =
                w.bounded_or("partition", 0, INT32_MAX, priority.weight_partition);
        priority.weight_qos = w.bounded_or("qos", 0, INT32_MAX, priority.weight_qos);
        priority.max_age_s = w.bounded_or("max_age_s", 1, kForever, priority.max_age_s);
    }
    return fairshare;
}

// The most tasks of one array that ever ran at once; a task ending when another starts does
// not overlap it.
int64_t most_running_at_once(const std::map<uint64_t, TimelineJob>& jobs, uint64_t array_id) {
    std::vector<std::pair<int64_t, int>> changes;  // (time, -1 at an end or +1 at a start)
    for (const auto& [id, job] : jobs) {
        if (job.array_id == array_id && job.start >= 0) {
            changes.emplace_back(job.start, +1);
            changes.emplace_back(job.end, -1);
        }
    }
    std::sort(changes.begin(), changes.end());
    int64_t running = 0;
    int64_t most = 0;
    for (const auto& [time, change] : changes) {
        running += change;
        most = std::max(most, running);
    }
    return most;
}

void check_final(const Fields& entry, const std::map<uint64_t, TimelineJob>& jobs) {
    const uint64_t id = expected_job(entry);
    auto it = jobs.find(id);
    if (it == jobs.end()) {
        bad_file(entry.path("job"), "job " + std::to_string(id) + " is not in the scenario");
    }
    const TimelineJob& job = it->second;
    EXPECT_EQ(std::string(job_state_name(job.state)), entry.text("state"))
            << "job " << id << ": final state";
    if (entry.has("reason")) {
        EXPECT_EQ(job.reason, entry.text("reason")) << "job " << id << ": last pending reason";
    }
    if (entry.has("time")) {
        EXPECT_EQ(job.end, entry.integer("time")) << "job " << id << ": end time";
    }
}

void check_timeline(const Fields& expect, const std::map<uint64_t, TimelineJob>& jobs) {
    std::map<uint64_t, int64_t> expected_starts;
    for (const Fields& entry : expect.each("starts", {"job", "time"})) {
        put_once(expected_starts, entry, entry.integer("time"));
    }
    std::map<uint64_t, int64_t> starts;
    for (const auto& [id, job] : jobs) {
        if (job.start >= 0) {
            starts[id] = job.start;
        }
    }
    expect_exactly(expected_starts, starts, "start at");
    for (const Fields& entry : expect.each_optional("final", {"job", "state", "reason", "time"})) {
        check_final(entry, jobs);
    }
    for (const Fields& entry : expect.each_optional("max_running", {"array", "max"})) {
        const auto array_id = static_cast<uint64_t>(entry.bounded("array", 1, INT64_MAX));
        auto first = jobs.find(array_id);
        if (first == jobs.end() || first->second.array_id != array_id) {
            bad_file(entry.path("array"), std::to_string(array_id) + " is not an array's id");
        }
        EXPECT_EQ(most_running_at_once(jobs, array_id), entry.integer("max"))
                << "array " << array_id << ": most tasks running at once";
    }
}

void run_timeline(const Fields& scenario) {
    const int64_t now = scenario.integer("now");
    Cluster cluster = read_cluster(scenario);
    std::optional<FairShare> fairshare = read_fairshare(scenario, now);
    std::map<uint64_t, TimelineJob> jobs;
    const KeySet keys = job_keys(
            {"run_s", "priority", "user", "dependency", "kill_on_invalid_dep", "array", "exit"});
    for (const Fields& entry : scenario.each("jobs", keys)) {
        for (TimelineJob& job : read_timeline_job(entry, cluster, fairshare.has_value())) {
            const uint64_t id = job.spec.id;
            if (job.spec.submit_time < now) {
                bad_file(entry.path("submit"),
                         "before the timeline starts at " + std::to_string(now));
            }
            if (!jobs.emplace(id, std::move(job)).second) {
                bad_file(entry.path("id"), "job id " + std::to_string(id) + " is used twice");
            }
        }
    }
    check_dependencies(jobs, scenario.path("jobs"));
    Timeline timeline(std::move(cluster), read_policy(scenario), std::move(jobs),
                      std::move(fairshare), now);
    timeline.run(now);
    check_timeline(scenario.object("expect", {"starts", "final", "max_running"}), timeline.jobs());
}

// ---- The files ----

const KeySet kCommonKeys = {
        "description",          "kind",    "now",   "policy", "nodes", "partitions",
        "advance_reservations", "network", "expect"};

KeySet common_keys_and(const KeySet& more) {
    KeySet keys = kCommonKeys;
    keys.insert(more.begin(), more.end());
    return keys;
}

// Required, though only people read it: a string, or a list of lines.
void check_description(const Fields& scenario) {
    const Json& description = scenario.value("description");
    const bool lines = description.is_array() && !description.empty()
                       && std::all_of(description.begin(), description.end(),
                                      [](const Json& line) { return line.is_string(); });
    if (!lines && !(description.is_string() && !description.get<std::string>().empty())) {
        bad_file(scenario.path("description"), "expected a string or a list of lines");
    }
}

void run_scenario(const Json& root, const std::string& file) {
    if (!root.is_object() || !root.contains("kind")) {
        bad_file(file, "missing key \"kind\" (accepted: pass, timeline)");
    }
    const std::string kind = root["kind"].is_string() ? root["kind"].get<std::string>() : "";
    if (kind == "pass") {
        const Fields scenario(root, file, common_keys_and({"running", "pending", "gpu_layouts"}));
        check_description(scenario);
        run_pass(scenario);
    } else if (kind == "timeline") {
        const Fields scenario(root, file, common_keys_and({"jobs", "fairshare"}));
        check_description(scenario);
        run_timeline(scenario);
    } else {
        bad_file(file + ".kind", root["kind"].dump() + " (accepted: pass, timeline)");
    }
}

// Full paths as strings: gtest cannot print a std::filesystem::path parameter.
std::vector<std::string> scenario_files() {
    std::vector<std::string> files;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(COHORT_SCENARIO_DIR, error)) {
        if (entry.path().extension() == ".json") {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Without this, an empty or misplaced folder would run no scenario and pass.
TEST(ScenarioFiles, FolderHoldsScenarios) {
    EXPECT_FALSE(scenario_files().empty()) << "no *.json scenarios in " << COHORT_SCENARIO_DIR;
}

class Scenario : public ::testing::TestWithParam<std::string> {};

TEST_P(Scenario, DecidesAsExpected) {
    const std::string file = std::filesystem::path(GetParam()).filename().string();
    SCOPED_TRACE("scenario " + file);
    try {
        std::ifstream in(GetParam());
        if (!in) {
            bad_file(file, "cannot be read");
        }
        Json root;
        try {
            root = Json::parse(in);
        } catch (const Json::exception& error) {
            bad_file(file, error.what());
        }
        run_scenario(root, file);
    } catch (const ScenarioError& error) {
        ADD_FAILURE() << "bad scenario file: " << error.what();
    } catch (const std::exception& error) {
        ADD_FAILURE() << file << ": " << error.what();
    }
}

// Test names are the file names, with what gtest does not accept turned into '_'.
std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string name = std::filesystem::path(info.param).stem().string();
    for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) {
            c = '_';
        }
    }
    return name;
}

INSTANTIATE_TEST_SUITE_P(Golden, Scenario, ::testing::ValuesIn(scenario_files()), test_name);

}  // namespace
}  // namespace cohort::sched
