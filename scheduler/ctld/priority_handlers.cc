// Fair-share usage accounting and `cohort priority`: the factors of pending jobs.
#include <numeric>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "scheduler/ctld/controller.h"

namespace cohort::ctld {
namespace {

// What the job costs per second, as accounting's billing column counts it.
double billing_of(const Job& job, const BillingWeights& weights) {
    const int64_t cpus =
            std::accumulate(job.cpus_per_node.begin(), job.cpus_per_node.end(), int64_t{0});
    int64_t gpus = 0;
    for (const auto& node : job.gpu_alloc) {
        gpus += static_cast<int64_t>(node.gpus.size());
    }
    return weights.billing(cpus, job.mem_per_node_mib * static_cast<int64_t>(job.nodes.size()),
                           gpus);
}

}  // namespace

void Controller::charge_job(const Job& job, int64_t until) {
    usage_.charge(job.job_id, {job.user_name, priority_.charged_account(job.spec.account)},
                  billing_of(job, config_.billing_weights), job.start_time, until);
}

void Controller::refresh_fairshare(int64_t now) {
    usage_.decay_to(now);
    std::set<sched::UsageLedger::Key> users;
    // A user's jobs come in runs with one account, and equal interned names share one copy: a
    // run costs one insertion, not a copy of two strings per job and pass.
    const std::string* last_user = nullptr;
    const std::string* last_account = nullptr;
    auto add = [&](const Job& job) {
        if (&job.user_name.str() == last_user && &job.spec.account.str() == last_account) {
            return;
        }
        last_user = &job.user_name.str();
        last_account = &job.spec.account.str();
        users.emplace(job.user_name, priority_.charged_account(job.spec.account));
    };
    // One walk over the table charges and collects: at 100,000 jobs each walk costs ~10 ms.
    for (const auto& [id, job] : jobs_) {
        if (job.state == JobState::kRunning || job.state == JobState::kCompleting) {
            charge_job(job, job.state == JobState::kCompleting ? job.end_time : now);
        }
        add(job);
    }
    for (const auto& [id, remainder] : jobs_.remainders()) {
        add(remainder.job);
    }
    priority_.refresh(usage_.ledger(), users, nodes_.total_cpus());
}

void Controller::refresh_priorities(int64_t now) {
    refresh_fairshare(now);
    for (auto& [id, job] : jobs_) {
        if (job.state == JobState::kPending) {
            refresh_priority(job, now);
        }
    }
    refresh_remainder_priorities(now);
}

void Controller::refresh_priority(Job& job, int64_t now) {
    job.priority = priority_.factors(priority_job_of(job), now).priority;
}

void Controller::refresh_remainder_priorities(int64_t now) {
    for (auto& [id, remainder] : jobs_.remainders()) {
        refresh_priority(remainder.job, now);
    }
}

void Controller::handle_priority(const ConnectionPtr& conn,
                                 const protocol::PriorityQueryRequest& request) {
    const int64_t now = clock_.unix_seconds();
    for (uint64_t id : request.job_ids) {
        auto it = jobs_.find(id);
        if (it == jobs_.end()) {
            conn->send_error(Status::not_found(fmt::format("job {}: no such unfinished job", id)));
            return;
        }
        if (it->second.state != JobState::kPending) {
            conn->send_error(
                    Status::invalid(fmt::format("job {}: {}, not pending (priority only "
                                                "orders pending jobs)",
                                                id, job_state_name(it->second.state))));
            return;
        }
    }
    refresh_priorities(now);
    const sched::PriorityWeights& w = priority_.weights();
    protocol::PriorityListReply reply;
    for (const auto& [id, job] : jobs_) {
        if (job.state != JobState::kPending || !jobs_.is_committed(id)
            || (!request.job_ids.empty()
                && std::find(request.job_ids.begin(), request.job_ids.end(), id)
                           == request.job_ids.end())) {
            continue;
        }
        const sched::PriorityFactors f = priority_.factors(priority_job_of(job), now);
        protocol::JobPriority entry;
        entry.job_id = id;
        entry.display_id = job.display_id();
        entry.user = job.user_name;
        entry.account = job.spec.account;
        entry.partition = job.partition;
        entry.qos = job.spec.qos;
        entry.priority = f.priority;
        entry.age = f.age;
        entry.fairshare = f.fairshare;
        entry.job_size = f.job_size;
        entry.partition_factor = f.partition;
        entry.qos_factor = f.qos;
        entry.weight_age = w.age;
        entry.weight_fairshare = w.fairshare;
        entry.weight_job_size = w.job_size;
        entry.weight_partition = w.partition;
        entry.weight_qos = w.qos;
        entry.nice = job.spec.nice;
        reply.jobs.push_back(std::move(entry));
    }
    conn->send(reply);
}

void Controller::handle_share(const ConnectionPtr& conn, const protocol::Credential& cred) {
    refresh_fairshare(clock_.unix_seconds());
    // Under private_data, a user sees the accounts and their own rows only.
    const std::string own = roles_.sees_only_own_jobs(cred.uid) ? user_name(cred.uid) : "";
    protocol::ShareListReply reply;
    for (const sched::AssociationShare& a : priority_.shares()) {
        if (!a.user.empty() && !own.empty() && a.user != own) {
            continue;
        }
        reply.associations.push_back(
                {a.account, a.user, a.depth, a.raw_shares, a.standing.norm_shares, a.standing.usage,
                 a.standing.norm_usage, a.standing.effective_usage, a.fairshare});
    }
    conn->send(reply);
}

}  // namespace cohort::ctld
