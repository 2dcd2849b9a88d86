// The multi-node part of the placement benchmark: whole-node jobs on a two-level switch tree,
// leaf switches spanned against the fewest that could have held each job.
#pragma once

#include <cstdint>
#include <vector>

namespace bench {

enum class NodeAllocator {
    kCohort,
    kFirstFit,
    kRandom
};

struct SpanMetrics {
    int multi_node = 0;         // jobs of 2+ nodes placed
    double span_ratio_sum = 0;  // leaves spanned / fewest possible, summed over them
    int blocked = 0;            // jobs that found too few free nodes
    std::vector<double> decision_us;
};

struct TreeShape {
    int leaves = 16;
    int nodes_per_leaf = 4;
    int leaves_per_pod = 4;
};

// A Poisson stream of whole-node jobs (sizes drawn from `node_counts`) at `load` of the
// cluster's nodes, mean duration 1.0, fixed seed; a job that does not fit is dropped.
SpanMetrics simulate_spans(const TreeShape& shape,
                           const std::vector<int>& node_counts,
                           double load,
                           int arrivals,
                           uint64_t seed,
                           NodeAllocator allocator);

}  // namespace bench
