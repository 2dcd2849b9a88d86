// Accounting at size: N job records (users, sizes, durations and arrival pattern from an SWF
// trace, repeated and packed into the last D days) loaded into a backend, then the queries
// behind `cohort acct` and `cohort report` timed (best of 5). Prints one JSON object.
//   bench_accounting --trace FILE.swf[.gz] --location (PATH.db | postgresql://...)
//                    [--jobs N] [--days D] [--records-tsv FILE]
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "accounting/accounting_store.h"
#include "scheduler/sim/swf.h"

namespace {

using cohort::accounting::AccountingStore;
using cohort::accounting::AcctFilter;
using cohort::protocol::JobRecord;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Best of five runs of `query`, which returns how many rows it gave.
template <class Query>
std::pair<double, size_t> best_of_five(Query query) {
    double best = 1e18;
    size_t rows = 0;
    for (int i = 0; i < 5; ++i) {
        const auto start = Clock::now();
        rows = query();
        best = std::min(best, ms_since(start));
    }
    return {best, rows};
}

// One record as a row of Slurm 22.05's <cluster>_job_table, in the column order
// vs-slurmdbd.sh loads: id_job, id_user, id_group, account, job_name, partition,
// time_submit, time_eligible, time_start, time_end, state (Slurm's code), exit_code,
// cpus_req, nodes_alloc, nodelist, timelimit (minutes), tres_req, tres_alloc.
void write_slurm_row(std::ostream& out, const JobRecord& job) {
    constexpr int kSlurmComplete = 3;
    constexpr int kSlurmFailed = 5;
    const bool failed = job.state == cohort::JobState::kFailed;
    const uint32_t cpus = job.cpus_per_node.front();
    out << job.job_id << '\t' << job.uid << '\t' << job.uid << '\t' << job.spec.account << '\t'
        << job.spec.name << '\t' << job.partition << '\t' << job.submit_time << '\t'
        << job.submit_time << '\t' << job.start_time << '\t' << job.end_time << '\t'
        << (failed ? kSlurmFailed : kSlurmComplete) << '\t' << (failed ? 256 : 0) << '\t' << cpus
        << "\t1\t" << job.nodes.front() << '\t' << (job.time_limit_s + 59) / 60 << "\t1=" << cpus
        << ",4=1\t1=" << cpus << ",4=1\n";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Load N accounting records into a backend and time acct/report queries"};
    std::string trace_path;
    std::string location;
    int64_t jobs = 1000000;
    int64_t days = 180;
    app.add_option("--trace", trace_path, "SWF trace (plain or gzip)")->required();
    app.add_option("--location", location, "SQLite file (replaced) or postgresql:// URI")
            ->required();
    app.add_option("--jobs", jobs, "records to load");
    app.add_option("--days", days, "days the history spans, ending now");
    std::string records_tsv;
    app.add_option("--records-tsv", records_tsv,
                   "also write the records, a line each, for loading into slurmdbd's "
                   "job table (benchmarks/accounting/vs-slurmdbd.sh)");
    CLI11_PARSE(app, argc, argv);

    auto trace = cohort::sim::read_swf(trace_path);
    if (!trace || trace->jobs.empty()) {
        std::cerr << (trace ? "empty trace" : trace.status().message()) << "\n";
        return 1;
    }
    auto opened = AccountingStore::open(location);
    if (!opened) {
        std::cerr << opened.status().message() << "\n";
        return 1;
    }
    AccountingStore& store = **opened;
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
    // The trace's arrival times, repeated as often as needed, packed into [now - days, now).
    const int64_t trace_span = std::max<int64_t>(trace->jobs.back().submit, 1) + 1;
    const auto trace_jobs = static_cast<int64_t>(trace->jobs.size());
    auto arrival = [&](int64_t i) {
        return (i / trace_jobs) * trace_span + trace->jobs[i % trace_jobs].submit;
    };
    const double scale = static_cast<double>(days * 86400)
                         / static_cast<double>(std::max<int64_t>(arrival(jobs - 1), 1));
    std::map<std::string, int64_t> week_jobs_of_user;  // users with jobs in the last week
    std::map<std::string, uint32_t> uid_of_user;

    std::ofstream tsv;
    if (!records_tsv.empty()) {
        tsv.open(records_tsv);
        if (!tsv) {
            std::cerr << "cannot write " << records_tsv << "\n";
            return 1;
        }
    }
    const auto load_start = Clock::now();
    cohort::accounting::RecordBatch batch;
    for (int64_t i = 0; i < jobs; ++i) {
        const auto& swf = trace->jobs[i % trace->jobs.size()];
        JobRecord job;
        job.job_id = static_cast<uint64_t>(i + 1);
        job.user_name = "user" + std::to_string(swf.user);
        job.uid = static_cast<uint32_t>(1000 + swf.user);
        job.spec.account = "account" + std::to_string(swf.user % 16);
        job.spec.name = "job" + std::to_string(swf.id);
        job.partition = "batch";
        job.spec.qos = "normal";
        job.submit_time =
                now - days * 86400 + static_cast<int64_t>(static_cast<double>(arrival(i)) * scale);
        job.eligible_time = job.submit_time;
        job.start_time = job.submit_time + std::max<int64_t>(swf.wait, 0);
        job.end_time = std::min(job.start_time + std::max<int64_t>(swf.run, 1), now - 1);
        job.state = swf.run > 0 ? cohort::JobState::kCompleted : cohort::JobState::kFailed;
        const int64_t cpus = std::max<int64_t>(swf.allocated_procs, 1);
        job.nodes = {"node" + std::to_string(i % 1024)};
        job.cpus_per_node = {static_cast<uint32_t>(cpus)};
        job.tasks_per_node = {static_cast<uint32_t>(cpus)};
        job.time_limit_s = swf.requested_time > 0 ? swf.requested_time : 3600;
        job.usage.cpu_user_usec =
                static_cast<uint64_t>(std::max<int64_t>(swf.run, 0) * cpus) * 900000;
        job.usage.max_rss_kib = 1024 * static_cast<uint64_t>(64 + i % 4096);
        job.usage.max_rss_node = job.nodes.front();
        if (job.end_time >= now - 7 * 86400) {
            ++week_jobs_of_user[job.user_name];
            uid_of_user[job.user_name] = job.uid;
        }
        if (tsv) {
            write_slurm_row(tsv, job);
        }
        batch.jobs.push_back(std::move(job));
        if (batch.jobs.size() == 10000 || i + 1 == jobs) {
            if (cohort::Status s = store.record(batch); !s) {
                std::cerr << s.message() << "\n";
                return 1;
            }
            batch = {};
        }
    }
    const double load_s = ms_since(load_start) / 1000.0;

    // Of the users with jobs in the last week, a typical one (the median by jobs) and the
    // busiest.
    std::vector<std::pair<int64_t, std::string>> users;
    for (const auto& [user, count] : week_jobs_of_user) {
        users.emplace_back(count, user);
    }
    std::sort(users.begin(), users.end());
    const std::string median_user = users[users.size() / 2].second;
    const std::string top_user = users.back().second;
    const uint32_t median_uid = uid_of_user[median_user];

    auto listed = [&store](const AcctFilter& filter) {
        size_t rows = 0;
        cohort::Status s = store.each_job(filter, [&rows](JobRecord&&) { ++rows; });
        return s ? rows : 0;
    };
    AcctFilter median_week;
    median_week.users = {median_user};
    median_week.since = now - 7 * 86400;
    AcctFilter top_week = median_week;
    top_week.users = {top_user};
    AcctFilter everyone_day;
    everyone_day.since = now - 86400;
    const auto [median_ms, median_rows] = best_of_five([&] { return listed(median_week); });
    const auto [top_ms, top_rows] = best_of_five([&] { return listed(top_week); });
    const auto [day_ms, day_rows] = best_of_five([&] { return listed(everyone_day); });
    // All that `cohort report cluster utilization` asks of the store for a month: usage per
    // account and user, nodes' lost time, and the waits split hour by hour (1,024 CPUs).
    const auto [month_ms, month_groups] = best_of_five([&] {
        const int64_t month_ago = now - 30 * 86400;
        auto totals = store.usage(month_ago, now);
        auto lost = store.node_time(month_ago, now);
        auto waited = store.eligible_wait(month_ago, now, 1024, 0);
        return totals && lost && waited ? totals->size() : 0;
    });
    // What the controller reads at start for fair-share, with the default 7-day half-life.
    const auto [fairshare_ms, fairshare_users] = best_of_five([&] {
        auto usage = store.decayed_usage(now, 7 * 86400);
        return usage ? usage->size() : 0;
    });

    nlohmann::json out = {{"backend", store.backend()},
                          {"jobs", jobs},
                          {"days", days},
                          {"users_active_last_week", users.size()},
                          {"median_user", median_user},
                          {"median_user_uid", median_uid},
                          {"load_s", load_s},
                          {"ingest_per_s", static_cast<double>(jobs) / load_s},
                          {"median_user_week_ms", median_ms},
                          {"median_user_week_rows", median_rows},
                          {"top_user_week_ms", top_ms},
                          {"top_user_week_rows", top_rows},
                          {"everyone_last_day_ms", day_ms},
                          {"everyone_last_day_rows", day_rows},
                          {"month_utilization_ms", month_ms},
                          {"month_utilization_groups", month_groups},
                          {"fairshare_read_ms", fairshare_ms},
                          {"fairshare_read_users", fairshare_users}};
    std::cout << out.dump() << "\n";
    return 0;
}
