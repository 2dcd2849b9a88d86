// Rank-to-node distributions (block, cyclic, plane=N).
#include "common/task_distribution.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace cohort {

std::string TaskDistribution::name() const {
    switch (kind) {
        case Kind::kCyclic:
            return "cyclic";
        case Kind::kPlane:
            return "plane=" + std::to_string(plane_size);
        case Kind::kBlock:
            break;
    }
    return "block";
}

std::string TaskDistribution::slurm_name() const {
    return kind == Kind::kPlane ? "plane" : name();
}

Result<TaskDistribution> parse_distribution(const std::string& field, const std::string& text) {
    TaskDistribution dist;
    if (text.empty() || text == "block") {
        return dist;
    }
    if (text == "cyclic") {
        dist.kind = TaskDistribution::Kind::kCyclic;
        return dist;
    }
    const std::string plane = "plane=";
    if (text.rfind(plane, 0) == 0 && text.size() > plane.size()
        && text.find_first_not_of("0123456789", plane.size()) == std::string::npos) {
        errno = 0;
        const unsigned long size = std::strtoul(text.c_str() + plane.size(), nullptr, 10);
        if (errno == 0 && size > 0 && size <= std::numeric_limits<uint32_t>::max()) {
            dist.kind = TaskDistribution::Kind::kPlane;
            dist.plane_size = static_cast<uint32_t>(size);
            return dist;
        }
    }
    std::string why = "invalid value '" + text + "'";
    if (text.find(':') != std::string::npos || text.find(',') != std::string::npos) {
        why += ", socket/core levels and Pack/NoPack are not supported";
    }
    return Status::invalid(field + ": " + why + " (accepted: block, cyclic, plane=N with N >= 1)");
}

RankMap map_ranks(const std::vector<uint32_t>& tasks_per_node, const TaskDistribution& dist) {
    RankMap map;
    map.ranks_on_node.resize(tasks_per_node.size());
    uint64_t total = 0;
    for (uint32_t count : tasks_per_node) {
        total += count;
    }
    map.node_of.reserve(total);
    map.local_of.reserve(total);
    const uint32_t block = dist.kind == TaskDistribution::Kind::kCyclic ? 1
                           : dist.kind == TaskDistribution::Kind::kPlane
                                   ? std::max<uint32_t>(dist.plane_size, 1)
                                   : std::numeric_limits<uint32_t>::max();
    uint32_t rank = 0;
    while (rank < total) {
        for (uint32_t node = 0; node < tasks_per_node.size(); ++node) {
            auto& ranks = map.ranks_on_node[node];
            const uint32_t room = tasks_per_node[node] - static_cast<uint32_t>(ranks.size());
            for (uint32_t i = 0; i < std::min(block, room); ++i) {
                map.local_of.push_back(static_cast<uint32_t>(ranks.size()));
                map.node_of.push_back(node);
                ranks.push_back(rank++);
            }
        }
    }
    return map;
}

std::vector<uint32_t> distribution_counts(uint32_t ntasks,
                                          uint32_t nodes,
                                          const TaskDistribution& dist) {
    std::vector<uint32_t> counts(nodes, 0);
    if (nodes == 0) {
        return counts;
    }
    if (dist.kind != TaskDistribution::Kind::kPlane) {
        for (uint32_t i = 0; i < nodes; ++i) {
            counts[i] = ntasks / nodes + (i < ntasks % nodes ? 1 : 0);
        }
        return counts;
    }
    const uint32_t block = std::max<uint32_t>(dist.plane_size, 1);
    const uint64_t round = static_cast<uint64_t>(block) * nodes;
    const uint64_t full_rounds = ntasks / round;
    uint64_t left = ntasks % round;
    for (uint32_t i = 0; i < nodes; ++i) {
        const uint64_t extra = std::min<uint64_t>(left, block);
        counts[i] = static_cast<uint32_t>(full_rounds * block + extra);
        left -= extra;
    }
    return counts;
}

}  // namespace cohort
