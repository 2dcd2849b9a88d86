// `cohort acct` over a long history: fills a state database with N finished jobs of U users
// spread over D days (each with one step), then times the store query behind
// `cohort acct -u USER -S now-7days` and behind the default (today's jobs of everyone).
// Prints JSON.  bench_acct_history [--jobs N] [--users U] [--days D] [--db PATH]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "scheduler/ctld/state/sqlite_state_store.h"

namespace {

using cohort::ctld::JobFilter;
using cohort::ctld::SqliteStateStore;
using Clock = std::chrono::steady_clock;

double best_ms(SqliteStateStore& store, const JobFilter& filter, size_t& rows) {
    double best = 1e18;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        auto jobs = store.query_jobs(filter);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        rows = jobs ? jobs->size() : 0;
        best = std::min(best, ms);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Time cohort acct's store queries over a long history"};
    int64_t jobs = 1000000;
    int users = 100;
    int days = 60;
    std::string path = "/tmp/cohort-bench-acct.db";
    app.add_option("--jobs", jobs, "finished jobs in the history");
    app.add_option("--users", users, "distinct users");
    app.add_option("--days", days, "days the history spans, ending now");
    app.add_option("--db", path, "database file (replaced)");
    CLI11_PARSE(app, argc, argv);

    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    auto store = SqliteStateStore::open(path, "normal");
    if (!store) {
        std::cerr << store.status().message() << "\n";
        return 1;
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
    const int64_t span = int64_t{days} * 86400;
    const auto fill0 = Clock::now();
    cohort::protocol::JobRecord job;
    job.spec.name = "train";
    job.spec.cwd = "/home/user/project";
    job.partition = "batch";
    job.state = cohort::JobState::kCompleted;
    job.nodes = {"node001", "node002"};
    job.cpus_per_node = {64, 64};
    cohort::protocol::StepRecord step;
    step.name = "batch";
    step.state = cohort::JobState::kCompleted;
    for (int64_t i = 0; i < jobs; ++i) {
        if (i % 10000 == 0 && ((i > 0 && !(*store)->commit()) || !(*store)->begin())) {
            std::cerr << "filling failed\n";
            return 1;
        }
        job.job_id = static_cast<uint64_t>(i + 1);
        job.user_name = "user" + std::to_string(i % users);
        job.end_time = now - span + span * i / jobs;  // oldest first, evenly spread
        job.start_time = job.end_time - 3600;
        job.submit_time = job.start_time - 60;
        step.job_id = job.job_id;
        if (!(*store)->put_job(job) || !(*store)->put_step(step)) {
            std::cerr << "filling failed\n";
            return 1;
        }
    }
    (*store)->commit();
    const double fill_s = std::chrono::duration<double>(Clock::now() - fill0).count();

    size_t week_rows = 0;
    size_t today_rows = 0;
    const double week_ms =
            best_ms(**store, JobFilter{{}, "user7", now - 7 * 86400, {}, 0}, week_rows);
    const double today_ms = best_ms(**store, JobFilter{{}, "", now - 86400, {}, 0}, today_rows);
    nlohmann::json out = {{"jobs", jobs},
                          {"users", users},
                          {"days", days},
                          {"fill_s", fill_s},
                          {"one_user_last_week_ms", week_ms},
                          {"one_user_last_week_rows", week_rows},
                          {"everyone_last_day_ms", today_ms},
                          {"everyone_last_day_rows", today_rows}};
    std::cout << out.dump() << "\n";
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    return 0;
}
