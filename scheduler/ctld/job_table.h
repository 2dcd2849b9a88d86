// The controller's jobs: the unfinished ones (in memory without their payload), the pending
// remainders of arrays, which of them are not yet durable, the final states of recently
// finished ones and the size of each array, which dependencies on finished jobs and arrays
// are judged by.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/protocol/job_types.h"
#include "scheduler/ctld/job.h"
#include "scheduler/dependency.h"

namespace cohort::ctld {

class JobTable {
public:
    using Map = std::map<uint64_t, Job>;
    using Remainders = std::map<uint64_t, ArrayRemainder>;  // by array id

    // Final states kept for dependencies; beyond this the oldest are forgotten.
    static constexpr size_t kFinishedStatesKept = 200000;
    static constexpr size_t kEndedRemaindersKept = 10000;

    // The unfinished jobs, by id.
    Map::iterator find(uint64_t id) {
        auto it = by_id_.find(id);
        return it == by_id_.end() ? jobs_.end() : it->second;
    }

    Map::const_iterator find(uint64_t id) const {
        auto it = by_id_.find(id);
        return it == by_id_.end() ? jobs_.end() : Map::const_iterator(it->second);
    }

    Job& at(uint64_t id) { return by_id_.at(id)->second; }

    const Job& at(uint64_t id) const { return by_id_.at(id)->second; }

    Map::iterator begin() { return jobs_.begin(); }

    Map::iterator end() { return jobs_.end(); }

    Map::const_iterator begin() const { return jobs_.begin(); }

    Map::const_iterator end() const { return jobs_.end(); }

    size_t size() const { return jobs_.size(); }

    // A job loaded from the state store: durable already.
    void load(Job job);
    // A submitted job, not durable until committed() (queries and passes skip it till then).
    void add_submitted(Job job);

    // Arrays' tasks not yet split off, one record per array, by array id.
    Remainders& remainders() { return remainders_; }

    const Remainders& remainders() const { return remainders_; }

    void load(ArrayRemainder remainder);
    void add_submitted(ArrayRemainder remainder);
    // The array and index of job `id` while it is a task in a remainder; nullopt otherwise.
    std::optional<std::pair<uint64_t, uint32_t>> unsplit_task(uint64_t id) const;
    // Splits task `index` off array `array_id`'s remainder into a pending job of its own; a
    // remainder left without tasks is dropped (the caller stores both changes).
    Job& split_task(uint64_t array_id, uint32_t index);
    // A remainder that ended (cancelled) leaves memory; dependencies remember how its tasks
    // ended (the last kEndedRemaindersKept of them).
    void forget_remainder(uint64_t array_id);
    // An ended remainder read back from the store, for dependencies after a restart.
    void remember_ended(const ArrayRemainder& remainder);

    void committed(uint64_t id) { uncommitted_.erase(id); }

    bool is_committed(uint64_t id) const { return uncommitted_.count(id) == 0; }

    // A finished job leaves memory; its final state stays for dependencies.
    void forget(uint64_t id) {
        if (auto it = by_id_.find(id); it != by_id_.end()) {
            jobs_.erase(it->second);
            by_id_.erase(it);
        }
    }

    void remember_final(const Job& job);

    // The ids of array `id`'s tasks still in the table; empty when `id` is no array.
    std::vector<uint64_t> array_tasks(uint64_t id) const;

    // What dependencies see of job (or array) `id`: an array's id stands for all its tasks,
    // done when all are and COMPLETED only if all are. nullopt: never existed (or forgotten).
    std::optional<sched::OtherJob> other_job(uint64_t id) const;

private:
    // How an ended remainder's tasks ended.
    struct EndedRemainder {
        JobState state = JobState::kCancelled;
        sched::ArrayIndexes pending;
        sched::ArrayIndexes all;
    };

    std::optional<sched::OtherJob> single_job(uint64_t id) const;
    Job& put(Job job);

    Map jobs_;
    // The same jobs hashed: a lookup in the 100,000-node tree missed the cache at most of its
    // levels (about 10 us here), and every heartbeat looks up the jobs its node runs.
    std::unordered_map<uint64_t, Map::iterator> by_id_;
    std::set<uint64_t> uncommitted_;
    std::map<uint64_t, sched::OtherJob> finished_states_;
    std::deque<uint64_t> finished_order_;
    std::map<uint64_t, uint32_t> array_sizes_;  // array id -> tasks (ids id .. id + n - 1)
    Remainders remainders_;
    std::map<uint64_t, EndedRemainder> ended_remainders_;  // by array id
    std::deque<uint64_t> ended_order_;
};

}  // namespace cohort::ctld
