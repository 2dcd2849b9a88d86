// How a step's ranks are dealt over its nodes (srun's --distribution / -m, first level):
// block fills each node before the next (ranks 0,1 | 2,3), cyclic deals one rank to each node
// in turn (0,2 | 1,3), plane=N deals blocks of N (plane=2 over 2 nodes: 0,1,4,5 | 2,3,6,7).
// Pure: every part that knows rank -> node (the controller's layout, the PMIx maps, PMI-1's
// PMI_process_mapping, the task variables) asks this one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/serialize_fields.h"
#include "common/status.h"

namespace cohort {

struct TaskDistribution {
    enum class Kind : uint8_t {
        kBlock,
        kCyclic,
        kPlane
    };
    Kind kind = Kind::kBlock;
    uint32_t plane_size = 0;  // kPlane only

    // "block", "cyclic", "plane=4": what parse_distribution reads back.
    std::string name() const;
    // SLURM_DISTRIBUTION's value ("block", "cyclic", "plane").
    std::string slurm_name() const;
    bool operator==(const TaskDistribution&) const = default;

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        auto code = static_cast<uint8_t>(kind);
        serialize_fields(ar, code, plane_size);
        kind = static_cast<Kind>(code);
    }
};

// Parses a --distribution value; `field` names the option (or variable) in the error. Empty
// text is the default, block.
Result<TaskDistribution> parse_distribution(const std::string& field, const std::string& text);

// Where each rank runs, for per-node task counts and a distribution.
struct RankMap {
    std::vector<std::vector<uint32_t>> ranks_on_node;  // per node: its global ranks, ascending
    std::vector<uint32_t> node_of;                     // per rank: its node index
    std::vector<uint32_t> local_of;                    // per rank: its index on that node

    uint32_t ntasks() const { return static_cast<uint32_t>(node_of.size()); }
};

// Ranks are dealt in blocks (block: a whole node, cyclic: 1, plane: N) to the nodes in turn;
// a node that has its count is skipped, and a block is cut at the count.
RankMap map_ranks(const std::vector<uint32_t>& tasks_per_node, const TaskDistribution& dist);

// How many of `ntasks` tasks each of `nodes` nodes runs: plane deals blocks of N, the others
// spread the tasks evenly with the earlier nodes taking one more.
std::vector<uint32_t> distribution_counts(uint32_t ntasks,
                                          uint32_t nodes,
                                          const TaskDistribution& dist);

}  // namespace cohort
