// cohortctld: the Cohort controller daemon.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include <CLI/CLI.hpp>
#include <malloc.h>
#include <spdlog/spdlog.h>

#include "accounting/accounting_store.h"
#include "common/asio.h"
#include "common/config.h"
#include "common/daemon.h"
#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/state/postgres_state_store.h"
#include "scheduler/ctld/state/sqlite_state_store.h"

namespace {

// SQLite in the state directory, or PostgreSQL shared with standby controllers: then this
// one waits here until it holds the controllers' lock.
cohort::Result<std::unique_ptr<cohort::ctld::StateStore>> open_state_store(
        const cohort::ClusterConfig& config) {
    if (config.state.empty()) {
        auto store = cohort::ctld::SqliteStateStore::open(config.state_dir + "/cohort.db",
                                                          config.sqlite_synchronous);
        if (!store) {
            return store.status();
        }
        return std::unique_ptr<cohort::ctld::StateStore>(std::move(*store));
    }
    auto store = cohort::ctld::PostgresStateStore::open(config.state);
    if (!store) {
        return store.status();
    }
    const auto asked = std::chrono::steady_clock::now();
    bool waited = false;
    cohort::Status active = (*store)->wait_until_active([&waited] {
        waited = true;
        spdlog::info("standby: another cohortctld holds the state lock; waiting for it");
    });
    if (!active) {
        return active;
    }
    if (waited) {
        spdlog::info("active: took the state lock after {} ms standing by",
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - asked)
                             .count());
    }
    return std::unique_ptr<cohort::ctld::StateStore>(std::move(*store));
}

}  // namespace

int main(int argc, char** argv) {
    // One heap for every thread. With glibc's heap per thread, what the state and accounting
    // writers' threads free between batches stays resident beside the job table: 0.33 KiB
    // per pending job at 100,000 (malloc_stats), with no gain in submission rate.
    mallopt(M_ARENA_MAX, 1);
    CLI::App app{"cohortctld: the Cohort controller"};
    std::string config_path = cohort::default_config_path();
    std::string pid_file;
    std::string log_level = "info";
    std::string listen;
    app.add_option("--config", config_path, "cluster configuration file");
    app.add_option("--pid-file", pid_file, "write the daemon's pid here");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
    app.add_option("--listen", listen,
                   "HOST:PORT to serve on instead of controller.host/port (a backup controller "
                   "names its own entry of controller.backups)");
    CLI11_PARSE(app, argc, argv);
    spdlog::set_level(spdlog::level::from_str(log_level));

    auto config = cohort::load_config(config_path);
    auto key = config ? cohort::load_key(config->key_file) : cohort::Result<std::string>("");
    if (!config || !key) {
        spdlog::error("{}", (!config ? config.status() : key.status()).message());
        return 1;
    }
    if (!listen.empty()) {
        const size_t colon = listen.rfind(':');
        const int port = colon == std::string::npos ? 0 : std::atoi(listen.c_str() + colon + 1);
        if (port <= 0 || port > 65535) {
            spdlog::error("--listen: invalid value '{}' (accepted: HOST:PORT)", listen);
            return 1;
        }
        config->controller_host = listen.substr(0, colon);
        config->controller_port = static_cast<uint16_t>(port);
    }
    auto store = open_state_store(*config);
    if (!store) {
        spdlog::error("{}", store.status().message());
        return 1;
    }
    const std::string accounting_location =
            !config->accounting.empty() ? config->accounting : config->state_dir + "/accounting.db";
    auto accounting =
            cohort::accounting::AccountingStore::open(accounting_location, config->billing_weights);
    if (!accounting) {
        spdlog::error("{}", accounting.status().message());
        return 1;
    }
    // The mail programs the controller starts (mail.cc) are not waited for: the kernel reaps
    // them.
    std::signal(SIGCHLD, SIG_IGN);
    // One thread serves the sockets and one keeps the controller's state: with two threads
    // on one io_context, every message would wake the idle one to take over the poll.
    boost::asio::io_context io(1);
    boost::asio::io_context control(1);
    auto control_busy = boost::asio::make_work_guard(control);
    const cohort::SystemClock clock;
    cohort::ctld::Controller controller(io, control, clock, *config, *key, std::move(*store),
                                        std::move(*accounting));
    if (auto started = controller.start(); !started) {
        spdlog::error("{}", started.message());
        return 1;
    }
    cohort::write_pid_file(pid_file);
    std::thread control_thread([&] { control.run(); });
    cohort::stop_on_signals(io, [&] {
        controller.stop();
        control.stop();
    });
    io.run();
    control_thread.join();
    cohort::remove_pid_file(pid_file);
    return 0;
}
