// Job dependencies in the controller: checked at submit, evaluated by every scheduling pass
// against the jobs in memory and the final states of recently finished ones.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {

Status Controller::check_dependency(const protocol::JobSpec& spec) const {
    if (spec.dependency.empty()) {
        return Status::ok();
    }
    auto dependency = sched::parse_dependency(spec.dependency);
    if (!dependency) {
        return dependency.status();
    }
    for (const auto& term : dependency->terms) {
        for (uint64_t id : term.job_ids) {
            if (id >= next_job_id_) {
                return Status::invalid(fmt::format(
                        "--dependency: job {} does not exist (accepted: ids of submitted jobs)",
                        id));
            }
        }
    }
    return Status::ok();
}

sched::DependencyStatus Controller::dependency_status(const Job& job, int64_t now) const {
    auto dependency = sched::parse_dependency(job.spec.dependency.str());
    if (!dependency) {
        return sched::DependencyStatus::kNeverSatisfied;  // checked at submit; stored bytes changed
    }
    // Singleton: no job of the same name and user runs, or waits with a smaller id.
    bool singleton_clear = true;
    const bool singleton = std::any_of(
            dependency->terms.begin(), dependency->terms.end(),
            [](const auto& term) { return term.type == sched::DependencyType::kSingleton; });
    for (auto it = singleton ? jobs_.begin() : jobs_.end(); it != jobs_.end(); ++it) {
        const auto& [id, other] = *it;
        if (id != job.job_id && other.uid == job.uid && other.spec.name == job.spec.name
            && (other.state == JobState::kRunning || other.state == JobState::kCompleting
                || (other.state == JobState::kPending && id < job.job_id))) {
            singleton_clear = false;
            break;
        }
    }
    return sched::evaluate_dependency(
            *dependency, [this](uint64_t id) { return jobs_.other_job(id); }, now, singleton_clear);
}

void Controller::cancel_pending(Job& job, const std::string& reason) {
    job.state = JobState::kCancelled;
    job.end_time = clock_.unix_seconds();
    job.reason = reason;
    persist(job);  // leaves memory once durable
    if (auto client = job_clients_.find(job.job_id); client != job_clients_.end()) {
        client->second->send_error(Status::unavailable(
                fmt::format("job {} was cancelled while pending ({})", job.job_id, reason)));
        client->second->close_after_writes();
        job_clients_.erase(client);
    }
}

void Controller::cancel_remainder(ArrayRemainder& remainder, const std::string& reason) {
    remainder.job.state = JobState::kCancelled;
    remainder.job.end_time = clock_.unix_seconds();
    remainder.job.reason = reason;
    persist(remainder);  // leaves memory once durable
}

}  // namespace cohort::ctld
