// An availability profile: how much of one integer resource (processors, nodes) is free at
// every instant from now on, as a step function. Backfill plans against it: reservations
// are subtracted, finished work is given back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace cohort::sched {

class AvailabilityProfile {
public:
    // `capacity` is free from `origin` on.
    AvailabilityProfile(int64_t capacity, int64_t origin);

    int64_t capacity() const { return capacity_; }

    int64_t free_at(int64_t t) const;

    // The least that is free at any instant of [start, start + duration).
    int64_t min_free(int64_t start, int64_t duration) const;

    // Every time after `after` at which what is free changes.
    std::vector<int64_t> changes_after(int64_t after) const;

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
    void add(int64_t start, int64_t end, int64_t delta);
    void split_at(int64_t t);
    void merge_around(int64_t t);

    int64_t capacity_;
    // free_from_[t] = what is free from t until the next key (the last segment is endless).
    std::map<int64_t, int64_t> free_from_;
};

}  // namespace cohort::sched
