// The availability profile as an ordered map of breakpoints.
#include "scheduler/backfill/profile.h"

#include <algorithm>
#include <iterator>

namespace cohort::sched {

AvailabilityProfile::AvailabilityProfile(int64_t capacity, int64_t origin) : capacity_(capacity) {
    free_from_[origin] = capacity;
}

int64_t AvailabilityProfile::free_at(int64_t t) const {
    auto it = free_from_.upper_bound(t);
    if (it == free_from_.begin()) {
        return it->second;  // before the origin: as at the origin
    }
    return std::prev(it)->second;
}

int64_t AvailabilityProfile::min_free(int64_t start, int64_t duration) const {
    const int64_t end = start + duration;
    auto it = free_from_.upper_bound(start);
    if (it != free_from_.begin()) {
        --it;
    }
    int64_t least = capacity_;
    for (; it != free_from_.end() && it->first < end; ++it) {
        least = std::min(least, it->second);
    }
    return least;
}

std::vector<int64_t> AvailabilityProfile::changes_after(int64_t after) const {
    std::vector<int64_t> out;
    for (auto it = free_from_.upper_bound(after); it != free_from_.end(); ++it) {
        out.push_back(it->first);
    }
    return out;
}

bool AvailabilityProfile::fits(int64_t start, int64_t duration, int64_t amount) const {
    const int64_t end = start + duration;
    auto it = free_from_.upper_bound(start);
    if (it != free_from_.begin()) {
        --it;
    }
    for (; it != free_from_.end() && it->first < end; ++it) {
        if (it->second < amount) {
            return false;
        }
    }
    return true;
}

int64_t AvailabilityProfile::earliest_start(int64_t from, int64_t duration, int64_t amount) const {
    int64_t candidate = std::max(from, free_from_.begin()->first);
    auto it = std::prev(free_from_.upper_bound(candidate));
    // A segment short of `amount` inside the window moves the candidate to that segment's end.
    for (;;) {
        bool fits_here = true;
        for (auto segment = it;
             segment != free_from_.end() && segment->first < candidate + duration; ++segment) {
            if (segment->second < amount) {
                auto next = std::next(segment);
                if (next == free_from_.end()) {
                    return INT64_MAX;  // more than the capacity: never
                }
                candidate = next->first;
                it = next;
                fits_here = false;
                break;
            }
        }
        if (fits_here) {
            return candidate;
        }
    }
}

void AvailabilityProfile::split_at(int64_t t) {
    auto it = free_from_.upper_bound(t);
    if (it != free_from_.begin() && std::prev(it)->first == t) {
        return;
    }
    int64_t value = it == free_from_.begin() ? capacity_ : std::prev(it)->second;
    free_from_.emplace_hint(it, t, value);
}

void AvailabilityProfile::merge_around(int64_t t) {
    auto it = free_from_.find(t);
    if (it == free_from_.end()) {
        return;
    }
    if (it != free_from_.begin() && std::prev(it)->second == it->second) {
        free_from_.erase(it);
    }
}

void AvailabilityProfile::add(int64_t start, int64_t end, int64_t delta) {
    start = std::max(start, free_from_.begin()->first);
    if (end <= start) {
        return;
    }
    split_at(start);
    split_at(end);
    for (auto it = free_from_.find(start); it != free_from_.end() && it->first < end; ++it) {
        it->second += delta;
    }
    merge_around(end);
    merge_around(start);
}

void AvailabilityProfile::reserve(int64_t start, int64_t duration, int64_t amount) {
    add(start, start + duration, -amount);
}

void AvailabilityProfile::release(int64_t start, int64_t duration, int64_t amount) {
    add(start, start + duration, amount);
}

void AvailabilityProfile::advance_origin(int64_t t) {
    if (t <= free_from_.begin()->first) {
        return;
    }
    int64_t value = free_at(t);
    free_from_.erase(free_from_.begin(), free_from_.upper_bound(t));
    free_from_[t] = value;
    auto after = free_from_.upper_bound(t);
    if (after != free_from_.end() && after->second == value) {
        free_from_.erase(after);
    }
}

}  // namespace cohort::sched
