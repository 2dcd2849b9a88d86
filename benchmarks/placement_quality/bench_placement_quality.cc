// GPU placement quality: Cohort's selector against lowest-index first-fit and random, on
// clusters of recorded nodes fed the same Poisson streams of GPU requests (fixed seeds).
//   bench_placement_quality [--data ../shared/data] [--csv FILE] [--json] [--load 0.85]
//                           [--arrivals 200000] [--seed N]
// A request that cannot start when it arrives is counted and dropped (a loss system), so all
// allocators see identical arrivals. A fourth allocator, end_time_oracle, is a reference no
// scheduler can deploy: it knows every job's exact end time and packs jobs that end together,
// to show how far knowing the future takes a choice of node. The multi-node part
// (network_span.cc) streams whole-node jobs onto a two-level switch tree and gives
// switch_span_ratio; the GPU runs leave it null, as the network runs leave the per-node GPU
// metrics.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "benchmarks/placement_quality/network_span.h"
#include "common/topology/discover.h"
#include "scheduler/placement/gpu_select.h"

namespace {

using namespace cohort::sched;  // NOLINT(google-build-using-namespace): a benchmark's main

constexpr int kNodes = 16;
// Enough arrivals that the alibaba mix (under 1% of requests of 4+ GPUs) yields over 1,500
// large requests per run: with 40,000 the ratio to first-fit still moved by 0.3 between seeds.
constexpr int kDefaultArrivals = 200000;
constexpr double kDefaultLoad = 0.85;  // offered load, of the cluster's GPUs on average
constexpr uint64_t kDefaultSeed = 20240611;
constexpr int kSeriesPoints = 200;  // points of the fragmentation series per run, each the
                                    // mean over the arrivals since the last one

struct Mix {
    std::string name;
    std::vector<int> sizes;  // GPUs per request, drawn uniformly from this list
};

struct Cluster {
    std::string name;
    NodeGpuLayout layout;
    int cpus = 0;
    int cpus_per_gpu = 0;
};

struct Stream {
    double load = kDefaultLoad;
    int arrivals = kDefaultArrivals;
    uint64_t seed = kDefaultSeed;
};

struct Metrics {
    int multi_gpu = 0, locality_hits = 0;
    int big = 0, big_blocked_feasible = 0;
    double fragmentation_sum = 0;
    int fragmentation_samples = 0;
    std::vector<std::pair<double, double>> fragmentation_over_time;  // (time, fragmentation)
    long cpus = 0, local_cpus = 0;
    long tasks = 0, paired_tasks = 0;
    std::vector<double> decision_us;
};

enum class Allocator {
    kCohort,
    kFirstFit,
    kRandom,
    kEndTimeOracle
};

const char* name_of(Allocator a) {
    switch (a) {
        case Allocator::kCohort:
            return "cohort";
        case Allocator::kFirstFit:
            return "first_fit";
        case Allocator::kRandom:
            return "random";
        case Allocator::kEndTimeOracle:
            return "end_time_oracle";
    }
    return "?";
}

struct Placed {
    int node = -1;
    GpuSelection selection;
};

// Enough free GPUs and CPUs on the node for k GPUs and their CPUs, wherever they are.
bool has_room(const Cluster& c, const NodeFree& f, int k) {
    return static_cast<int>(f.gpus.size()) >= k
           && static_cast<int>(f.cpus.size()) >= k * c.cpus_per_gpu;
}

// Lowest-index first-fit (Slurm-like without topology) or random: the first (or a random)
// node with k free GPUs, its lowest (or random) free GPUs and CPUs, and the first (or a
// random) NIC, since without pairing a job gets the default device.
std::optional<Placed> baseline(const Cluster& c,
                               const std::vector<NodeFree>& free,
                               int k,
                               bool random,
                               std::mt19937_64& rng) {
    std::vector<int> fits;
    for (int n = 0; n < kNodes; ++n) {
        if (has_room(c, free[static_cast<size_t>(n)], k)) {
            fits.push_back(n);
        }
    }
    if (fits.empty()) {
        return std::nullopt;
    }
    Placed p;
    p.node = random ? fits[std::uniform_int_distribution<size_t>(0, fits.size() - 1)(rng)]
                    : fits.front();
    std::vector<int> gpus = free[static_cast<size_t>(p.node)].gpus;
    std::vector<int> cpus = free[static_cast<size_t>(p.node)].cpus;
    if (random) {
        std::shuffle(gpus.begin(), gpus.end(), rng);
        std::shuffle(cpus.begin(), cpus.end(), rng);
    }
    gpus.resize(static_cast<size_t>(k));
    std::sort(gpus.begin(), gpus.end());
    p.selection.gpus = gpus;
    for (int i = 0; i < k; ++i) {
        TaskBinding t;
        t.gpus = {gpus[static_cast<size_t>(i)]};
        t.cpus.assign(cpus.begin() + i * c.cpus_per_gpu, cpus.begin() + (i + 1) * c.cpus_per_gpu);
        const size_t nics = c.layout.nics.size();
        t.nic = nics == 0 ? -1
                : random ? static_cast<int>(std::uniform_int_distribution<size_t>(0, nics - 1)(rng))
                         : 0;
        p.selection.cpus.insert(p.selection.cpus.end(), t.cpus.begin(), t.cpus.end());
        p.selection.tasks.push_back(std::move(t));
    }
    return p;
}

// The clairvoyant reference: among nodes with room, a partly busy node before a whole one, and
// there the one whose busy time the job extends least (none when it ends before the node's
// last job), then the best fit; Cohort's selector picks the GPUs on that node.
std::optional<Placed> end_time_oracle(const Cluster& c,
                                      const std::vector<NodeFree>& free,
                                      const std::vector<std::multiset<double>>& ends_on_node,
                                      int k,
                                      double job_end) {
    std::optional<std::tuple<bool, double, size_t, int>> best;  // smaller is better
    for (int n = 0; n < kNodes; ++n) {
        const NodeFree& f = free[static_cast<size_t>(n)];
        if (!has_room(c, f, k)) {
            continue;
        }
        const std::multiset<double>& ends = ends_on_node[static_cast<size_t>(n)];
        const bool whole = ends.empty();
        const double extension = whole ? 0.0 : std::max(0.0, job_end - *ends.rbegin());
        const std::tuple<bool, double, size_t, int> score{whole, extension, f.gpus.size(), n};
        if (!best || score < *best) {
            best = score;
        }
    }
    if (!best) {
        return std::nullopt;
    }
    const int node = std::get<3>(*best);
    auto selection = select_gpus(c.layout, free[static_cast<size_t>(node)], {k, c.cpus_per_gpu, 0});
    if (!selection) {
        return std::nullopt;
    }
    return Placed{node, std::move(*selection)};
}

std::vector<int> minus(const std::vector<int>& from, const std::vector<int>& taken) {
    std::vector<int> out;
    std::set_difference(from.begin(), from.end(), taken.begin(), taken.end(),
                        std::back_inserter(out));
    return out;
}

std::vector<int> plus(std::vector<int> a, const std::vector<int>& b) {
    a.insert(a.end(), b.begin(), b.end());
    std::sort(a.begin(), a.end());
    return a;
}

void record(const Cluster& c, const NodeFree& before, const GpuSelection& s, int k, Metrics& m) {
    if (k >= 2) {
        ++m.multi_gpu;
        m.locality_hits +=
                locality_of(c.layout, s.gpus) == best_locality(c.layout, before.gpus, k) ? 1 : 0;
    }
    for (const TaskBinding& t : s.tasks) {
        const GpuLocality& g = c.layout.gpus[static_cast<size_t>(t.gpus.front())];
        for (int cpu : t.cpus) {
            ++m.cpus;
            m.local_cpus += std::count(g.local_cpus.begin(), g.local_cpus.end(), cpu) > 0 ? 1 : 0;
        }
        if (g.nic >= 0) {
            ++m.tasks;
            m.paired_tasks += t.nic == g.nic ? 1 : 0;
        }
    }
}

Metrics simulate(const Cluster& c, const Mix& mix, Allocator alloc, const Stream& stream) {
    std::mt19937_64 rng(stream.seed);         // the same arrival stream for every allocator
    std::mt19937_64 choice(stream.seed + 1);  // the random allocator's own draws
    const int per_node = static_cast<int>(c.layout.gpus.size());
    double mean_k = 0;
    for (int k : mix.sizes) {
        mean_k += std::min(k, per_node);
    }
    mean_k /= static_cast<double>(mix.sizes.size());
    const double rate = stream.load * kNodes * per_node / mean_k;  // mean duration 1.0
    std::exponential_distribution<double> gap(rate), duration(1.0);
    std::uniform_int_distribution<size_t> size(0, mix.sizes.size() - 1);

    std::vector<int> all_gpus(static_cast<size_t>(per_node)), all_cpus(static_cast<size_t>(c.cpus));
    std::iota(all_gpus.begin(), all_gpus.end(), 0);
    std::iota(all_cpus.begin(), all_cpus.end(), 0);
    std::vector<NodeFree> free(kNodes, NodeFree{all_gpus, all_cpus});
    using End = std::pair<double, std::pair<int, GpuSelection>>;
    auto later = [](const End& a, const End& b) {
        return a.first > b.first;
    };
    std::priority_queue<End, std::vector<End>, decltype(later)> running(later);
    std::vector<std::multiset<double>> ends_on_node(kNodes);

    Metrics m;
    double window_sum = 0;  // the fragmentation series' current window
    int window_samples = 0;
    double now = 0;
    for (int i = 0; i < stream.arrivals; ++i) {
        now += gap(rng);
        const int k = std::min(mix.sizes[size(rng)], per_node);
        const double ends = now + duration(rng);
        while (!running.empty() && running.top().first <= now) {
            const auto& [node, s] = running.top().second;
            free[static_cast<size_t>(node)].gpus =
                    plus(free[static_cast<size_t>(node)].gpus, s.gpus);
            free[static_cast<size_t>(node)].cpus =
                    plus(free[static_cast<size_t>(node)].cpus, s.cpus);
            auto& node_ends = ends_on_node[static_cast<size_t>(node)];
            node_ends.erase(node_ends.find(running.top().first));
            running.pop();
        }
        int free_total = 0, whole = 0;
        for (const NodeFree& f : free) {
            free_total += static_cast<int>(f.gpus.size());
            whole += static_cast<int>(f.gpus.size()) == per_node ? 1 : 0;
        }
        if (free_total / per_node > 0) {
            const double fragmentation = 1.0 - static_cast<double>(whole) / (free_total / per_node);
            m.fragmentation_sum += fragmentation;
            ++m.fragmentation_samples;
            window_sum += fragmentation;
            ++window_samples;
        }
        if ((i + 1) % std::max(1, stream.arrivals / kSeriesPoints) == 0 && window_samples > 0) {
            m.fragmentation_over_time.emplace_back(now, window_sum / window_samples);
            window_sum = 0;
            window_samples = 0;
        }
        const auto start = std::chrono::steady_clock::now();
        std::optional<Placed> p;
        if (alloc == Allocator::kCohort) {
            std::vector<NodeCandidate> nodes;
            for (const NodeFree& f : free) {
                nodes.push_back({&c.layout, f});
            }
            if (auto chosen = choose_node(nodes, {k, c.cpus_per_gpu, 0}); chosen) {
                p = Placed{chosen->node, std::move(chosen->selection)};
            }
        } else if (alloc == Allocator::kEndTimeOracle) {
            p = end_time_oracle(c, free, ends_on_node, k, ends);
        } else {
            p = baseline(c, free, k, alloc == Allocator::kRandom, choice);
        }
        m.decision_us.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                        .count());
        if (k >= 4) {
            ++m.big;
            m.big_blocked_feasible += !p && free_total >= k ? 1 : 0;
        }
        if (!p) {
            continue;
        }
        NodeFree& f = free[static_cast<size_t>(p->node)];
        record(c, f, p->selection, k, m);
        std::vector<int> cpus = p->selection.cpus;
        std::sort(cpus.begin(), cpus.end());
        f.gpus = minus(f.gpus, p->selection.gpus);
        f.cpus = minus(f.cpus, cpus);
        p->selection.cpus = cpus;
        ends_on_node[static_cast<size_t>(p->node)].insert(ends);
        running.push({ends, {p->node, std::move(p->selection)}});
    }
    return m;
}

nlohmann::json summary(const Metrics& m) {
    auto rate = [](double num, double den) {
        return den > 0 ? nlohmann::json(num / den) : nlohmann::json(nullptr);
    };
    std::vector<double> us = m.decision_us;
    std::sort(us.begin(), us.end());
    return {{"locality_hit_rate", rate(m.locality_hits, m.multi_gpu)},
            {"blocked_feasible_rate", rate(m.big_blocked_feasible, m.big)},
            {"fragmentation", rate(m.fragmentation_sum, m.fragmentation_samples)},
            {"numa_local_rate",
             rate(static_cast<double>(m.local_cpus), static_cast<double>(m.cpus))},
            {"nic_pairing_rate",
             rate(static_cast<double>(m.paired_tasks), static_cast<double>(m.tasks))},
            {"switch_span_ratio", nullptr},
            {"decision_us_p99", us.empty() ? 0.0 : us[us.size() * 99 / 100]}};
}

// Whole-GPU request sizes of the Alibaba trace's GPU pods.
std::optional<Mix> alibaba_mix(const std::string& csv) {
    std::ifstream in(csv);
    if (!in) {
        return std::nullopt;
    }
    Mix mix{"alibaba", {}};
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::stringstream fields(line);
        std::string field;
        for (int i = 0; i < 4 && std::getline(fields, field, ','); ++i) {
        }
        if (!field.empty() && std::stoi(field) > 0) {
            mix.sizes.push_back(std::stoi(field));
        }
    }
    return mix;
}

// Up to 4, and no more than the GPUs' local CPUs allow when every GPU is busy, so that
// NUMA-local binding is always possible for an allocator that looks for it.
int cpus_per_gpu(const cohort::topology::NodeTopology& t) {
    int out = 4;
    for (const auto& g : t.gpus) {
        const auto sharing = std::count_if(t.gpus.begin(), t.gpus.end(), [&g](const auto& other) {
            return other.local_cpus == g.local_cpus;
        });
        out = std::min(out, static_cast<int>(g.local_cpus.size() / static_cast<size_t>(sharing)));
    }
    return out;
}

nlohmann::json span_summary(const bench::SpanMetrics& m) {
    std::vector<double> us = m.decision_us;
    std::sort(us.begin(), us.end());
    return {{"locality_hit_rate", nullptr},
            {"blocked_feasible_rate", nullptr},
            {"fragmentation", nullptr},
            {"numa_local_rate", nullptr},
            {"nic_pairing_rate", nullptr},
            {"switch_span_ratio",
             m.multi_node > 0 ? nlohmann::json(m.span_ratio_sum / m.multi_node) : nullptr},
            {"decision_us_p99", us.empty() ? 0.0 : us[us.size() * 99 / 100]}};
}

std::string cell(const nlohmann::json& v) {
    char buf[32];
    if (v.is_null()) {
        return "n/a";
    }
    std::snprintf(buf, sizeof buf, "%.3f", v.get<double>());
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"GPU placement quality: cohort vs first-fit vs random"};
    std::string data = "../shared/data";
    std::string csv_path = "benchmarks/results/placement_quality.csv";
    bool json = false;
    Stream stream;
    app.add_option("--data", data, "the shared data folder");
    app.add_option("--csv", csv_path, "where to write the CSV");
    app.add_flag("--json", json, "print JSON instead of a table");
    app.add_option("--load", stream.load, "offered load, a fraction of the cluster's GPUs (nodes)")
            ->check(CLI::Range(0.05, 1.5));
    app.add_option("--arrivals", stream.arrivals, "requests per run")
            ->check(CLI::Range(100, 10'000'000));
    app.add_option("--seed", stream.seed, "seed of the arrival streams");
    CLI11_PARSE(app, argc, argv);

    std::optional<Mix> alibaba = alibaba_mix(data + "/traces/alibaba-openb_pod_list_default.csv");
    if (!alibaba) {
        std::cerr << data << "/traces/alibaba-openb_pod_list_default.csv not found (--data)\n";
        return 1;
    }
    // The heavier mix: 1/2/4/8 GPUs in proportions 40/25/20/15.
    Mix heavy{"1-2-4-8", {}};
    for (auto [k, weight] : {std::pair{1, 8}, {2, 5}, {4, 4}, {8, 3}}) {
        heavy.sizes.insert(heavy.sizes.end(), static_cast<size_t>(weight), k);
    }
    std::vector<Cluster> clusters;
    for (auto [name, file] : {std::pair{"dgx2", "hwloc-nvidiaDGX2.xml"},
                              {"xe8640", "fluxcore-ipa20.xml"},
                              {"single-root-pcie", "hwloc-linux-32intel64-2p8co2t+8ve.xml"},
                              {"juwels", "psmgmt-jwb0001.xml"}}) {
        auto t = cohort::topology::load_topology_xml(data + "/topologies/" + file);
        if (!t) {
            std::cerr << t.status().message() << "\n";
            return 1;
        }
        clusters.push_back({name, gpu_layout_of(*t), t->pus, cpus_per_gpu(*t)});
    }
    nlohmann::json runs = nlohmann::json::array();
    std::filesystem::create_directories(std::filesystem::path(csv_path).parent_path());
    std::ofstream csv(csv_path);
    const std::string series_path =
            csv_path.substr(0, csv_path.rfind(".csv")) + "-fragmentation.csv";
    std::ofstream series(series_path);
    series << "cluster,mix,allocator,time,fragmentation\n";
    csv << "cluster,mix,allocator,locality_hit_rate,blocked_feasible_rate,fragmentation,"
           "numa_local_rate,nic_pairing_rate,switch_span_ratio,decision_us_p99\n";
    const char* keys[] = {"locality_hit_rate", "blocked_feasible_rate", "fragmentation",
                          "numa_local_rate",   "nic_pairing_rate",      "switch_span_ratio",
                          "decision_us_p99"};
    if (!json) {
        std::printf("%-17s %-13s %-15s %8s %8s %8s %8s %8s %6s %9s\n", "cluster", "mix",
                    "allocator", "locality", "blocked", "frag", "numa", "nic", "span", "p99 us");
    }
    for (const Cluster& c : clusters) {
        for (const Mix& mix : {*alibaba, heavy}) {
            nlohmann::json run{{"cluster", c.name}, {"mix", mix.name}};
            for (Allocator a : {Allocator::kCohort, Allocator::kFirstFit, Allocator::kRandom,
                                Allocator::kEndTimeOracle}) {
                const Metrics metrics = simulate(c, mix, a, stream);
                for (const auto& [t, f] : metrics.fragmentation_over_time) {
                    series << c.name << "," << mix.name << "," << name_of(a) << "," << t << "," << f
                           << "\n";
                }
                const nlohmann::json s = summary(metrics);
                run[name_of(a)] = s;
                csv << c.name << "," << mix.name << "," << name_of(a);
                for (const char* k : keys) {
                    csv << "," << (s[k].is_null() ? "" : s[k].dump());
                }
                csv << "\n";
                if (!json) {
                    std::printf("%-17s %-13s %-15s %8s %8s %8s %8s %8s %6s %9s\n", c.name.c_str(),
                                mix.name.c_str(), name_of(a), cell(s[keys[0]]).c_str(),
                                cell(s[keys[1]]).c_str(), cell(s[keys[2]]).c_str(),
                                cell(s[keys[3]]).c_str(), cell(s[keys[4]]).c_str(),
                                cell(s[keys[5]]).c_str(), cell(s[keys[6]]).c_str());
                }
            }
            runs.push_back(run);
        }
    }
    // Whole-node jobs of 1/2/4/8 nodes (40/25/20/15%) and of 2-16 nodes, on 16 leaf switches
    // of 4 nodes under 4 pods.
    const std::vector<std::pair<std::string, std::vector<int>>> node_mixes = {
            {"nodes-1-2-4-8", {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8}},
            {"nodes-2-16", {2, 3, 4, 5, 6, 8, 12, 16}}};
    const bench::TreeShape tree;
    for (const auto& [mix_name, counts] : node_mixes) {
        nlohmann::json run{{"cluster", "tree-16x4"}, {"mix", mix_name}};
        for (auto [a, node_alloc] : {std::pair{Allocator::kCohort, bench::NodeAllocator::kCohort},
                                     {Allocator::kFirstFit, bench::NodeAllocator::kFirstFit},
                                     {Allocator::kRandom, bench::NodeAllocator::kRandom}}) {
            const nlohmann::json s = span_summary(bench::simulate_spans(
                    tree, counts, stream.load, stream.arrivals, stream.seed, node_alloc));
            run[name_of(a)] = s;
            csv << "tree-16x4," << mix_name << "," << name_of(a);
            for (const char* k : keys) {
                csv << "," << (s[k].is_null() ? "" : s[k].dump());
            }
            csv << "\n";
            if (!json) {
                std::printf("%-17s %-13s %-15s %8s %8s %8s %8s %8s %6s %9s\n", "tree-16x4",
                            mix_name.c_str(), name_of(a), "n/a", "n/a", "n/a", "n/a", "n/a",
                            cell(s["switch_span_ratio"]).c_str(),
                            cell(s["decision_us_p99"]).c_str());
            }
        }
        runs.push_back(run);
    }
    if (json) {
        std::cout << nlohmann::json{{"runs", runs}}.dump(2) << "\n";
    } else {
        std::printf(
                "n/a: nothing to measure (no request of 2+ GPUs, no CPUs asked, no NIC "
                "recorded). CSV: %s\n",
                csv_path.c_str());
    }
    return 0;
}
