// scontrol update job: changes to one job (a hetjob's leader: to every component), checked
// together before any is applied, so a refused update changes nothing.
#include <spdlog/spdlog.h>

#include "common/begin_time.h"
#include "common/time_spec.h"
#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/submit_validation.h"
#include "scheduler/dependency.h"

namespace cohort::ctld {
namespace {

constexpr const char* kFields =
        "TimeLimit, Partition, QOS, Nice, JobName, Dependency, StartTime, Comment";

// Fields that only a job that has not started may change: they decide where and when it runs.
bool pending_only(const std::string& key) {
    return key == "partition" || key == "qos" || key == "dependency" || key == "starttime"
           || key == "begintime";
}

}  // namespace

void Controller::handle_update(const ConnectionPtr& conn,
                               const protocol::Credential& cred,
                               const protocol::JobUpdateRequest& request) {
    auto it = jobs_.find(request.job_id);
    if (it == jobs_.end() || is_final(it->second.state)) {
        conn->send_error(Status::not_found(
                fmt::format("job {}: no such pending or running job", request.job_id)));
        return;
    }
    if (Status owner = check_owner(cred, it->second); !owner) {
        conn->send_error(owner);
        return;
    }
    // A hetjob's leader stands for every component, as in scontrol; each is checked before
    // any is changed.
    std::vector<Job*> targets{&it->second};
    for (uint32_t offset = 1; it->second.is_het_leader() && offset < it->second.het_size;
         ++offset) {
        if (auto component = jobs_.find(request.job_id + offset);
            component != jobs_.end() && !is_final(component->second.state)) {
            targets.push_back(&component->second);
        }
    }
    std::vector<protocol::JobRecord> updated;
    for (const Job* job : targets) {
        auto record = updated_record(*job, request, roles_.is_operator(cred.uid));
        if (!record) {
            conn->send_error(record.status());
            return;
        }
        updated.push_back(std::move(*record));
    }
    spdlog::info("job {}: updated by uid {}", request.job_id, cred.uid);
    for (size_t i = 0; i < targets.size(); ++i) {
        Job& job = *targets[i];
        const bool moves_end =
                job.state == JobState::kRunning && updated[i].time_limit_s != job.time_limit_s;
        job = job_from_record(updated[i]);
        const bool last = i + 1 == targets.size();
        persist(job, [conn, last] {
            if (last) {
                conn->send(protocol::AckReply{});
            }
        });
        if (moves_end) {
            watch_time_limit(job);
            // Its agents enforce the limit: a lower one may end the job at once.
            for (const std::string& name : job.nodes) {
                NodeEntry* node = nodes_.find(name);
                if (node != nullptr && node->connection) {
                    node->connection->send(end_time_of(job));
                }
            }
        }
    }
    request_schedule();
}

Result<protocol::JobRecord> Controller::updated_record(const Job& job,
                                                       const protocol::JobUpdateRequest& request,
                                                       bool by_operator) const {
    protocol::JobRecord updated = to_record(job);
    protocol::JobSpec& spec = updated.spec;
    bool placement_changed = false;
    for (const auto& [key, value] : request.changes) {
        if (pending_only(key) && job.state != JobState::kPending) {
            return Status::invalid(fmt::format(
                    "{}: job {} has started (accepted: changes to pending jobs; a running job "
                    "may change TimeLimit, JobName, Nice and Comment)",
                    key, job.job_id));
        }
        if (key == "timelimit") {
            auto limit = parse_time_limit(value);
            if (!limit) {
                return limit.status().with_context("TimeLimit");
            }
            const bool raises = job.time_limit_s >= 0 && (*limit < 0 || *limit > job.time_limit_s);
            if (raises && !by_operator) {
                return Status::denied(fmt::format(
                        "TimeLimit: only an operator may raise job {}'s time limit (accepted: "
                        "at most {})",
                        job.job_id, format_duration(job.time_limit_s)));
            }
            spec.time_limit_s = *limit;
            placement_changed = true;
        } else if (key == "partition" || key == "qos") {
            (key == "qos" ? spec.qos : spec.partition) = value;
            placement_changed = true;
        } else if (key == "nice") {
            try {
                size_t used = 0;
                spec.nice = std::stoi(value, &used);
                if (used != value.size()) {
                    throw std::invalid_argument(value);
                }
            } catch (const std::exception&) {
                return Status::invalid("Nice: invalid value '" + value
                                       + "' (accepted: an integer, e.g. 100)");
            }
            if (spec.nice < 0 && !by_operator) {
                return Status::denied(
                        "Nice: only an operator may give a negative nice (accepted: 0 or more)");
            }
        } else if (key == "jobname" || key == "name") {
            if (value.empty()) {
                return Status::invalid("JobName: empty (accepted: a name)");
            }
            spec.name = value;
        } else if (key == "dependency") {
            if (!value.empty()) {
                if (auto parsed = sched::parse_dependency(value); !parsed) {
                    return parsed.status();
                }
            }
            spec.dependency = value;
        } else if (key == "starttime" || key == "begintime") {
            auto begin = parse_begin_time(value, clock_.unix_seconds());
            if (!begin) {
                return begin.status().with_context("StartTime");
            }
            spec.begin_time = *begin;
        } else if (key == "comment") {
            spec.comment = value;
        } else {
            return Status::invalid(fmt::format("{}: unknown field (accepted: {})", key, kFields));
        }
    }
    if (placement_changed) {
        const std::vector<sched::NodeCapacity> nodes = nodes_.capacities();
        auto validated =
                validate_submission(spec, SubmitContext{config_, nodes, partition_nodes_,
                                                        reservations_.all(), job.user_name});
        if (!validated) {
            return validated.status();
        }
        updated.partition = validated->partition->name;
        updated.time_limit_s = validated->time_limit_s;
        spec.qos = validated->qos;
    }
    if (spec.dependency != job.spec.dependency.str() && !spec.dependency.empty()) {
        if (Status dependency = check_dependency(spec); !dependency) {
            return dependency;
        }
    }
    return updated;
}

}  // namespace cohort::ctld
