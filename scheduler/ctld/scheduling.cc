// The scheduling loop around the pure core, and the job life cycle it drives.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "scheduler/ctld/clock.h"
#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/submit_validation.h"
#include "scheduler/plan.h"

namespace cohort::ctld {
namespace {

constexpr int64_t kBasePriority = 1'000'000;
constexpr int64_t kMaxAgeMinutes = 7 * 24 * 60;

// Older first (age capped), shifted by --nice; higher runs first.
int64_t job_priority(const protocol::JobRecord& job, int64_t now) {
    int64_t age_minutes = std::clamp<int64_t>((now - job.submit_time) / 60, 0, kMaxAgeMinutes);
    return kBasePriority + age_minutes - job.spec.nice;
}

}  // namespace

void refresh_node_state(NodeEntry& node) {
    if (node.info.state == "DOWN") {
        return;
    }
    if (node.info.cpus_alloc <= 0) {
        node.info.state = "IDLE";
    } else if (node.info.cpus_alloc >= node.info.resources.cpus) {
        node.info.state = "ALLOCATED";
    } else {
        node.info.state = "MIXED";
    }
}

std::vector<sched::NodeCapacity> Controller::capacities() const {
    std::vector<sched::NodeCapacity> out;
    out.reserve(nodes_.size());
    for (const auto& node : nodes_) {
        sched::NodeCapacity cap;
        cap.name = node.info.name;
        cap.cpus = node.info.resources.cpus;
        cap.memory_mib = node.info.resources.memory_mib;
        cap.gpus = node.info.resources.gpus;
        cap.up = node.registered && node.responding && node.info.state != "DOWN";
        out.push_back(std::move(cap));
    }
    return out;
}

void Controller::claim_resources(const protocol::JobRecord& job) {
    for (size_t i = 0; i < job.nodes.size(); ++i) {
        NodeEntry* node = find_node(job.nodes[i]);
        if (node == nullptr) {
            continue;
        }
        node->info.cpus_alloc += static_cast<int32_t>(job.cpus_per_node.at(i));
        node->info.memory_alloc_mib += job.mem_per_node_mib;
        node->jobs.insert(job.job_id);
        refresh_node_state(*node);
    }
}

void Controller::release_resources(const protocol::JobRecord& job) {
    for (size_t i = 0; i < job.nodes.size(); ++i) {
        NodeEntry* node = find_node(job.nodes[i]);
        if (node == nullptr || node->jobs.erase(job.job_id) == 0) {
            continue;
        }
        node->info.cpus_alloc -= static_cast<int32_t>(job.cpus_per_node.at(i));
        node->info.memory_alloc_mib -= job.mem_per_node_mib;
        refresh_node_state(*node);
    }
}

void Controller::persist(const protocol::JobRecord& job, std::function<void()> after) {
    const uint64_t id = job.job_id;
    writer_.write({job}, [this, id, after = std::move(after)](const Status& status) {
        on_strand([this, id, after, status] {
            if (!status) {
                spdlog::error("job {}: state not stored: {}", id, status.message());
            }
            // Finished jobs leave memory once durable; accounting answers for them.
            auto it = jobs_.find(id);
            if (it != jobs_.end() && is_final(it->second.state)) {
                remember_final(it->second);
                jobs_.erase(it);
            }
            if (after) {
                after();
            }
        });
    });
}

void Controller::after_durable(std::function<void()> then) {
    // The writer commits in queue order, so an empty write completes after every earlier one.
    writer_.write({}, [this, then = std::move(then)](const Status&) { on_strand(then); });
}

void Controller::request_schedule() {
    if (schedule_posted_) {
        return;
    }
    schedule_posted_ = true;
    on_strand([this] { schedule(); });
}

void Controller::schedule() {
    schedule_posted_ = false;
    sched::Snapshot snapshot;
    snapshot.now = unix_now();
    snapshot.nodes = capacities();
    std::map<std::string, int> partition_index;
    for (const auto& partition : config_.partitions) {
        partition_index[partition.name] = static_cast<int>(snapshot.partitions.size());
        snapshot.partitions.push_back(partition_nodes_.at(partition.name));
    }
    std::map<std::string, int> node_index;
    for (size_t i = 0; i < nodes_.size(); ++i) {
        node_index[nodes_[i].info.name] = static_cast<int>(i);
    }
    for (const auto& [id, job] : jobs_) {
        if (job.state != JobState::kRunning && job.state != JobState::kCompleting) {
            continue;
        }
        sched::RunningAllocation running;
        for (size_t i = 0; i < job.nodes.size(); ++i) {
            if (auto it = node_index.find(job.nodes[i]); it != node_index.end()) {
                running.nodes.push_back(it->second);
                running.cpus_per_node.push_back(static_cast<int32_t>(job.cpus_per_node.at(i)));
            }
        }
        running.memory_mib_per_node = job.mem_per_node_mib;
        // A job past its limit is being ended; plan as if it frees its nodes soon.
        running.expected_end = job.time_limit_s < 0
                ? snapshot.now + sched::kForever
                : std::max(job.start_time + std::min(job.time_limit_s, sched::kForever),
                        snapshot.now + 1);
        snapshot.running.push_back(std::move(running));
    }
    for (auto& [id, job] : jobs_) {
        job.expected_start = 0;  // this pass plans anew
    }
    std::vector<uint64_t> never;  // dependencies that can never be met
    // Array throttles: how many more tasks of each array may start in this pass.
    std::map<uint64_t, int64_t> array_room;
    for (const auto& [id, job] : jobs_) {
        if (job.is_array_task() && job.array_max_running > 0) {
            auto [it, fresh] = array_room.emplace(job.array_job_id, job.array_max_running);
            if (job.state == JobState::kRunning || job.state == JobState::kCompleting) {
                it->second--;
            }
        }
    }
    for (auto& [id, job] : jobs_) {
        if (job.state != JobState::kPending || job.held || uncommitted_.count(id) != 0) {
            continue;
        }
        if (job.spec.begin_time > snapshot.now) {
            job.reason = "BeginTime";  // the periodic pass starts it once the time has come
            continue;
        }
        if (!job.spec.dependency.empty()) {
            sched::DependencyStatus status = dependency_status(job, snapshot.now);
            if (status == sched::DependencyStatus::kWaiting) {
                job.reason = "Dependency";
                continue;
            }
            if (status == sched::DependencyStatus::kNeverSatisfied) {
                job.reason = "DependencyNeverSatisfied";
                if (job.spec.kill_on_invalid_dep) {
                    never.push_back(id);
                }
                continue;
            }
        }
        if (auto room = array_room.find(job.array_job_id); room != array_room.end()) {
            if (room->second <= 0) {
                job.reason = "JobArrayTaskLimit";
                continue;
            }
            room->second--;  // at most the throttle's worth of tasks is offered to the pass
        }
        sched::PendingJob pending;
        pending.id = id;
        pending.submit_time = job.submit_time;
        pending.priority = job_priority(job, snapshot.now);
        pending.time_limit_s = job.time_limit_s;
        pending.request = request_of(job.spec);
        pending.partition = partition_index.at(job.partition);
        snapshot.pending.push_back(std::move(pending));
    }
    for (uint64_t id : never) {
        spdlog::info("job {}: dependency '{}' can never be satisfied; cancelling", id,
                jobs_.at(id).spec.dependency);
        cancel_pending(jobs_.at(id), "DependencyNeverSatisfied");
    }
    if (snapshot.pending.empty()) {
        return;
    }
    sched::Decisions decisions = sched::plan(snapshot, backfill_);
    for (const auto& wait : decisions.waits) {
        protocol::JobRecord& job = jobs_.at(wait.job_id);
        job.reason = sched::wait_reason_name(wait, snapshot.limits);
    }
    for (const auto& reserved : decisions.reservations) {
        jobs_.at(reserved.job_id).expected_start = reserved.start;
    }
    for (const auto& start : decisions.starts) {
        protocol::JobRecord& job = jobs_.at(start.job_id);
        job.state = JobState::kRunning;
        job.reason = "None";
        job.start_time = snapshot.now;
        job.nodes.clear();
        for (int index : start.placement.nodes) {
            job.nodes.push_back(nodes_[index].info.name);
        }
        job.tasks_per_node = start.placement.tasks_per_node;
        job.cpus_per_node.assign(start.placement.cpus_per_node.begin(),
                start.placement.cpus_per_node.end());
        job.mem_per_node_mib = start.placement.memory_mib_per_node;
        claim_resources(job);
        // Launch only once RUNNING is durable, so a restarted controller never meets a
        // running job it believes pending.
        persist(job, [this, id = job.job_id] { launch(id); });
    }
}

void Controller::launch(uint64_t job_id) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || it->second.state != JobState::kRunning) {
        return;
    }
    protocol::JobRecord& job = it->second;
    if (job.interactive) {
        auto client = job_clients_.find(job_id);
        if (client == job_clients_.end()) {
            end_job(job, JobState::kCancelled, "");
            return;
        }
        ConnectionPtr conn = client->second;
        open_step(job, protocol::StepCreateRequest{job_id, job.spec.name},
                [this, conn, job_id](const Result<protocol::StepLayout>& layout) {
                    if (!layout) {
                        conn->send_error(layout.status());
                        on_strand([this, job_id] {
                            if (auto found = jobs_.find(job_id); found != jobs_.end()) {
                                end_job(found->second, JobState::kFailed, "");
                            }
                        });
                        return;
                    }
                    protocol::AllocationReply reply;
                    reply.job_id = job_id;
                    reply.started = true;
                    reply.layout = *layout;
                    conn->send(reply);
                });
        return;
    }
    NodeEntry* node = find_node(job.nodes.front());
    if (node == nullptr || !node->connection) {
        end_job(job, JobState::kNodeFail, "");
        return;
    }
    protocol::LaunchBatchRequest request;
    request.job = job;
    request.cluster_name = config_.cluster_name;
    request.submit_dir = job.spec.cwd;
    node->connection->send(request);
}

void Controller::end_job(protocol::JobRecord& job, JobState final_state,
        const std::string& clean_node) {
    if (job.state != JobState::kRunning) {
        return;
    }
    job.state = JobState::kCompleting;
    job.final_state = final_state;
    job.end_time = unix_now();
    job.nodes_cleaning.clear();
    for (const auto& name : job.nodes) {
        NodeEntry* node = find_node(name);
        if (name == clean_node || node == nullptr || !node->connection || !node->responding) {
            continue;
        }
        job.nodes_cleaning.push_back(name);
        node->connection->send(protocol::TerminateJobRequest{job.job_id, 0});
    }
    if (job.nodes_cleaning.empty()) {
        finish_if_clean(job);
    } else {
        persist(job);
    }
}

void Controller::finish_if_clean(protocol::JobRecord& job) {
    if (job.state != JobState::kCompleting || !job.nodes_cleaning.empty()) {
        return;
    }
    job.state = job.final_state;
    release_resources(job);
    // Steps whose client never reported (it died, or the job was cancelled) end with the job.
    for (auto it = open_steps_.lower_bound({job.job_id, 0});
            it != open_steps_.end() && it->first.first == job.job_id;) {
        close_step(it->second, job.state == JobState::kCompleted ? JobState::kCancelled
                                                                 : job.state,
                0, 0);
        it = open_steps_.erase(it);
    }
    job_clients_.erase(job.job_id);
    spdlog::info("job {} {} (exit {}:{})", job.job_id, job_state_name(job.state), job.exit_code,
            job.exit_signal);
    persist(job);
    request_schedule();
}

}  // namespace cohort::ctld
