// Accounting: what the state store commits is recorded in the accounting store
// (accounting/), which answers `cohort acct` and `cohort report` and gives fair-share its
// usage at start; a restart records again what the accounting store may have missed; purges
// follow purge_jobs_after_days. Node events (down, maintenance) are recorded from each tick.
#include <deque>

#include <spdlog/spdlog.h>

#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/job_list_sender.h"

namespace cohort::ctld {
namespace {

// Records stay in the state store when the accounting store refuses them; at start the
// controller records again every job that ended this long before the latest one accounted,
// and every unfinished one.
constexpr int64_t kReplayOverlap_s = 3600;
// A failed read of the node events left open is tried again after this.
constexpr int64_t kNodeEventsRetry_s = 30;

}  // namespace

accounting::RecordBatch accounting_records(const std::vector<StateChange>& changes) {
    accounting::RecordBatch batch;
    for (const StateChange& change : changes) {
        if (const auto* job = std::get_if<protocol::JobRecord>(&change)) {
            (job->is_array_remainder() ? batch.array_remainders : batch.jobs).push_back(*job);
        } else if (const auto* attempt = std::get_if<JobAttempt>(&change)) {
            batch.attempts.push_back(attempt->record);
        } else if (const auto* step = std::get_if<protocol::StepRecord>(&change)) {
            batch.steps.push_back(*step);
        } else if (const auto* emptied = std::get_if<ArrayRemainderEmptied>(&change)) {
            batch.remainders_emptied.push_back(emptied->array_id);
        }
    }
    return batch;
}

void Controller::replay_accounting(int64_t usage_as_of) {
    accounting_.read([this, usage_as_of](accounting::AccountingStore& accounted) {
        auto latest = accounted.latest_end_time();
        if (!latest) {
            spdlog::error("accounting: {}; records are kept and retried",
                          latest.status().message());
            load_usage_from_accounting(usage_as_of);
            return;
        }
        // An empty accounting store takes the whole history once (since = 0: any).
        const int64_t since = *latest == 0 ? 0 : std::max<int64_t>(*latest - kReplayOverlap_s, 1);
        writer_.read([this, since, usage_as_of](StateStore& store) {
            JobFilter filter;
            filter.since = since;
            filter.attempts = true;
            auto jobs = store.query_jobs(filter);
            if (!jobs) {
                spdlog::error("accounting replay: {}", jobs.status().message());
                load_usage_from_accounting(usage_as_of);
                return;
            }
            accounting::RecordBatch batch;
            std::vector<uint64_t> ids;
            for (size_t i = 0; i < jobs->size(); ++i) {
                protocol::JobRecord& job = (*jobs)[i];
                // query_jobs lists a job's earlier attempts just before it.
                const bool attempt = i + 1 < jobs->size() && (*jobs)[i + 1].job_id == job.job_id
                                     && !(*jobs)[i + 1].is_array_remainder()
                                     && !job.is_array_remainder();
                if (attempt) {
                    batch.attempts.push_back(std::move(job));
                } else if (job.is_array_remainder()) {
                    batch.array_remainders.push_back(std::move(job));
                } else {
                    ids.push_back(job.job_id);
                    batch.jobs.push_back(std::move(job));
                }
            }
            if (auto steps = store.query_steps(ids)) {
                batch.steps = std::move(*steps);
            }
            spdlog::info("accounting: recording {} jobs from the state store (ended since {})",
                         batch.jobs.size(), since);
            accounting_.record(std::move(batch));
            load_usage_from_accounting(usage_as_of);  // read after those records
        });
    });
}

void Controller::load_usage_from_accounting(int64_t as_of) {
    const int64_t half_life_s = config_.policy.priority.decay_half_life_s;
    accounting_.read([this, as_of, half_life_s](accounting::AccountingStore& store) {
        auto usage = store.decayed_usage(as_of, half_life_s);
        on_strand([this, as_of, usage = std::move(usage)] { apply_accounted_usage(as_of, usage); });
    });
}

void Controller::apply_accounted_usage(int64_t as_of,
                                       const Result<std::vector<accounting::DecayedUsage>>& usage) {
    const bool late = !usage_loading_ && !usage_read_failed_;  // scheduling went on without it
    usage_loading_ = false;
    if (!usage) {
        usage_read_failed_ = true;
        spdlog::error("fair-share usage not read from accounting: {}; retrying in {} s",
                      usage.status().message(), kUsageRetry_s);
        usage_retry_at_ = clock_.unix_seconds() + kUsageRetry_s;
        request_schedule();
        return;
    }
    std::map<sched::UsageLedger::Key, double> ledger;
    for (const auto& entry : *usage) {
        ledger[{entry.user, priority_.charged_account(entry.account)}] += entry.billing_seconds;
    }
    // Accounting charged what ran up to as_of; live charging goes on from there.
    std::vector<uint64_t> charged;
    for (const auto& [id, job] : jobs_) {
        if (job.start_time > 0 && job.start_time <= as_of) {
            charged.push_back(id);
        }
    }
    spdlog::info("fair-share usage of {} users read from accounting{}", ledger.size(),
                 usage_read_failed_ ? " (after retrying)"
                 : late             ? " (after scheduling had started without it)"
                                    : "");
    usage_read_failed_ = false;
    usage_.restore(as_of, std::move(ledger), charged);
    request_schedule();
}

void Controller::handle_acct(const ConnectionPtr& conn, const protocol::AcctQueryRequest& request) {
    if (request.controller_record) {
        writer_.read([conn, request](StateStore& store) {
            JobFilter filter{request.job_ids, "", request.since, request.states, request.until,
                             request.attempts};
            auto jobs = store.query_jobs(filter);
            if (!jobs) {
                conn->send_error(jobs.status());
                return;
            }
            JobListSender out(conn);
            for (auto& job : *jobs) {
                out.add(std::move(job));
            }
            out.finish();
        });
        return;
    }
    // Through the state writer first: every change committed before the request has then
    // been handed to accounting, whose queue runs the query after it.
    writer_.read([this, conn, request](StateStore&) {
        accounting_.read([conn, request](accounting::AccountingStore& store) {
            accounting::AcctFilter filter{request.job_ids, request.users, request.accounts,
                                          request.states,  request.since, request.until,
                                          request.attempts};
            // Steps are read per frame, for that frame's jobs only.
            JobListSender out(conn, [&store](const std::vector<uint64_t>& ids) {
                auto steps = store.steps(ids);
                return steps ? std::move(*steps) : std::vector<protocol::StepRecord>{};
            });
            Status listed = store.each_job(
                    filter, [&out](protocol::JobRecord&& job) { out.add(std::move(job)); });
            if (!listed) {
                conn->send_error(listed);
                return;
            }
            out.finish();
        });
    });
}

void Controller::handle_usage_report(const ConnectionPtr& conn,
                                     const protocol::Credential& cred,
                                     const protocol::UsageReportRequest& request) {
    const int64_t now = clock_.unix_seconds();
    if (request.start < 0 || request.end <= request.start || request.start >= now) {
        conn->send_error(Status::invalid(
                fmt::format("report: invalid window {} to {} (accepted: a start before now and "
                            "an end after the start)",
                            request.start, request.end)));
        return;
    }
    // The node events recorded so far count, up to now.
    record_node_service(now);
    protocol::UsageTotalsReply reply;
    reply.start = request.start;
    reply.end = std::min(request.end, now);
    reply.cluster_cpus = nodes_.total_cpus();
    for (size_t i = 0; i < nodes_.size(); ++i) {
        reply.cluster_gpus += nodes_[i].info.resources.gpus;
    }
    const std::string own = roles_.sees_only_own_jobs(cred.uid) ? user_name(cred.uid) : "";
    accounting_.read([conn, reply = std::move(reply),
                      own](accounting::AccountingStore& store) mutable {
        auto totals = store.usage(reply.start, reply.end);
        if (!totals) {
            conn->send_error(totals.status());
            return;
        }
        auto lost = store.node_time(reply.start, reply.end);
        if (!lost) {
            conn->send_error(lost.status());
            return;
        }
        reply.down_cpu_seconds = lost->down_cpu_seconds;
        reply.down_gpu_seconds = lost->down_gpu_seconds;
        reply.planned_down_cpu_seconds = lost->planned_down_cpu_seconds;
        reply.planned_down_gpu_seconds = lost->planned_down_gpu_seconds;
        auto waited =
                store.eligible_wait(reply.start, reply.end, reply.cluster_cpus, reply.cluster_gpus);
        if (!waited) {
            conn->send_error(waited.status());
            return;
        }
        reply.planned_cpu_seconds = waited->planned_cpu_seconds;
        reply.planned_gpu_seconds = waited->planned_gpu_seconds;
        reply.overcommitted_cpu_seconds = waited->overcommitted_cpu_seconds;
        reply.overcommitted_gpu_seconds = waited->overcommitted_gpu_seconds;
        for (protocol::UsageTotalEntry& total : *totals) {
            if (own.empty() || total.user == own) {
                reply.totals.push_back(std::move(total));
            }
        }
        conn->send(reply);
    });
}

void Controller::record_node_service(int64_t now) {
    if (!node_events_.ready()) {
        if (node_events_loading_ || now < node_events_retry_at_) {
            return;
        }
        node_events_loading_ = true;
        accounting_.read([this](accounting::AccountingStore& store) {
            auto open = store.open_node_events();
            on_strand([this, open = std::move(open)]() mutable {
                node_events_loading_ = false;
                if (!open) {
                    spdlog::error(
                            "accounting: node events left open not read: {}; retrying in "
                            "{} s",
                            open.status().message(), kNodeEventsRetry_s);
                    node_events_retry_at_ = clock_.unix_seconds() + kNodeEventsRetry_s;
                    return;
                }
                node_events_.adopt(std::move(*open));
                record_node_service(clock_.unix_seconds());
            });
        });
        return;
    }
    const std::map<std::string, std::string> maintenance = reservations_.maintenance_at(now);
    std::deque<std::string> reasons;  // maintenance reasons, alive until observe() returns
    std::vector<NodeService> services;
    services.reserve(nodes_.size());
    for (const NodeEntry& node : nodes_) {
        NodeService service{node.info.name, "", node.info.reason, node.info.resources.cpus,
                            node.info.resources.gpus};
        service.known = node.info.state != NodeState::kUnknown;
        if (auto held = maintenance.find(node.info.name); held != maintenance.end()) {
            reasons.push_back("maintenance reservation " + held->second);
            service.lost_as = kNodeLostMaintenance;
            service.reason = reasons.back();
            service.known = true;
        } else if (node.info.state == NodeState::kDown || (node.info.drain && node.jobs.empty())) {
            service.lost_as = kNodeLostDown;
        }
        services.push_back(service);
    }
    accounting::RecordBatch batch;
    batch.node_events = node_events_.observe(services, now);
    accounting_.record(std::move(batch));
}

void Controller::purge_accounting(int64_t ended_before) {
    constexpr size_t kPurgeBatch = 10000;
    accounting_.read([ended_before](accounting::AccountingStore& store) {
        size_t total = 0;
        for (;;) {
            auto purged = store.purge(ended_before, kPurgeBatch);
            if (!purged) {
                spdlog::error("accounting purge: {}", purged.status().message());
                return;
            }
            total += *purged;
            if (*purged < kPurgeBatch) {
                break;
            }
        }
        if (total > 0) {
            spdlog::info("accounting: purged {} jobs that ended before {}", total, ended_before);
        }
    });
}

}  // namespace cohort::ctld
