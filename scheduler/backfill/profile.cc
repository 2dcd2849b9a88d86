// The availability profile as a sorted vector of steps.
#include "scheduler/backfill/profile.h"

#include <algorithm>
#include <iterator>

namespace cohort::sched {

AvailabilityProfile::AvailabilityProfile(int64_t capacity, int64_t origin) : capacity_(capacity) {
    free_from_.emplace_back(origin, capacity);
}

AvailabilityProfile::AvailabilityProfile(const AvailabilityProfile& other,
                                         std::pmr::memory_resource* memory)
    : capacity_(other.capacity_), free_from_(other.free_from_, memory) {}

AvailabilityProfile::ConstIterator AvailabilityProfile::after(int64_t t) const {
    // A node's profile has a few steps, which a forward scan finds sooner than a search.
    if (free_from_.size() <= kLinearSearchSteps) {
        auto it = free_from_.begin();
        while (it != free_from_.end() && it->first <= t) {
            ++it;
        }
        return it;
    }
    return std::upper_bound(free_from_.begin(), free_from_.end(), t,
                            [](int64_t time, const Step& step) { return time < step.first; });
}

AvailabilityProfile::ConstIterator AvailabilityProfile::at(int64_t t) const {
    auto it = after(t);
    return it == free_from_.begin() ? it : std::prev(it);
}

int64_t AvailabilityProfile::free_at(int64_t t) const {
    return at(t)->second;
}

int64_t AvailabilityProfile::min_free(int64_t start, int64_t duration) const {
    const int64_t end = start + duration;
    int64_t least = capacity_;
    for (auto it = at(start); it != free_from_.end() && it->first < end; ++it) {
        least = std::min(least, it->second);
    }
    return least;
}

int64_t AvailabilityProfile::next_change_after(int64_t t) const {
    auto it = after(t);
    return it == free_from_.end() ? INT64_MAX : it->first;
}

bool AvailabilityProfile::append_changes_between(int64_t after_time,
                                                 int64_t until,
                                                 std::vector<int64_t>& out) const {
    auto it = after(after_time);
    for (; it != free_from_.end() && it->first <= until; ++it) {
        out.push_back(it->first);
    }
    return it != free_from_.end();
}

bool AvailabilityProfile::fits(int64_t start, int64_t duration, int64_t amount) const {
    const int64_t end = start + duration;
    for (auto it = at(start); it != free_from_.end() && it->first < end; ++it) {
        if (it->second < amount) {
            return false;
        }
    }
    return true;
}

int64_t AvailabilityProfile::earliest_start(int64_t from, int64_t duration, int64_t amount) const {
    int64_t candidate = std::max(from, free_from_.front().first);
    auto it = at(candidate);
    // A step short of `amount` inside the window moves the candidate to that step's end.
    for (;;) {
        bool fits_here = true;
        for (auto step = it; step != free_from_.end() && step->first < candidate + duration;
             ++step) {
            if (step->second < amount) {
                auto next = std::next(step);
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

AvailabilityProfile::Iterator AvailabilityProfile::split_at(int64_t t) {
    auto it = free_from_.begin() + (after(t) - free_from_.cbegin());
    if (it != free_from_.begin() && std::prev(it)->first == t) {
        return std::prev(it);
    }
    const int64_t value = it == free_from_.begin() ? capacity_ : std::prev(it)->second;
    return free_from_.emplace(it, t, value);
}

void AvailabilityProfile::merge_at(int64_t t) {
    auto it = free_from_.begin() + (after(t) - free_from_.cbegin());
    if (it == free_from_.begin() || std::prev(it)->first != t) {
        return;
    }
    --it;
    if (it != free_from_.begin() && std::prev(it)->second == it->second) {
        free_from_.erase(it);
    }
}

void AvailabilityProfile::add(int64_t start, int64_t end, int64_t delta) {
    start = std::max(start, free_from_.front().first);
    if (end <= start) {
        return;
    }
    split_at(start);
    split_at(end);
    for (auto it = free_from_.begin() + (at(start) - free_from_.cbegin());
         it != free_from_.end() && it->first < end; ++it) {
        it->second += delta;
    }
    merge_at(end);
    merge_at(start);
}

void AvailabilityProfile::reserve(int64_t start, int64_t duration, int64_t amount) {
    add(start, start + duration, -amount);
}

void AvailabilityProfile::release(int64_t start, int64_t duration, int64_t amount) {
    add(start, start + duration, amount);
}

void AvailabilityProfile::advance_origin(int64_t t) {
    if (t <= free_from_.front().first) {
        return;
    }
    const int64_t value = free_at(t);
    auto first_after = free_from_.begin() + (after(t) - free_from_.cbegin());
    free_from_.erase(free_from_.begin(), first_after);
    free_from_.emplace(free_from_.begin(), t, value);
    if (free_from_.size() > 1 && free_from_[1].second == value) {
        free_from_.erase(free_from_.begin() + 1);
    }
}

}  // namespace cohort::sched
