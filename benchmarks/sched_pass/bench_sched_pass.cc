// One full scheduling pass (priority sort + backfill with reservations) on a synthetic
// cluster: N nodes, 10% of them running jobs, M pending jobs. Prints pass time and peak RSS.
//   bench_sched_pass --nodes N --pending M [--policy easy|conservative] [--json]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "scheduler/backfill/plan.h"

namespace {

using namespace cohort::sched;  // NOLINT(google-build-using-namespace): a benchmark's main

constexpr int32_t kCpusPerNode = 64;
constexpr int64_t kMemoryPerNode = 256 * 1024;
constexpr int kPartitions = 4;

// Peak resident set of this process (VmHWM), in MiB.
double peak_rss_mib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmHWM:", 0) == 0) {
            return std::stod(line.substr(6)) / 1024.0;
        }
    }
    return 0;
}

// Nodes in four partitions of equal size (the first overlapping all, as a default
// partition does); every eighth node has 8 GPUs; the first tenth runs jobs that fill it.
Snapshot synthetic_cluster(int nodes, int pending, std::mt19937_64& rng) {
    Snapshot s;
    s.now = 1'000'000;
    for (int i = 0; i < nodes; ++i) {
        NodeCapacity node;
        node.name = "node" + std::to_string(i);
        node.cpus = kCpusPerNode;
        node.memory_mib = kMemoryPerNode;
        node.up = true;
        node.gpus = i % 8 == 0 ? 8 : 0;
        s.nodes.push_back(std::move(node));
    }
    s.partitions.resize(kPartitions);
    for (int i = 0; i < nodes; ++i) {
        s.partitions[0].push_back(i);
        s.partitions[1 + i % (kPartitions - 1)].push_back(i);
    }
    std::uniform_int_distribution<int64_t> remaining(60, 24 * 3600);
    const int busy = nodes / 10;
    for (int i = 0; i < busy; ++i) {
        RunningAllocation r;
        r.nodes = {i};
        r.cpus_per_node = {kCpusPerNode};
        r.memory_mib_per_node = kMemoryPerNode / 2;
        r.expected_end = s.now + remaining(rng);
        r.gpus_per_node = s.nodes[static_cast<size_t>(i)].gpus;
        s.running.push_back(std::move(r));
    }
    // A mix like a busy HPC queue: most jobs on one node, some across many.
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<int> partition(0, kPartitions - 1);
    const int64_t limits[] = {600, 3600, 4 * 3600, 12 * 3600, 48 * 3600};
    for (int j = 0; j < pending; ++j) {
        PendingJob p;
        p.id = static_cast<uint64_t>(j + 1);
        p.submit_time = s.now - static_cast<int64_t>(u(rng) * 86400);
        p.priority = static_cast<int64_t>(u(rng) * 1e6);
        p.time_limit_s = limits[static_cast<size_t>(u(rng) * 5)];
        p.partition = partition(rng);
        const double kind = u(rng);
        if (kind < 0.6) {
            p.request.ntasks = 1 + static_cast<uint32_t>(u(rng) * 32);
        } else if (kind < 0.85) {
            p.request.nodes_min = 1;
            p.request.ntasks_per_node = kCpusPerNode;
        } else if (kind < 0.95) {
            p.request.nodes_min = 2 + static_cast<uint32_t>(u(rng) * 30);
            p.request.ntasks_per_node = kCpusPerNode;
        } else {
            p.request.nodes_min = 1;
            p.request.ntasks_per_node = 8;
            p.request.gpus_per_node = 1 + static_cast<int32_t>(u(rng) * 8);
        }
        p.request.memory_mib_per_node = static_cast<int64_t>(u(rng) * 64 * 1024);
        s.pending.push_back(std::move(p));
    }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"One scheduling pass on a synthetic cluster"};
    int nodes = 1000;
    int pending = 10000;
    std::string policy = "easy";
    bool json = false;
    app.add_option("--nodes", nodes, "nodes in the cluster")->check(CLI::PositiveNumber);
    app.add_option("--pending", pending, "pending jobs")->check(CLI::PositiveNumber);
    app.add_option("--policy", policy, "easy or conservative")
            ->check(CLI::IsMember({"easy", "conservative"}));
    app.add_flag("--json", json, "print one JSON object");
    CLI11_PARSE(app, argc, argv);

    std::mt19937_64 rng(42);
    Snapshot snapshot = synthetic_cluster(nodes, pending, rng);
    BackfillOptions options;
    options.policy = policy == "easy" ? BackfillPolicy::kEasy : BackfillPolicy::kConservative;
    const size_t running = snapshot.running.size();
    const auto t0 = std::chrono::steady_clock::now();
    Decisions decisions = plan(snapshot, options);
    const auto t1 = std::chrono::steady_clock::now();
    const double pass_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double rss = peak_rss_mib();
    if (json) {
        std::cout << nlohmann::json{{"nodes", nodes},
                                    {"pending", pending},
                                    {"running", running},
                                    {"policy", policy},
                                    {"pass_ms", pass_ms},
                                    {"peak_rss_mib", rss},
                                    {"starts", decisions.starts.size()},
                                    {"reservations", decisions.reservations.size()}}
                             .dump()
                  << "\n";
    } else {
        std::printf(
                "%d nodes, %d pending, %zu running, %s: pass %.1f ms, peak RSS %.1f MiB, "
                "%zu started, %zu reserved\n",
                nodes, pending, running, policy.c_str(), pass_ms, rss, decisions.starts.size(),
                decisions.reservations.size());
    }
    return 0;
}
