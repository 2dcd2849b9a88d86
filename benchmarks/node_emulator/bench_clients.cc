// Many clients at once against a live cohortctld, each in a bounded loop of the requests
// `cohort queue -h -j JOB`, `cohort batch -N1 -n1 -t 1 --wrap 'sleep 5'` and `cohort cancel
// ID` send, with a connection per request as those commands make. Each request is timed
// from connect to its last reply frame: the latency the controller gives a client, without
// the start-up of as many command processes as clients (on a 2-core machine, 64 processes
// starting at once wait seconds for a core before they send anything).
//   bench_clients [--clients 64] [--rounds 5] [--job 1]   (COHORT_CONF names the cluster)
// Prints "queries|submissions|cancels COUNT p50 P50_MS p99 P99_MS max MAX_MS" and
// "errors N FIRST_ERROR".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/batch_script.h"
#include "cli/client_context.h"
#include "cli/job_options.h"

namespace {

using namespace cohort;
using SteadyClock = std::chrono::steady_clock;

struct Latencies {
    std::vector<double> queries, submissions, cancels;  // ms
    size_t errors = 0;
    std::string first_error;
};

double ms_since(SteadyClock::time_point start) {
    return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

// The job listing `cohort queue -j JOB` asks for, read to its last frame.
Status query_job(const cli::ClientContext& context, uint64_t job) {
    auto client = cli::connect_controller(context);
    if (!client) {
        return client.status();
    }
    protocol::QueryJobsRequest request;
    request.job_ids = {job};
    request.columns_only = true;
    if (Status sent = client->send(request); !sent) {
        return sent;
    }
    protocol::Envelope envelope;
    protocol::JobListReply reply;
    do {
        if (Status received = client->receive_into(envelope); !received) {
            return received;
        }
        if (Status decoded = protocol::decode_message_into(envelope, reply); !decoded) {
            return decoded;
        }
    } while (reply.more);
    return Status::ok();
}

Result<uint64_t> submit(const cli::ClientContext& context, const protocol::JobSpec& spec) {
    auto client = cli::connect_controller(context);
    if (!client) {
        return client.status();
    }
    protocol::SubmitJobRequest request;
    request.spec = spec;
    auto reply = client->call<protocol::SubmitJobReply>(request);
    if (!reply) {
        return reply.status();
    }
    return reply->job_id;
}

Status cancel(const cli::ClientContext& context, uint64_t job) {
    auto client = cli::connect_controller(context);
    if (!client) {
        return client.status();
    }
    protocol::JobControlRequest request;
    request.job_ids = {job};
    auto reply = client->call<protocol::JobControlReply>(request);
    if (!reply) {
        return reply.status();
    }
    if (!reply->errors.empty()) {
        return Status::invalid(reply->errors.front());
    }
    return Status::ok();
}

// One client's loop; its figures are merged into `all` at the end.
void run_client(const cli::ClientContext& context,
                const protocol::JobSpec& spec,
                uint64_t query_job_id,
                int rounds,
                std::latch& start,
                std::mutex& merge,
                Latencies& all) {
    Latencies mine;
    auto failed = [&mine](const Status& status) {
        if (mine.errors++ == 0) {
            mine.first_error = status.message();
        }
    };
    start.arrive_and_wait();
    for (int round = 0; round < rounds; ++round) {
        auto t0 = SteadyClock::now();
        if (Status queried = query_job(context, query_job_id); !queried) {
            failed(queried);
        }
        mine.queries.push_back(ms_since(t0));
        t0 = SteadyClock::now();
        auto id = submit(context, spec);
        mine.submissions.push_back(ms_since(t0));
        if (!id) {
            failed(id.status());
            continue;
        }
        t0 = SteadyClock::now();
        if (Status cancelled = cancel(context, *id); !cancelled) {
            failed(cancelled);
        }
        mine.cancels.push_back(ms_since(t0));
    }
    std::lock_guard lock(merge);
    all.queries.insert(all.queries.end(), mine.queries.begin(), mine.queries.end());
    all.submissions.insert(all.submissions.end(), mine.submissions.begin(), mine.submissions.end());
    all.cancels.insert(all.cancels.end(), mine.cancels.begin(), mine.cancels.end());
    if (all.errors == 0 && mine.errors > 0) {
        all.first_error = mine.first_error;
    }
    all.errors += mine.errors;
}

// The value below which `percent` of the samples lie (nearest rank).
double percentile(std::vector<double> samples, int percent) {
    if (samples.empty()) {
        return 0;
    }
    std::sort(samples.begin(), samples.end());
    const size_t rank = (samples.size() * percent + 99) / 100;
    return samples[std::max<size_t>(rank, 1) - 1];
}

void print_latencies(const char* what, const std::vector<double>& samples) {
    std::printf("%s %zu p50 %.1f p99 %.1f max %.1f\n", what, samples.size(),
                percentile(samples, 50), percentile(samples, 99), percentile(samples, 100));
}

}  // namespace

int main(int argc, char** argv) {
    int clients = 64;
    int rounds = 5;
    uint64_t query_job_id = 1;
    CLI::App app{"Concurrent clients against a live cohortctld: bench_clients [--clients N]"};
    app.add_option("--clients", clients, "clients at once, each a thread")
            ->check(CLI::Range(1, 1024));
    app.add_option("--rounds", rounds, "query, submission and cancel rounds per client")
            ->check(CLI::PositiveNumber);
    app.add_option("--job", query_job_id, "the job id each query asks for");
    CLI11_PARSE(app, argc, argv);

    auto context = cli::load_client_context();
    if (!context) {
        std::fprintf(stderr, "bench_clients: %s\n", context.status().message().c_str());
        return 1;
    }
    cli::JobOptions options;
    options.nodes = "1";
    options.ntasks = "1";
    options.time = "1";
    auto spec = cli::job_spec_from(options);
    if (!spec) {
        std::fprintf(stderr, "bench_clients: %s\n", spec.status().message().c_str());
        return 1;
    }
    spec->name = "wrap";
    spec->script = cli::wrap_command_script("sleep 5");

    std::latch start(clients);
    std::mutex merge;
    Latencies all;
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back(run_client, std::cref(*context), std::cref(*spec), query_job_id,
                             rounds, std::ref(start), std::ref(merge), std::ref(all));
    }
    for (auto& thread : threads) {
        thread.join();
    }
    print_latencies("queries", all.queries);
    print_latencies("submissions", all.submissions);
    print_latencies("cancels", all.cancels);
    std::printf("errors %zu %s\n", all.errors, all.first_error.c_str());
    return all.errors == 0 ? 0 : 1;
}
