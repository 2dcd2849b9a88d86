// Client requests: submit, allocate, query, cancel/hold/release, steps.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <pwd.h>
#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "common/generic_gres.h"
#include "common/hostlist.h"
#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/job_list_sender.h"
#include "scheduler/ctld/submit_validation.h"
#include "scheduler/job_array.h"
#include "scheduler/step_layout.h"

namespace cohort::ctld {
namespace {

bool wanted_state(const std::vector<JobState>& states, JobState state) {
    if (states.empty()) {
        return !is_final(state);
    }
    return std::find(states.begin(), states.end(), state) != states.end();
}

bool matches(const protocol::JobFilterSpec& filter, const Job& job) {
    return wanted_state(filter.states, job.state)
           && (filter.user.empty() || job.user_name == filter.user)
           && (filter.name.empty() || job.spec.name == filter.name)
           && (filter.partition.empty() || job.partition == filter.partition)
           && (filter.account.empty() || job.spec.account == filter.account);
}

struct JobSelection {
    std::vector<uint64_t> ids;         // unfinished, durable, may be acted on; each once
    std::vector<uint64_t> remainders;  // arrays whose remainder is acted on, as one record
    // Named tasks still in their array's record: array id -> indexes, to split off and act on.
    std::map<uint64_t, std::vector<uint32_t>> unsplit;
    std::vector<Status> errors;  // one per named id that may not
};

// The jobs a JobControlRequest acts on. A named array id stands for its unfinished tasks
// and its remainder, as in scancel. A filter alone selects only the jobs the caller may
// control; a named job the caller may not is an error.
JobSelection select_jobs(const JobTable& jobs,
                         const protocol::JobControlRequest& request,
                         const std::function<Status(const Job&)>& may_control) {
    JobSelection out;
    std::set<uint64_t> seen;
    // Hold and release act on pending jobs, requeue on running ones; a named array id stands
    // for those of its tasks only.
    const bool pending_only = request.action == protocol::JobAction::kHold
                              || request.action == protocol::JobAction::kRelease;
    const bool running_only = request.action == protocol::JobAction::kRequeue
                              || request.action == protocol::JobAction::kRequeueHold;
    auto usable = [&](uint64_t id) -> const Job* {
        auto it = jobs.find(id);
        return it != jobs.end() && jobs.is_committed(id) && !is_final(it->second.state)
                       ? &it->second
                       : nullptr;
    };
    auto usable_remainder = [&](uint64_t id) -> const Job* {
        auto it = jobs.remainders().find(id);
        return it != jobs.remainders().end() && jobs.is_committed(id)
                               && it->second.job.state == JobState::kPending
                               && matches(request.filter, it->second.job)
                       ? &it->second.job
                       : nullptr;
    };
    for (uint64_t id : request.job_ids) {
        // A task in its array's record (the array's own id names the whole array).
        if (auto task = jobs.unsplit_task(id); task && task->first != id) {
            const Job* remainder = usable_remainder(task->first);
            if (remainder == nullptr) {
                out.errors.push_back(Status::not_found(
                        fmt::format("job {}: no such pending or running job", id)));
            } else if (Status owner = may_control(*remainder); !owner) {
                out.errors.push_back(owner);
            } else {
                out.unsplit[task->first].push_back(task->second);
            }
            continue;
        }
        std::vector<uint64_t> tasks = jobs.array_tasks(id);
        const Job* remainder = running_only ? nullptr : usable_remainder(id);
        const bool is_array = !tasks.empty() || jobs.remainders().contains(id);
        if (!is_array) {
            tasks.push_back(id);
        }
        // A hetjob's leader stands for every component; a pending component cannot be acted
        // on alone, since the components start together.
        if (const Job* named = usable(id); named != nullptr && named->is_het_component()) {
            if (!named->is_het_leader() && named->state == JobState::kPending) {
                out.errors.push_back(Status::invalid(fmt::format(
                        "job {}: a pending component of a heterogeneous job cannot be acted on "
                        "alone (accepted: the whole job, {})",
                        named->display_id(), named->het_job_id)));
                continue;
            }
            for (uint32_t offset = 1; named->is_het_leader() && offset < named->het_size;
                 ++offset) {
                tasks.push_back(id + offset);
            }
        }
        bool found = false;
        if (remainder != nullptr) {
            found = true;
            if (Status owner = may_control(*remainder); !owner) {
                out.errors.push_back(owner);
                continue;
            }
            out.remainders.push_back(id);
        }
        for (uint64_t task : tasks) {
            const Job* job = usable(task);
            if (job == nullptr || !matches(request.filter, *job)
                || (is_array && pending_only && job->state != JobState::kPending)
                || (is_array && running_only && job->state != JobState::kRunning)) {
                continue;
            }
            found = true;
            if (Status owner = may_control(*job); !owner) {
                out.errors.push_back(owner);
                break;
            }
            if (pending_only && job->state != JobState::kPending) {
                out.errors.push_back(Status::invalid(
                        fmt::format("job {} is {} (accepted: only pending jobs can be held or "
                                    "released)",
                                    task, job_state_name(job->state))));
                break;
            }
            if (seen.insert(task).second) {
                out.ids.push_back(task);
            }
        }
        if (!found) {
            out.errors.push_back(
                    Status::not_found(fmt::format("job {}: no such pending or running job", id)));
        }
    }
    if (request.job_ids.empty()) {
        for (const auto& [id, job] : jobs) {
            if (usable(id) != nullptr && matches(request.filter, job)
                && (!pending_only || job.state == JobState::kPending) && may_control(job)) {
                out.ids.push_back(id);
            }
        }
        for (const auto& [id, remainder] : jobs.remainders()) {
            if (usable_remainder(id) != nullptr && may_control(remainder.job)) {
                out.remainders.push_back(id);
            }
        }
    }
    return out;
}

// Requeue applies to running batch jobs only; the first job named that is not one refuses
// the whole request.
Status check_requeueable(const JobTable& jobs, const JobSelection& selected) {
    const char* accepted = " (accepted: running batch jobs)";
    if (!selected.remainders.empty()) {
        return Status::invalid(fmt::format(
                "job {}: pending array tasks cannot be requeued{}",
                jobs.remainders().at(selected.remainders.front()).display_id(), accepted));
    }
    if (!selected.unsplit.empty()) {
        const auto& [array_id, indexes] = *selected.unsplit.begin();
        return Status::invalid(fmt::format("job {}_{}: a PENDING job cannot be requeued{}",
                                           array_id, indexes.front(), accepted));
    }
    for (uint64_t id : selected.ids) {
        const Job& job = jobs.at(id);
        if (job.state != JobState::kRunning) {
            return Status::invalid(fmt::format("job {}: a {} job cannot be requeued{}",
                                               job.display_id(), job_state_name(job.state),
                                               accepted));
        }
        if (job.interactive) {
            return Status::invalid(
                    fmt::format("job {}: an interactive allocation cannot be requeued{}",
                                job.display_id(), accepted));
        }
        // A heterogeneous job is requeued whole, through its leader.
        if (job.is_het_component() && !job.is_het_leader()
            && std::find(selected.ids.begin(), selected.ids.end(), job.het_job_id)
                       == selected.ids.end()) {
            return Status::invalid(fmt::format(
                    "job {}: a component of a heterogeneous job cannot be requeued alone "
                    "(accepted: the whole job, {})",
                    job.display_id(), job.het_job_id));
        }
    }
    return Status::ok();
}

// What the controller keeps of a step it opens: where it runs, what it holds, from when.
protocol::StepRecord step_record_of(const Job& job,
                                    const protocol::StepCreateRequest& request,
                                    const protocol::StepLayout& layout,
                                    int64_t now) {
    protocol::StepRecord step;
    step.job_id = job.job_id;
    step.step_id = layout.step_id;
    step.name = request.name;
    step.nodes = layout.nodes;
    step.ntasks = layout.ntasks();
    step.start_time = now;
    step.overlap = request.overlap;
    for (uint32_t tasks : layout.tasks_per_node) {
        step.cpus_per_node.push_back(tasks * layout.cpus_per_task);
    }
    if (request.gpu.requested()) {
        for (const protocol::NodeGpuBinding& node : layout.gpu_nodes) {
            step.gpus_per_node.push_back(node.alloc.gpus);
        }
    }
    step.gres = request.gres;
    return step;
}

// A step's own --gres besides GPUs, per node: no more than the job holds, and on each of the
// step's nodes (`at`: indexes into the job's) free of what other open steps hold (`held`);
// else the step waits.
Status check_step_gres(const Job& job,
                       const std::string& asked,
                       const std::vector<size_t>& at,
                       const std::vector<std::map<std::string, int64_t>>& held) {
    auto wanted = parse_generic_gres("--gres", asked);
    if (!wanted) {
        return wanted.status();
    }
    auto owned = parse_generic_gres("--gres", job.spec.gres.str());
    for (const GresCount& want : *wanted) {
        int64_t has = 0;
        for (const GresCount& own : owned ? *owned : std::vector<GresCount>{}) {
            has += own.name == want.name ? own.count : 0;
        }
        if (want.count > has) {
            return Status::invalid(fmt::format(
                    "--gres: the step asks for {}:{} per node, job {} holds {}:{} (accepted: at "
                    "most {})",
                    want.name, want.count, job.display_id(), want.name, has, has));
        }
        for (size_t node : at) {
            auto holding = held[node].find(want.name);
            const int64_t free = has - (holding == held[node].end() ? 0 : holding->second);
            if (free < want.count) {
                return Status::unavailable(fmt::format(
                        "{}: {} of the job's {}:{} on {} are free, the step asks for {}",
                        protocol::kStepCreationDisabled, free, want.name, has, job.nodes[node],
                        want.count));
            }
        }
    }
    return Status::ok();
}

// GPUs a step's own request asks for on a node where it runs `tasks` of its tasks: --gpus N
// is spread over its `nodes`.
int32_t step_gpus_on_node(const GpuOptions& gpu, uint32_t tasks, size_t nodes) {
    if (gpu.per_node > 0) {
        return gpu.per_node;
    }
    if (gpu.per_task > 0) {
        return gpu.per_task * static_cast<int32_t>(tasks);
    }
    const auto over = static_cast<int32_t>(std::max<size_t>(nodes, 1));
    return (gpu.gpus + over - 1) / over;
}

}  // namespace

const std::string& Controller::user_name(uint32_t uid) {
    auto name = user_names_.find(uid);
    if (name == user_names_.end()) {
        name = user_names_.emplace(uid, user_name_of(uid)).first;
    }
    return name->second;
}

Result<Controller::Admitted> Controller::admit(const protocol::Credential& cred,
                                               protocol::JobSpec spec,
                                               bool interactive,
                                               bool het_component) {
    if (!interactive && !het_component && spec.script.empty()) {
        return Status::invalid("script: empty batch script");
    }
    const std::vector<sched::NodeCapacity> nodes = nodes_.capacities();
    auto validated =
            validate_submission(spec, SubmitContext{config_, nodes, partition_nodes_,
                                                    reservations_.all(), user_name(cred.uid)});
    if (!validated) {
        return validated.status();
    }
    if (Status dependency = check_dependency(spec); !dependency) {
        return dependency;
    }
    Admitted admitted;
    if (!spec.array.empty()) {
        auto parsed =
                sched::parse_array_spec(spec.array, static_cast<uint32_t>(config_.max_array_size));
        if (!parsed) {
            return parsed.status();
        }
        if (interactive) {
            return Status::invalid("--array: only batch jobs can be arrays");
        }
        admitted.array = std::move(*parsed);
    }
    protocol::JobRecord& job = admitted.job;
    job.uid = cred.uid;
    job.gid = cred.gid;
    job.user_name = user_name(cred.uid);
    job.partition = validated->partition->name;
    job.time_limit_s = validated->time_limit_s;
    job.submit_time = clock_.unix_seconds();
    job.held = spec.hold;
    job.reason = spec.hold ? "JobHeldUser" : "None";
    job.interactive = interactive;
    spec.account = validated->account;
    spec.qos = validated->qos;
    spec.mem_mib = validated->mem_mib;
    if (spec.requeue < 0) {
        spec.requeue = !interactive && config_.job_requeue ? 1 : 0;  // as Slurm's JobRequeue
    }
    job.spec = std::move(spec);
    if (job.spec.name.empty()) {
        job.spec.name = interactive ? "interactive" : "sbatch";
    }
    job.job_id = next_job_id_;
    return admitted;
}

void Controller::handle_submit(const ConnectionPtr& conn,
                               const protocol::Credential& cred,
                               protocol::JobSpec spec,
                               bool interactive) {
    auto admitted = admit(cred, std::move(spec), interactive);
    if (!admitted) {
        conn->send_error(admitted.status());
        return;
    }
    protocol::JobRecord& job = admitted->job;
    const sched::ArraySpec& array = admitted->array;
    // An array is one record, its remainder, until its tasks are split off to start; it
    // takes the ids of all its tasks now. Its payload is stored once, for every task.
    const uint64_t id = job.job_id;
    const bool held = job.held;
    std::vector<StateChange> changes;
    changes.emplace_back(StoredPayload{id, take_payload(job.spec)});
    if (array.indexes.empty()) {
        next_job_id_ += 1;
        jobs_.add_submitted(job_from_record(job));
    } else {
        next_job_id_ += array.indexes.size();
        job.array_job_id = id;
        job.array_max_running = array.max_running;
        job.array_count = array.indexes.size();
        job.array_min = array.indexes.front();
        job.array_max = array.indexes.back();
        job.array_step = array.step;
        job.array_pending = array.indexes.to_string();
        ArrayRemainder remainder{job_from_record(job), array.indexes, array.indexes};
        jobs_.add_submitted(std::move(remainder));
    }
    changes.emplace_back(std::in_place_type<protocol::JobRecord>, std::move(job));
    changes.emplace_back(std::in_place_type<NextJobId>, NextJobId{next_job_id_});
    if (interactive) {
        job_clients_[id] = conn;
    }
    const bool is_array = !array.indexes.empty();
    writer_.write(std::move(changes),
                  [this, conn, id, is_array, interactive, held](const Status& status) {
                      on_strand([this, conn, id, is_array, interactive, held, status] {
                          jobs_.committed(id);
                          if (!status) {
                              if (is_array) {
                                  jobs_.remainders().erase(id);
                              } else {
                                  jobs_.forget(id);
                              }
                              job_clients_.erase(id);
                              conn->send_error(status.with_context("storing the job"));
                              return;
                          }
                          if (interactive) {
                              answer_committed(conn, id, interactive, held);
                          } else if (!held) {
                              request_schedule();
                          }
                      });
                      // A batch job's id goes out from the writer's thread, a wake-up sooner:
                      // the commit is already queued on the strand, so whatever the client asks
                      // after reading it finds the job. An interactive job's answer goes from
                      // the strand, ahead of the grant that may follow it.
                      if (status && !interactive) {
                          conn->send(protocol::SubmitJobReply{id});
                      }
                  });
}

void Controller::answer_committed(const ConnectionPtr& conn,
                                  uint64_t id,
                                  bool interactive,
                                  bool held) {
    if (interactive) {
        protocol::AllocationReply queued;
        queued.job_id = id;
        conn->send(queued);
    } else {
        conn->send(protocol::SubmitJobReply{id});
    }
    // A held job cannot start, so it changes no plan: a pass, O(pending jobs), waits for its
    // release.
    if (!held) {
        request_schedule();
    }
}

void Controller::handle_het_submit(const ConnectionPtr& conn,
                                   const protocol::Credential& cred,
                                   std::vector<protocol::JobSpec> specs,
                                   bool test_only,
                                   bool interactive) {
    // Each component is checked as a job of its own; all are accepted or none is.
    const uint64_t leader = next_job_id_;
    const auto size = static_cast<uint32_t>(specs.size());
    std::vector<protocol::JobRecord> records;
    for (uint32_t offset = 0; offset < size; ++offset) {
        protocol::JobSpec& spec = specs[offset];
        const auto refused = [&](const Status& status) {
            conn->send_error(
                    status.with_context(fmt::format("heterogeneous job component {}", offset)));
        };
        auto admitted = admit(cred, std::move(spec), interactive, offset > 0);
        if (!admitted) {
            refused(admitted.status());
            return;
        }
        if (!admitted->array.indexes.empty()) {
            refused(Status::invalid(
                    "--array: a heterogeneous job cannot be an array (as in Slurm)"));
            return;
        }
        protocol::JobRecord& job = admitted->job;
        // Components never share a node (as in Slurm), so none may name another's.
        for (const protocol::JobRecord& earlier : records) {
            for (const std::string& node : job.spec.nodelist) {
                if (std::find(earlier.spec.nodelist.begin(), earlier.spec.nodelist.end(), node)
                    != earlier.spec.nodelist.end()) {
                    refused(Status::invalid(fmt::format(
                            "--nodelist: node {} is named by component {} too (accepted: nodes "
                            "no other component names; components never share a node)",
                            node, earlier.het_job_offset)));
                    return;
                }
            }
        }
        job.job_id = leader + offset;
        job.het_job_id = leader;
        job.het_job_offset = offset;
        job.het_size = size;
        records.push_back(std::move(job));
    }
    // Components never share a node, so together they need a node each at the least.
    std::set<int> usable;
    uint32_t needed = 0;
    for (const protocol::JobRecord& job : records) {
        if (auto nodes = partition_nodes_.find(job.partition); nodes != partition_nodes_.end()) {
            usable.insert(nodes->second.begin(), nodes->second.end());
        }
        needed += std::max<uint32_t>(job.spec.nodes_min, 1);
    }
    if (needed > usable.size()) {
        conn->send_error(Status::invalid(fmt::format(
                "heterogeneous job: its components need {} nodes and their partitions have {} "
                "(accepted: components that fit side by side; components never share a node)",
                needed, usable.size())));
        return;
    }
    if (test_only) {  // sbatch --test-only: when and where, nothing stored
        auto reply = will_run(records);
        if (reply) {
            conn->send(*reply);
        } else {
            conn->send_error(reply.status());
        }
        return;
    }
    next_job_id_ += size;
    const bool held = records.front().held;
    std::vector<StateChange> changes;
    changes.emplace_back(StoredPayload{leader, take_payload(records.front().spec)});
    for (protocol::JobRecord& job : records) {
        jobs_.add_submitted(job_from_record(job));
        changes.emplace_back(std::in_place_type<protocol::JobRecord>, std::move(job));
    }
    changes.emplace_back(std::in_place_type<NextJobId>, NextJobId{next_job_id_});
    if (interactive) {
        job_clients_[leader] = conn;
    }
    writer_.write(std::move(changes),
                  [this, conn, leader, size, held, interactive](const Status& status) {
                      on_strand([this, conn, leader, size, held, interactive, status] {
                          for (uint64_t id = leader; id < leader + size; ++id) {
                              jobs_.committed(id);
                              if (!status) {
                                  jobs_.forget(id);
                              }
                          }
                          if (!status) {
                              job_clients_.erase(leader);
                              conn->send_error(status.with_context("storing the job"));
                              return;
                          }
                          answer_committed(conn, leader, interactive, held);
                      });
                  });
}

void Controller::handle_will_run(const ConnectionPtr& conn,
                                 const protocol::Credential& cred,
                                 protocol::JobSpec spec) {
    const bool allocation = spec.script.empty();  // srun's: no script, a command of its own
    auto admitted = admit(cred, std::move(spec), allocation);
    if (!admitted) {
        conn->send_error(admitted.status());
        return;
    }
    auto reply = will_run({admitted->job});
    if (!reply) {
        conn->send_error(reply.status());
        return;
    }
    conn->send(*reply);
}

void Controller::handle_query(const ConnectionPtr& conn,
                              const protocol::QueryJobsRequest& request) {
    auto listed = [](const std::vector<std::string>& wanted, const InternedString& value) {
        return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
    };
    auto wanted = [&](uint64_t id, const Job& job) {
        return jobs_.is_committed(id) && wanted_state(request.states, job.state)
               && listed(request.users, job.user_name) && listed(request.partitions, job.partition)
               && listed(request.names, job.spec.name)
               && listed(request.accounts, job.spec.account);
    };
    // By id, each array's remainder after its first task.
    JobListSender out(conn);
    if (request.columns_only) {
        out.send_columns_only();
    }
    auto record_of = [&](const auto& job) {
        return request.columns_only ? to_columns_record(job) : to_record(job);
    };
    const auto& remainders = jobs_.remainders();
    auto next_remainder = remainders.begin();
    auto offer_remainders_to = [&](uint64_t last) {
        for (; next_remainder != remainders.end() && next_remainder->first <= last;
             ++next_remainder) {
            if (wanted(next_remainder->first, next_remainder->second.job)) {
                out.add(record_of(next_remainder->second));
            }
        }
    };
    auto offer = [&](uint64_t id, const Job& job) {
        offer_remainders_to(id - 1);
        if (wanted(id, job)) {
            out.add(record_of(job));
        }
        offer_remainders_to(id);
    };
    if (request.job_ids.empty()) {
        for (const auto& [id, job] : jobs_) {
            offer(id, job);
        }
        offer_remainders_to(std::numeric_limits<uint64_t>::max());
    } else {
        // A named array stands for its tasks and remainder; a named task not yet split off
        // for the remainder holding it.
        std::set<uint64_t> ids;
        std::set<uint64_t> arrays;
        for (uint64_t id : request.job_ids) {
            std::vector<uint64_t> tasks = jobs_.array_tasks(id);
            ids.insert(tasks.begin(), tasks.end());
            ids.insert(id);
            // A hetjob's leader stands for all its components, as in squeue -j.
            if (auto leader = jobs_.find(id);
                leader != jobs_.end() && leader->second.is_het_leader()) {
                for (uint32_t offset = 1; offset < leader->second.het_size; ++offset) {
                    ids.insert(id + offset);
                }
            }
            if (auto task = jobs_.unsplit_task(id)) {
                arrays.insert(task->first);
            }
            if (remainders.contains(id)) {
                arrays.insert(id);
            }
        }
        std::set<uint64_t> in_order = ids;
        in_order.insert(arrays.begin(), arrays.end());
        for (uint64_t id : in_order) {
            if (auto it = jobs_.find(id);
                ids.contains(id) && it != jobs_.end() && wanted(id, it->second)) {
                out.add(record_of(it->second));
            }
            if (arrays.contains(id) && wanted(id, remainders.at(id).job)) {
                out.add(record_of(remainders.at(id)));
            }
        }
    }
    out.finish();
}

void Controller::handle_nodes(const ConnectionPtr& conn,
                              const protocol::QueryNodesRequest& request) {
    protocol::NodeListReply reply;
    for (const auto& node : nodes_) {
        if (!request.topology_of.empty() && node.info.name != request.topology_of) {
            continue;
        }
        protocol::NodeInfo info = node.info;
        info.jobs.assign(node.jobs.begin(), node.jobs.end());
        if (request.topology_of.empty()) {
            info.resources.topology = {};  // a listing of many nodes stays small
        }
        reply.nodes.push_back(std::move(info));
    }
    if (!request.topology_of.empty() && reply.nodes.empty()) {
        conn->send_error(
                Status::not_found("--topology: unknown node '" + request.topology_of + "'"));
        return;
    }
    conn->send(reply);
}

void Controller::handle_control(const ConnectionPtr& conn,
                                const protocol::Credential& cred,
                                const protocol::JobControlRequest& request) {
    if (request.job_ids.empty() && !request.filter.any()) {
        conn->send_error(Status::invalid(
                "job id: missing (accepted: job ids, or a filter such as --user or --state)"));
        return;
    }
    JobSelection selected =
            select_jobs(jobs_, request, [&](const Job& job) { return check_owner(cred, job); });
    // Hold, release and requeue are all or nothing; cancel acts on what it may, as scancel
    // does.
    const bool cancel = request.action == protocol::JobAction::kCancel;
    if (!cancel && !selected.errors.empty()) {
        conn->send_error(selected.errors.front());
        return;
    }
    if (request.action == protocol::JobAction::kRequeue
        || request.action == protocol::JobAction::kRequeueHold) {
        if (Status refused = check_requeueable(jobs_, selected); !refused) {
            conn->send_error(refused);
            return;
        }
    }
    // Named tasks still in their array's record are split off now, to be acted on alone.
    for (auto& [array_id, indexes] : selected.unsplit) {
        std::sort(indexes.begin(), indexes.end());
        indexes.erase(std::unique(indexes.begin(), indexes.end()), indexes.end());
        for (uint64_t id : split_tasks(array_id, indexes)) {
            selected.ids.push_back(id);
        }
    }
    for (uint64_t id : selected.ids) {
        Job& job = jobs_.at(id);
        switch (request.action) {
            case protocol::JobAction::kHold:
                job.held = true;
                job.reason = "JobHeldUser";
                persist(job);
                break;
            case protocol::JobAction::kRelease:
                job.held = false;
                job.reason = "None";
                persist(job);
                break;
            case protocol::JobAction::kRequeue:
            case protocol::JobAction::kRequeueHold:
                spdlog::info("job {}: requeue{} requested by uid {}", id,
                             request.action == protocol::JobAction::kRequeueHold ? "hold" : "",
                             cred.uid);
                requeue_by_request(job, request.action == protocol::JobAction::kRequeueHold);
                break;
            case protocol::JobAction::kCancel:
                if (job.state == JobState::kPending) {
                    cancel_pending(job, "None");
                } else if (job.state == JobState::kRunning) {
                    if (request.signal != 0) {
                        signal_job(job, request.signal, request.signal_target);
                    } else {
                        end_job(job, JobState::kCancelled, "");
                    }
                }
                break;
        }
    }
    protocol::JobControlReply reply;
    reply.acted_on = selected.ids.size();
    for (uint64_t id : selected.remainders) {
        ArrayRemainder& remainder = jobs_.remainders().at(id);
        reply.acted_on += remainder.pending.size();
        if (cancel) {
            cancel_remainder(remainder);
            continue;
        }
        remainder.job.held = request.action == protocol::JobAction::kHold;
        remainder.job.reason = remainder.job.held ? "JobHeldUser" : "None";
        persist(remainder);
    }
    for (const Status& error : selected.errors) {
        reply.errors.push_back(error.message());
    }
    after_durable([conn, reply = std::move(reply)] { conn->send(reply); });
    request_schedule();
}

Result<protocol::StepLayout> Controller::make_layout(Job& job,
                                                     const protocol::StepCreateRequest& request) {
    auto shape = sched::lay_out_step(step_allocation_of(job, steps_.cpus_held(job)),
                                     step_shape_of(request));
    if (!shape) {
        if (shape.status().code() == StatusCode::kUnavailable) {
            return Status::unavailable(fmt::format("{}: {}", protocol::kStepCreationDisabled,
                                                   shape.status().message()));
        }
        return shape.status();
    }
    if (!request.gres.empty()) {
        const std::vector<std::map<std::string, int64_t>> held =
                request.overlap ? std::vector<std::map<std::string, int64_t>>(job.nodes.size())
                                : steps_.gres_held(job);
        if (Status fits = check_step_gres(job, request.gres, shape->nodes, held); !fits) {
            return fits;
        }
    }
    protocol::StepLayout layout;
    layout.distribution = shape->distribution;
    const bool own_gpus = request.gpu.requested();
    const std::vector<std::set<int32_t>> gpus_held =
            own_gpus && !request.overlap ? steps_.gpus_held(job)
                                         : std::vector<std::set<int32_t>>(job.nodes.size());
    for (size_t i = 0; i < shape->nodes.size(); ++i) {
        const size_t at = shape->nodes[i];
        NodeEntry* node = nodes_.find(job.nodes[at]);
        if (node == nullptr || !node->responding) {
            return Status::unavailable(fmt::format("node {} is not responding", job.nodes[at]));
        }
        if (own_gpus && at >= job.gpu_alloc.size()) {
            return Status::invalid(fmt::format(
                    "--gpus: the step asks for GPUs on {}, where job {} holds none (accepted: "
                    "steps of jobs that hold GPUs)",
                    job.nodes[at], job.display_id()));
        }
        if (at < job.gpu_alloc.size()) {
            protocol::NodeGpuAlloc alloc = job.gpu_alloc[at];
            if (own_gpus) {
                auto taken = take_step_gpus(*node, alloc, gpus_held[at],
                                            step_gpus_on_node(request.gpu, shape->tasks_per_node[i],
                                                              shape->nodes.size()));
                if (!taken) {
                    return taken.status();
                }
                alloc = std::move(*taken);
            }
            auto gpus =
                    bind_step_gpus(*node, alloc, own_gpus ? request.gpu : job.spec.gpu.options(),
                                   shape->tasks_per_node[i]);
            if (!gpus) {
                return gpus.status();
            }
            layout.gpu_nodes.push_back(std::move(*gpus));
        }
        layout.nodes.push_back(job.nodes[at]);
        layout.addresses.push_back(node->info.address);
        layout.ports.push_back(node->info.port);
    }
    layout.job_id = job.job_id;
    layout.het_job_id = job.het_job_id;
    layout.step_id = job.next_step_id++;
    layout.job_name = job.spec.name;
    layout.partition = job.partition;
    layout.cluster_name = config_.cluster_name;
    layout.tasks_per_node = std::move(shape->tasks_per_node);
    layout.cpus_per_task = shape->cpus_per_task;
    layout.cpus_per_task_set = job.spec.cpus_per_task_set || request.cpus_per_task != 0;
    layout.job_end_time = job.time_limit_s < 0 ? 0 : job.start_time + job.time_limit_s;
    layout.job_signal = job.spec.signal;
    layout.restart_count = job.restart_count;
    layout.job_nodes = job.nodes;
    layout.job_cpus_per_node = job.cpus_per_node;
    return layout;
}

void Controller::handle_step_create(const ConnectionPtr& conn,
                                    const protocol::Credential& cred,
                                    const protocol::StepCreateRequest& request) {
    auto it = jobs_.find(request.job_id);
    if (it == jobs_.end() || it->second.state != JobState::kRunning) {
        conn->send_error(Status::not_found(fmt::format(
                "job {} is not running (a step needs a running allocation)", request.job_id)));
        return;
    }
    Job& job = it->second;
    if (Status owner = check_owner(cred, job); !owner) {
        conn->send_error(owner);
        return;
    }
    auto reply = [conn](const Result<protocol::StepLayout>& layout) {
        if (!layout) {
            conn->send_error(layout.status());
        } else {
            conn->send(protocol::StepCreatedReply{*layout});
        }
    };
    if (request.het_parts.empty()) {
        open_step(job, request, reply);
        return;
    }
    std::vector<Job*> components;
    for (const protocol::HetStepPart& part : request.het_parts) {
        const uint64_t id = part.job_id;
        auto component = jobs_.find(id);
        if (!job.is_het_leader() || component == jobs_.end()
            || component->second.het_job_id != job.job_id
            || component->second.state != JobState::kRunning) {
            conn->send_error(Status::invalid(fmt::format(
                    "--het-group: job {} is not a running component of heterogeneous job {}", id,
                    request.job_id)));
            return;
        }
        if (std::find(components.begin(), components.end(), &component->second)
            != components.end()) {
            conn->send_error(Status::invalid(fmt::format(
                    "--het-group: component {} named twice (accepted: one part of a step in "
                    "each component)",
                    component->second.het_job_offset)));
            return;
        }
        components.push_back(&component->second);
    }
    open_het_step(components, request, reply);
}

void Controller::open_het_step(const std::vector<Job*>& components,
                               const protocol::StepCreateRequest& request,
                               std::function<void(const Result<protocol::StepLayout>&)> done) {
    // One step id in every component: the next free in all of them.
    uint32_t step_id = 0;
    for (const Job* component : components) {
        step_id = std::max(step_id, component->next_step_id);
    }
    protocol::StepLayout merged;
    std::vector<protocol::StepRecord> steps;
    for (size_t i = 0; i < components.size(); ++i) {
        Job* component = components[i];
        const protocol::HetStepPart& part = request.het_parts[i];
        protocol::StepCreateRequest own = request;
        own.het_parts.clear();
        own.job_id = component->job_id;
        own.nodes = part.nodes;
        own.ntasks = part.ntasks;
        own.ntasks_per_node = part.ntasks_per_node;
        own.cpus_per_task = part.cpus_per_task;
        component->next_step_id = step_id;
        auto layout = make_layout(*component, own);
        if (!layout) {
            done(layout.status().with_context(
                    fmt::format("heterogeneous job component {}", component->het_job_offset)));
            return;
        }
        steps.push_back(step_record_of(*component, own, *layout, clock_.unix_seconds()));
        const size_t nodes = layout->nodes.size();
        if (steps.size() == 1) {
            merged = std::move(*layout);
            merged.distribution = {};  // block: ranks run through the components in order
            merged.node_jobs.assign(nodes, component->job_id);
            continue;
        }
        if (layout->cpus_per_task != merged.cpus_per_task || !merged.node_cpus_per_task.empty()) {
            merged.node_cpus_per_task.resize(merged.nodes.size(), merged.cpus_per_task);
            merged.node_cpus_per_task.insert(merged.node_cpus_per_task.end(), nodes,
                                             layout->cpus_per_task);
        }
        const auto append = [](auto& to, const auto& from) {
            to.insert(to.end(), from.begin(), from.end());
        };
        if (!layout->gpu_nodes.empty() || !merged.gpu_nodes.empty()) {
            merged.gpu_nodes.resize(merged.nodes.size());
            layout->gpu_nodes.resize(nodes);
            append(merged.gpu_nodes, layout->gpu_nodes);
        }
        append(merged.nodes, layout->nodes);
        append(merged.addresses, layout->addresses);
        append(merged.ports, layout->ports);
        append(merged.tasks_per_node, layout->tasks_per_node);
        append(merged.job_nodes, layout->job_nodes);
        append(merged.job_cpus_per_node, layout->job_cpus_per_node);
        merged.node_jobs.insert(merged.node_jobs.end(), nodes, component->job_id);
        merged.cpus_per_task_set = merged.cpus_per_task_set || layout->cpus_per_task_set;
    }
    const Job& leader = jobs_.at(components.front()->het_job_id);
    merged.job_id = leader.job_id;
    merged.het_job_id = leader.job_id;
    merged.job_name = leader.spec.name;
    std::vector<StateChange> changes;
    for (size_t i = 0; i < components.size(); ++i) {
        steps_.open(steps[i]);
        changes.emplace_back(std::in_place_type<protocol::JobRecord>, to_record(*components[i]));
        changes.emplace_back(std::move(steps[i]));
    }
    writer_.write(std::move(changes),
                  [done = std::move(done), merged = std::move(merged)](const Status& status) {
                      if (status) {
                          done(merged);
                      } else {
                          done(status.with_context("storing the step"));
                      }
                  });
}

void Controller::open_step(Job& job,
                           const protocol::StepCreateRequest& request,
                           std::function<void(const Result<protocol::StepLayout>&)> done) {
    auto layout = make_layout(job, request);
    if (!layout) {
        done(layout.status());
        return;
    }
    protocol::StepRecord step = step_record_of(job, request, *layout, clock_.unix_seconds());
    steps_.open(step);
    writer_.write({to_record(job), step},
                  [done = std::move(done), layout = std::move(*layout)](const Status& status) {
                      if (status) {
                          done(layout);
                      } else {
                          done(status.with_context("storing the step"));
                      }
                  });
}

void Controller::close_step(protocol::StepRecord& step,
                            JobState state,
                            int32_t exit_code,
                            int32_t exit_signal) {
    step.end_time = clock_.unix_seconds();
    step.state = state;
    step.exit_code = exit_code;
    step.exit_signal = exit_signal;
    writer_.write({step}, nullptr);
}

void Controller::handle_step_complete(const ConnectionPtr& conn,
                                      const protocol::Credential& cred,
                                      const protocol::StepCompleteRequest& request) {
    auto job = jobs_.find(request.job_id);
    if (job == jobs_.end() || !steps_.is_open(request.job_id, request.step_id)) {
        conn->send_error(Status::not_found(
                fmt::format("step {}.{}: no such running step", request.job_id, request.step_id)));
        return;
    }
    if (Status owner = check_owner(cred, job->second); !owner) {
        conn->send_error(owner);
        return;
    }
    // A kill for memory in the step's own cgroup names the step, as Slurm's OUT_OF_MEMORY.
    JobState state = request.usage.oom_kills > 0 ? JobState::kOutOfMemory
                     : request.exit_signal != 0  ? JobState::kCancelled
                     : request.exit_code != 0    ? JobState::kFailed
                                                 : JobState::kCompleted;
    protocol::StepRecord step = *steps_.close(request.job_id, request.step_id);
    step.usage = request.usage;
    close_step(step, state, request.exit_code, request.exit_signal);
    // A step across a hetjob's components ends in each of them; its usage is the leader's.
    for (uint32_t offset = 1; job->second.is_het_leader() && offset < job->second.het_size;
         ++offset) {
        if (auto other = steps_.close(request.job_id + offset, request.step_id)) {
            close_step(*other, state, request.exit_code, request.exit_signal);
        }
    }
    after_durable([conn] { conn->send(protocol::AckReply{}); });
}

void Controller::handle_job_complete(const ConnectionPtr& conn,
                                     const protocol::Credential& cred,
                                     const protocol::JobCompleteRequest& request) {
    auto it = jobs_.find(request.job_id);
    if (it == jobs_.end()) {
        conn->send(protocol::AckReply{"already finished"});
        return;
    }
    Job& job = it->second;
    if (Status owner = check_owner(cred, job); !owner) {
        conn->send_error(owner);
        return;
    }
    job_clients_.erase(job.job_id);
    if (job.state == JobState::kRunning) {
        job.exit_code = request.exit_code;
        job.exit_signal = request.exit_signal;
        bool failed = request.exit_code != 0 || request.exit_signal != 0;
        end_job(job, failed ? JobState::kFailed : JobState::kCompleted, "");
    }
    after_durable([conn] { conn->send(protocol::AckReply{}); });
}

}  // namespace cohort::ctld
