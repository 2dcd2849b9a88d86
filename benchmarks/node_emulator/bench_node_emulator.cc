// Many nodes from one process, speaking the real agent protocol to a real cohortctld: each
// emulated node registers with the resources given, heartbeats at the cluster's interval
// with the jobs it runs, takes batch launches and reports each job done after its run time
// (`sleep N` in its script, else --run-s), and answers terminations as cohortd does.
// Nothing is executed. It prints one line per --report-s and runs until SIGINT/SIGTERM.
//   bench_node_emulator --conf FILE [--first I] [--count N] [--cpus C] [--memory-mib M]
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/asio.h"
#include "common/config.h"
#include "common/protocol/messages.h"
#include "common/transport/connect.h"
#include "common/transport/connection.h"
#include "common/transport/dispatcher.h"

namespace {

using namespace cohort;
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using ConnectionPtr = std::shared_ptr<transport::Connection>;

struct Options {
    std::string conf;
    size_t first = 0;
    size_t count = 0;  // 0: every node of the config from `first` on
    int32_t cpus = 64;
    int64_t memory_mib = 256 * 1024;
    int64_t run_s = 60;
    int64_t report_s = 10;
    size_t connecting_at_once = 128;
};

// What the run time of a job is: the N of a `sleep N` in its script, else the default.
int64_t run_time_of(const protocol::JobRecord& job, int64_t fallback_s) {
    static const std::regex kSleep(R"(\bsleep\s+([0-9]+))");
    std::smatch match;
    if (std::regex_search(job.spec.script, match, kSleep)) {
        return std::stoll(match[1].str());
    }
    return fallback_s;
}

class Emulator {
public:
    Emulator(asio::io_context& io, ClusterConfig config, std::string key, Options options)
        : io_(io),
          config_(std::move(config)),
          key_(std::move(key)),
          options_(std::move(options)),
          dispatcher_([this](size_t node, const Status& why) {
              std::fprintf(stderr, "%s: from the controller: %s\n", nodes_[node].name.c_str(),
                           why.message().c_str());
          }),
          report_timer_(io) {
        const size_t end = options_.count == 0 ? config_.nodes.size()
                                               : std::min(config_.nodes.size(),
                                                          options_.first + options_.count);
        for (size_t i = options_.first; i < end; ++i) {
            nodes_.push_back(Node{config_.nodes[i], nullptr, asio::steady_timer(io_), {}, false});
        }
        register_handlers();
    }

    size_t size() const { return nodes_.size(); }

    void start() {
        started_ = Clock::now();
        for (size_t i = 0; i < std::min(options_.connecting_at_once, nodes_.size()); ++i) {
            connect_next();
        }
        report();
    }

private:
    struct RunningJob {
        std::unique_ptr<asio::steady_timer> done;  // only on the node that runs the script
    };

    struct Node {
        std::string name;
        ConnectionPtr connection;
        asio::steady_timer heartbeat;
        std::unordered_map<uint64_t, RunningJob> jobs;
        bool registered = false;
    };

    void register_handlers() {
        using namespace protocol;
        dispatcher_.on<RegisterNodeReply>([this](size_t node, const RegisterNodeReply& reply) {
            if (std::exchange(nodes_[node].registered, true)) {
                return;
            }
            // Heartbeats at the controller's interval, spread over it as independent agents'
            // would be.
            heartbeat_interval_ms_ = reply.heartbeat_interval_ms;
            std::uniform_int_distribution<int64_t> offset(0, heartbeat_interval_ms_ - 1);
            heartbeat(node, std::chrono::milliseconds(offset(random_)));
            if (++registered_ == nodes_.size()) {
                std::printf("all %zu nodes registered in %.1f s\n", nodes_.size(),
                            seconds_since(started_));
                std::fflush(stdout);
            }
        });
        dispatcher_.on<LaunchBatchRequest>(
                [this](size_t node, const LaunchBatchRequest& request) { launch(node, request); });
        dispatcher_.on<TerminateJobRequest>(
                [this](size_t node, const TerminateJobRequest& request) {
                    terminate(node, request);
                });
        dispatcher_.on<ErrorReply>([this](size_t node, const ErrorReply& error) {
            std::fprintf(stderr, "%s: controller: %s\n", nodes_[node].name.c_str(),
                         error.message.c_str());
        });
    }

    void connect_next() {
        if (next_to_connect_ < nodes_.size()) {
            connect(next_to_connect_++);
        }
    }

    // As cohortd: a controller not yet listening is tried again every half second.
    void connect(size_t node) {
        transport::async_connect_to(
                io_, config_.controller_host, config_.controller_port, std::chrono::seconds(10),
                [this, node](Result<asio::ip::tcp::socket> socket) {
                    asio::post(io_, [this, node, socket = std::move(socket)]() mutable {
                        if (socket) {
                            connected(node, std::move(*socket));
                            connect_next();
                            return;
                        }
                        Node& n = nodes_[node];
                        n.heartbeat.expires_after(std::chrono::milliseconds(500));
                        n.heartbeat.async_wait([this, node](boost::system::error_code ec) {
                            if (!ec) {
                                connect(node);
                            }
                        });
                    });
                });
    }

    void connected(size_t node, asio::ip::tcp::socket socket) {
        Node& n = nodes_[node];
        n.connection = transport::Connection::create(std::move(socket), key_, self_);
        n.connection->start(
                [this, node](const ConnectionPtr&, protocol::Envelope envelope) {
                    // Handlers run on the connection's strand; the emulator's state lives on
                    // the io thread, which is the only one.
                    asio::post(io_, [this, node, envelope = std::move(envelope)]() mutable {
                        dispatcher_.dispatch(node, std::move(envelope));
                    });
                },
                [this, node](const ConnectionPtr&, const Status& why) {
                    asio::post(io_, [this, node, why] {
                        std::fprintf(stderr, "%s: connection closed: %s\n",
                                     nodes_[node].name.c_str(), why.message().c_str());
                        nodes_[node].connection.reset();
                        nodes_[node].heartbeat.cancel();
                    });
                });
        protocol::RegisterNodeRequest request;
        request.name = n.name;
        request.address = "127.0.0.1";
        request.port = 1;  // nothing listens: steps cannot be launched on emulated nodes
        request.resources.cpus = options_.cpus;
        request.resources.sockets = 2;
        request.resources.cores = options_.cpus;
        request.resources.numa_nodes = 2;
        request.resources.memory_mib = options_.memory_mib;
        request.boot_time = boot_time_;
        n.connection->send(request);
    }

    void heartbeat(size_t node, std::chrono::milliseconds after) {
        nodes_[node].heartbeat.expires_after(after);
        nodes_[node].heartbeat.async_wait([this, node](boost::system::error_code ec) {
            Node& n = nodes_[node];
            if (ec || !n.connection) {
                return;
            }
            protocol::HeartbeatMessage message;
            message.node = n.name;
            for (const auto& [id, job] : n.jobs) {
                message.running_jobs.push_back(id);
            }
            n.connection->send(message);
            ++heartbeats_;
            heartbeat(node, std::chrono::milliseconds(heartbeat_interval_ms_));
        });
    }

    void launch(size_t node, const protocol::LaunchBatchRequest& request) {
        Node& n = nodes_[node];
        const uint64_t id = request.job.job_id;
        if (n.jobs.count(id) != 0) {
            return;  // a duplicate launch
        }
        ++launched_;
        RunningJob& job = n.jobs[id];
        job.done = std::make_unique<asio::steady_timer>(io_);
        job.done->expires_after(std::chrono::seconds(run_time_of(request.job, options_.run_s)));
        job.done->async_wait([this, node, id](boost::system::error_code ec) {
            if (!ec) {
                finish(node, id, 0);
            }
        });
    }

    // The script ended (or was killed with `signal`): report it, as the real agent does.
    void finish(size_t node, uint64_t id, int32_t signal) {
        Node& n = nodes_[node];
        auto it = n.jobs.find(id);
        if (it == n.jobs.end() || !it->second.done) {
            return;
        }
        it->second.done.reset();
        ++finished_;
        if (n.connection) {
            protocol::BatchDoneReport done;
            done.job_id = id;
            done.node = n.name;
            done.exit_signal = signal;
            n.connection->send(done);
        }
    }

    void terminate(size_t node, const protocol::TerminateJobRequest& request) {
        Node& n = nodes_[node];
        if (request.signal != 0 && request.signal != SIGKILL) {
            return;  // a signal the emulated script ignores
        }
        finish(node, request.job_id, request.signal == 0 ? SIGTERM : SIGKILL);
        n.jobs.erase(request.job_id);
        if (request.signal == 0 && n.connection) {
            protocol::JobCleanedReport cleaned;
            cleaned.job_id = request.job_id;
            cleaned.node = n.name;
            n.connection->send(cleaned);
        }
    }

    void report() {
        report_timer_.expires_after(std::chrono::seconds(options_.report_s));
        report_timer_.async_wait([this](boost::system::error_code ec) {
            if (ec) {
                return;
            }
            size_t running = 0;
            for (const Node& n : nodes_) {
                running += n.jobs.size();
            }
            std::printf(
                    "%.0f s: %zu/%zu nodes registered, %zu heartbeats sent, %zu launched, "
                    "%zu finished, %zu running\n",
                    seconds_since(started_), registered_, nodes_.size(), heartbeats_, launched_,
                    finished_, running);
            std::fflush(stdout);
            report();
        });
    }

    static double seconds_since(Clock::time_point t) {
        return std::chrono::duration<double>(Clock::now() - t).count();
    }

    asio::io_context& io_;
    ClusterConfig config_;
    std::string key_;
    Options options_;
    protocol::Credential self_{static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())};
    int64_t boot_time_ = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    transport::Dispatcher<size_t> dispatcher_;
    std::vector<Node> nodes_;
    asio::steady_timer report_timer_;
    std::mt19937 random_{20261204};
    Clock::time_point started_;
    size_t next_to_connect_ = 0;
    size_t registered_ = 0;
    size_t heartbeats_ = 0;
    int64_t heartbeat_interval_ms_ = 0;  // the controller's, from its RegisterNodeReply
    size_t launched_ = 0;
    size_t finished_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    Options options;
    CLI::App app{"Emulate nodes against a real cohortctld: bench_node_emulator --conf FILE"};
    app.add_option("--conf", options.conf, "the cluster's config (its nodes, controller, key)")
            ->required();
    app.add_option("--first", options.first, "index in the config's nodes of the first node");
    app.add_option("--count", options.count, "how many nodes (default: all from --first on)");
    app.add_option("--cpus", options.cpus, "CPUs per node")->check(CLI::PositiveNumber);
    app.add_option("--memory-mib", options.memory_mib, "memory per node, MiB")
            ->check(CLI::PositiveNumber);
    app.add_option("--run-s", options.run_s, "run time of a job without `sleep N`")
            ->check(CLI::NonNegativeNumber);
    app.add_option("--report-s", options.report_s, "seconds between progress lines")
            ->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    auto config = load_config(options.conf);
    if (!config) {
        std::fprintf(stderr, "bench_node_emulator: %s\n", config.status().message().c_str());
        return 1;
    }
    auto key = load_key(config->key_file);
    if (!key) {
        std::fprintf(stderr, "bench_node_emulator: %s\n", key.status().message().c_str());
        return 1;
    }
    asio::io_context io;
    Emulator emulator(io, std::move(*config), std::move(*key), options);
    if (emulator.size() == 0) {
        std::fprintf(stderr, "bench_node_emulator: --first/--count select no node of %s\n",
                     options.conf.c_str());
        return 1;
    }
    asio::signal_set stop(io, SIGINT, SIGTERM);
    stop.async_wait([&](boost::system::error_code, int) { io.stop(); });
    emulator.start();
    io.run();
    return 0;
}
