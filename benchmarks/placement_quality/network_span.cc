// Whole-node jobs on a two-level tree: Cohort's network placement against lowest-index
// first-fit and random free nodes, in the same Poisson stream.
#include "benchmarks/placement_quality/network_span.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <random>
#include <string>

#include "scheduler/placement/network_fit.h"

namespace bench {
namespace {

using cohort::NetworkConfig;
using cohort::sched::NetworkTopology;
using cohort::sched::ResourceRequest;
using cohort::sched::TaskCapacity;

NetworkConfig tree_config(const TreeShape& shape, std::vector<std::string>& nodes) {
    NetworkConfig config;
    const int pods = (shape.leaves + shape.leaves_per_pod - 1) / shape.leaves_per_pod;
    for (int leaf = 0; leaf < shape.leaves; ++leaf) {
        cohort::SwitchConfig sw{"leaf" + std::to_string(leaf), {}, {}};
        for (int n = 0; n < shape.nodes_per_leaf; ++n) {
            nodes.push_back("n" + std::to_string(leaf * shape.nodes_per_leaf + n));
            sw.nodes.push_back(nodes.back());
        }
        config.switches.push_back(std::move(sw));
    }
    cohort::SwitchConfig top{"top", {}, {}};
    for (int pod = 0; pod < pods; ++pod) {
        cohort::SwitchConfig sw{"pod" + std::to_string(pod), {}, {}};
        for (int leaf = pod * shape.leaves_per_pod;
             leaf < std::min(shape.leaves, (pod + 1) * shape.leaves_per_pod); ++leaf) {
            sw.switches.push_back("leaf" + std::to_string(leaf));
        }
        top.switches.push_back(sw.name);
        config.switches.push_back(std::move(sw));
    }
    config.switches.push_back(std::move(top));
    return config;
}

std::vector<int> choose(NodeAllocator allocator,
                        const NetworkTopology& network,
                        const std::vector<bool>& busy,
                        int count,
                        std::mt19937_64& rng) {
    std::vector<int> free;
    for (size_t n = 0; n < busy.size(); ++n) {
        if (!busy[n]) {
            free.push_back(static_cast<int>(n));
        }
    }
    if (static_cast<int>(free.size()) < count) {
        return {};
    }
    if (allocator == NodeAllocator::kCohort) {
        ResourceRequest request;
        request.nodes_min = static_cast<uint32_t>(count);
        request.ntasks_per_node = 1;
        const TaskCapacity one_if_free = [&](int n) -> uint32_t {
            return busy[static_cast<size_t>(n)] ? 0 : 1;
        };
        auto placement = cohort::sched::place_on_network(request, free, one_if_free, network, true);
        return placement ? placement->nodes : std::vector<int>{};
    }
    if (allocator == NodeAllocator::kRandom) {
        std::shuffle(free.begin(), free.end(), rng);
    }
    free.resize(static_cast<size_t>(count));
    return free;
}

}  // namespace

SpanMetrics simulate_spans(const TreeShape& shape,
                           const std::vector<int>& node_counts,
                           double load,
                           int arrivals,
                           uint64_t seed,
                           NodeAllocator allocator) {
    std::vector<std::string> names;
    const NetworkTopology network = cohort::sched::build_network(tree_config(shape, names), names);
    const size_t nodes = names.size();
    double mean_nodes = 0;
    for (int k : node_counts) {
        mean_nodes += k;
    }
    mean_nodes /= static_cast<double>(node_counts.size());
    std::mt19937_64 rng(seed);         // the same arrival stream for every allocator
    std::mt19937_64 choice(seed + 1);  // the random allocator's own draws
    std::exponential_distribution<double> gap(load * static_cast<double>(nodes) / mean_nodes);
    std::exponential_distribution<double> duration(1.0);
    std::uniform_int_distribution<size_t> size(0, node_counts.size() - 1);

    std::vector<bool> busy(nodes, false);
    using End = std::pair<double, std::vector<int>>;
    auto later = [](const End& a, const End& b) {
        return a.first > b.first;
    };
    std::priority_queue<End, std::vector<End>, decltype(later)> running(later);
    SpanMetrics m;
    double now = 0;
    for (int i = 0; i < arrivals; ++i) {
        now += gap(rng);
        const int count = node_counts[size(rng)];
        const double ends = now + duration(rng);
        while (!running.empty() && running.top().first <= now) {
            for (int n : running.top().second) {
                busy[static_cast<size_t>(n)] = false;
            }
            running.pop();
        }
        const auto start = std::chrono::steady_clock::now();
        std::vector<int> chosen = choose(allocator, network, busy, count, choice);
        m.decision_us.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                        .count());
        if (chosen.empty()) {
            ++m.blocked;
            continue;
        }
        if (count >= 2) {
            std::vector<int> free;
            for (size_t n = 0; n < nodes; ++n) {
                if (!busy[n]) {
                    free.push_back(static_cast<int>(n));
                }
            }
            ResourceRequest request;
            request.nodes_min = static_cast<uint32_t>(count);
            request.ntasks_per_node = 1;
            const auto fewest = cohort::sched::fewest_leaf_switches(
                    request, free,
                    [&](int n) -> uint32_t { return busy[static_cast<size_t>(n)] ? 0 : 1; },
                    network);
            ++m.multi_node;
            m.span_ratio_sum +=
                    static_cast<double>(cohort::sched::leaf_switches_spanned(network, chosen))
                    / *fewest;
        }
        for (int n : chosen) {
            busy[static_cast<size_t>(n)] = true;
        }
        running.push({ends, std::move(chosen)});
    }
    return m;
}

}  // namespace bench
