// An availability profile: how much of one integer resource (processors, nodes) is free at
// every instant from now on, as a step function. Backfill plans against it: reservations
// are subtracted, finished work is given back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory_resource>
#include <utility>
#include <vector>

namespace cohort::sched {

class AvailabilityProfile {
public:
    // `capacity` is free from `origin` on.
    AvailabilityProfile(int64_t capacity, int64_t origin);
    // A copy whose steps live in `memory`, such as a pass's arena, which must outlive it.
    AvailabilityProfile(const AvailabilityProfile& other, std::pmr::memory_resource* memory);

    int64_t capacity() const { return capacity_; }

    int64_t free_at(int64_t t) const;

    // The least that is free at any instant of [start, start + duration).
    int64_t min_free(int64_t start, int64_t duration) const;

    // Appends every time in (after, until] at which what is free changes; true if it also
    // changes after `until`.
    bool append_changes_between(int64_t after, int64_t until, std::vector<int64_t>& out) const;

    // Calls visit(from, until, free) for each step's part inside [start, end), in time order.
    template <class Visit>
    void for_each_step(int64_t start, int64_t end, Visit visit) const {
        for (auto it = at(start); it != free_from_.end() && it->first < end; ++it) {
            const auto next = std::next(it);
            const int64_t until = next == free_from_.end() ? end : std::min(next->first, end);
            visit(std::max(it->first, start), until, it->second);
        }
    }

    // The first time after `t` at which what is free changes; INT64_MAX: none.
    int64_t next_change_after(int64_t t) const;

    // Is `amount` free during all of [start, start + duration)?
    bool fits(int64_t start, int64_t duration, int64_t amount) const;

    // The earliest t >= from at which `amount` stays free for `duration`; INT64_MAX when
    // amount exceeds the capacity (every reservation ends, so otherwise one exists).
    int64_t earliest_start(int64_t from, int64_t duration, int64_t amount) const;

    // REQUIRES: fits(start, duration, amount) for reserve.
    void reserve(int64_t start, int64_t duration, int64_t amount);
    // Gives back what reserve took; the part before the origin is already forgotten.
    void release(int64_t start, int64_t duration, int64_t amount);

    // Forgets the past: the profile starts at `t` afterwards.
    void advance_origin(int64_t t);

    size_t breakpoints() const { return free_from_.size(); }

private:
    using Step = std::pair<int64_t, int64_t>;  // from this time on, this much is free
    static constexpr size_t kLinearSearchSteps = 8;
    using Iterator = std::pmr::vector<Step>::iterator;
    using ConstIterator = std::pmr::vector<Step>::const_iterator;

    // The first step starting after t.
    ConstIterator after(int64_t t) const;
    // The step in force at t: the last starting at or before t (the first before the origin).
    ConstIterator at(int64_t t) const;
    void add(int64_t start, int64_t end, int64_t delta);
    Iterator split_at(int64_t t);
    void merge_at(int64_t t);

    int64_t capacity_;
    // Steps sorted by time, never empty; each lasts until the next (the last is endless).
    // A flat vector: a node's profile has a few steps, and a pass copies and scans many.
    std::pmr::vector<Step> free_from_;
};

}  // namespace cohort::sched
