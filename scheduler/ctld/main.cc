// cohortctld: the Cohort controller daemon.
#include <csignal>
#include <thread>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "accounting/accounting_store.h"
#include "common/asio.h"
#include "common/config.h"
#include "common/daemon.h"
#include "scheduler/ctld/controller.h"
#include "scheduler/ctld/state/sqlite_state_store.h"

int main(int argc, char** argv) {
    CLI::App app{"cohortctld: the Cohort controller"};
    std::string config_path = cohort::default_config_path();
    std::string pid_file;
    std::string log_level = "info";
    app.add_option("--config", config_path, "cluster configuration file");
    app.add_option("--pid-file", pid_file, "write the daemon's pid here");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
    CLI11_PARSE(app, argc, argv);
    spdlog::set_level(spdlog::level::from_str(log_level));

    auto config = cohort::load_config(config_path);
    auto key = config ? cohort::load_key(config->key_file) : cohort::Result<std::string>("");
    if (!config || !key) {
        spdlog::error("{}", (!config ? config.status() : key.status()).message());
        return 1;
    }
    auto store = cohort::ctld::SqliteStateStore::open(config->state_dir + "/cohort.db",
                                                      config->sqlite_synchronous);
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
    boost::asio::io_context io;
    const cohort::SystemClock clock;
    cohort::ctld::Controller controller(io, clock, *config, *key, std::move(*store),
                                        std::move(*accounting));
    if (auto started = controller.start(); !started) {
        spdlog::error("{}", started.message());
        return 1;
    }
    cohort::write_pid_file(pid_file);
    cohort::stop_on_signals(io, [&] { controller.stop(); });
    std::thread second([&] { io.run(); });  // one for I/O, one for I/O and the strand
    io.run();
    second.join();
    cohort::remove_pid_file(pid_file);
    return 0;
}
