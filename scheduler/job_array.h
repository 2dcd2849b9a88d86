// Job array specifications (--array): "0-15", "0,6,16-32", "0-15:4", "1,3,5-9:2%4", and the
// compact index sets an array's pending remainder keeps (one record for 100,000 tasks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace cohort::sched {

// Indexes 0..1000, as Slurm's MaxArraySize; a cluster raises it with `max_array_size`, up
// to Slurm's largest (what a client checks against, not knowing the cluster's).
inline constexpr uint32_t kDefaultMaxArraySize = 1001;
inline constexpr uint32_t kLargestMaxArraySize = 4000001;

// Ascending, unique task indexes, kept as runs (first, first + step, ..., last) so that
// "0-99999" costs one run, not 100,000 entries.
class ArrayIndexes {
public:
    struct Run {
        uint32_t first = 0;
        uint32_t last = 0;
        uint32_t step = 1;

        uint32_t size() const { return (last - first) / step + 1; }

        bool operator==(const Run&) const = default;
    };

    ArrayIndexes() = default;
    // `runs` ascending and disjoint, each run's `last` reachable from its `first`.
    explicit ArrayIndexes(std::vector<Run> runs);
    // From ascending, unique indexes.
    static ArrayIndexes from_sorted(const std::vector<uint32_t>& indexes);

    bool empty() const { return runs_.empty(); }

    uint32_t size() const { return size_; }

    uint32_t front() const { return runs_.front().first; }

    uint32_t back() const { return runs_.back().last; }

    const std::vector<Run>& runs() const { return runs_; }

    bool contains(uint32_t index) const { return position_of(index).has_value(); }

    // Where `index` stands among these (0 for the lowest); nullopt if it is not one of them.
    std::optional<uint32_t> position_of(uint32_t index) const;
    // The index at `position` (< size()).
    uint32_t at(uint32_t position) const;
    // Removes `index`; false if it was not one of them.
    bool erase(uint32_t index);
    std::vector<uint32_t> to_vector() const;
    // Slurm's notation: "0-99999", "1,3,5-9:2".
    std::string to_string() const;

    bool operator==(const ArrayIndexes&) const = default;

private:
    std::vector<Run> runs_;
    uint32_t size_ = 0;
};

struct ArraySpec {
    ArrayIndexes indexes;
    uint32_t max_running = 0;  // the %N throttle; 0: unlimited
    uint32_t step = 1;         // the number after the first ':', for SLURM_ARRAY_TASK_STEP
};

// Errors name the spec and what is accepted; every index must be below `max_size`, and
// overlapping items may not list more than `max_size` indexes in all.
Result<ArraySpec> parse_array_spec(std::string_view text, uint32_t max_size = kDefaultMaxArraySize);

}  // namespace cohort::sched
