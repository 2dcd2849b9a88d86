// Unfinished jobs, their durability, and what dependencies see of finished ones.
#include "scheduler/ctld/job_table.h"

#include <algorithm>

namespace cohort::ctld {
namespace {

// The entry of `remainders` (by array id, each with `pending` and `all` indexes) whose
// pending tasks include job `id`, and that task's index.
template <typename Remainders>
std::optional<std::pair<typename Remainders::const_iterator, uint32_t>> holding(
        const Remainders& remainders, uint64_t id) {
    auto it = remainders.upper_bound(id);
    if (it == remainders.begin()) {
        return std::nullopt;
    }
    --it;
    const uint64_t position = id - it->first;
    if (position >= it->second.all.size()) {
        return std::nullopt;
    }
    const uint32_t index = it->second.all.at(static_cast<uint32_t>(position));
    if (!it->second.pending.contains(index)) {
        return std::nullopt;
    }
    return std::pair{it, index};
}

}  // namespace

void JobTable::load(Job job) {
    if (job.is_array_task()) {
        array_sizes_[job.array_job_id] = job.array_count;
    }
    put(std::move(job));
}

Job& JobTable::put(Job job) {
    const uint64_t id = job.job_id;
    auto it = jobs_.insert_or_assign(id, std::move(job)).first;
    by_id_[id] = it;
    return it->second;
}

void JobTable::add_submitted(Job job) {
    uncommitted_.insert(job.job_id);
    load(std::move(job));
}

void JobTable::load(ArrayRemainder remainder) {
    const uint64_t id = remainder.job.job_id;
    array_sizes_[id] = remainder.job.array_count;
    remainders_.insert_or_assign(id, std::move(remainder));
}

void JobTable::add_submitted(ArrayRemainder remainder) {
    uncommitted_.insert(remainder.job.job_id);
    load(std::move(remainder));
}

std::optional<std::pair<uint64_t, uint32_t>> JobTable::unsplit_task(uint64_t id) const {
    if (auto held = holding(remainders_, id)) {
        return std::pair{held->first->first, held->second};
    }
    return std::nullopt;
}

Job& JobTable::split_task(uint64_t array_id, uint32_t index) {
    auto it = remainders_.find(array_id);
    ArrayRemainder& remainder = it->second;
    Job task = remainder.job;
    task.job_id = remainder.task_id(index);
    task.array_task_id = index;
    remainder.pending.erase(index);
    if (remainder.pending.empty()) {
        remainders_.erase(it);
    }
    return put(std::move(task));
}

void JobTable::forget_remainder(uint64_t array_id) {
    auto it = remainders_.find(array_id);
    if (it == remainders_.end()) {
        return;
    }
    remember_ended(it->second);
    remainders_.erase(it);
}

void JobTable::remember_ended(const ArrayRemainder& remainder) {
    const uint64_t id = remainder.job.job_id;
    array_sizes_[id] = remainder.job.array_count;
    if (ended_remainders_
                .insert_or_assign(
                        id, EndedRemainder{remainder.job.state, remainder.pending, remainder.all})
                .second) {
        ended_order_.push_back(id);
    }
    if (ended_order_.size() > kEndedRemaindersKept) {
        ended_remainders_.erase(ended_order_.front());
        ended_order_.pop_front();
    }
}

void JobTable::remember_final(const Job& job) {
    if (finished_states_.emplace(job.job_id, sched::OtherJob{job.state, job.start_time}).second) {
        finished_order_.push_back(job.job_id);
    }
    if (finished_order_.size() > kFinishedStatesKept) {
        finished_states_.erase(finished_order_.front());
        finished_order_.pop_front();
    }
}

std::vector<uint64_t> JobTable::array_tasks(uint64_t id) const {
    std::vector<uint64_t> tasks;
    auto array = array_sizes_.find(id);
    if (array == array_sizes_.end()) {
        return tasks;
    }
    // Task ids are consecutive from the array's id.
    for (auto it = jobs_.lower_bound(id); it != jobs_.end() && it->first < id + array->second;
         ++it) {
        if (it->second.array_job_id == id) {
            tasks.push_back(it->first);
        }
    }
    return tasks;
}

std::optional<sched::OtherJob> JobTable::other_job(uint64_t id) const {
    auto array = array_sizes_.find(id);
    if (array == array_sizes_.end()) {
        return single_job(id);
    }
    sched::OtherJob combined{JobState::kCompleted, 0};
    bool all_final = true;
    bool any_started = false;
    for (uint64_t task = id; task < id + array->second; ++task) {
        auto state = single_job(task);
        if (!state) {
            continue;  // forgotten long ago: it finished
        }
        any_started = any_started || state->state != JobState::kPending;
        combined.start_time = std::max(combined.start_time, state->start_time);
        if (!is_final(state->state)) {
            all_final = false;
        } else if (state->state != JobState::kCompleted) {
            combined.state = JobState::kFailed;
        }
    }
    if (!all_final) {
        combined.state = any_started ? JobState::kRunning : JobState::kPending;
    }
    return combined;
}

std::optional<sched::OtherJob> JobTable::single_job(uint64_t id) const {
    if (auto it = find(id); it != jobs_.end()) {
        return sched::OtherJob{it->second.state, it->second.start_time};
    }
    if (auto it = finished_states_.find(id); it != finished_states_.end()) {
        return it->second;
    }
    // A task not split off from its array's record waits, or ended with it.
    if (holding(remainders_, id)) {
        return sched::OtherJob{JobState::kPending, 0};
    }
    if (auto ended = holding(ended_remainders_, id)) {
        return sched::OtherJob{ended->first->second.state, 0};
    }
    return std::nullopt;
}

}  // namespace cohort::ctld
