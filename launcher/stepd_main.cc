// cohort-stepd: the step manager the node agent starts for each MPI step on its node.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/asio.h"
#include "common/config.h"
#include "launcher/step_manager.h"

int main(int argc, char** argv) {
    CLI::App app{"cohort-stepd: one step's PMIx server and collectives on one node"};
    std::string key_file;
    cohort::stepd::StepManagerOptions options;
    int timeout_s = 300;
    app.add_option("--key-file", key_file, "the cluster key")->required();
    app.add_option("--agent-host", options.agent_host, "the node agent's address")->required();
    app.add_option("--agent-port", options.agent_port, "the node agent's port")->required();
    app.add_option("--job", options.job_id, "job id")->required();
    app.add_option("--step", options.step_id, "step id")->required();
    app.add_option("--fanout", options.fanout, "children per node in collective trees");
    app.add_option("--transport", options.transport, "tcp or ucx, to reach the other nodes")
            ->check(CLI::IsMember({"tcp", "ucx"}));
    app.add_option("--fence-timeout", timeout_s, "seconds a fence may wait for other nodes");
    app.add_option("--pmi-fds", options.pmi_fds,
                   "inherited sockets, one per local rank in order, that are the ranks' PMI_FD")
            ->delimiter(',');
    CLI11_PARSE(app, argc, argv);
    options.fence_timeout = std::chrono::seconds(timeout_s);

    auto key = cohort::load_key(key_file);
    if (!key) {
        spdlog::error("{}", key.status().message());
        return 1;
    }
    boost::asio::io_context io;
    cohort::stepd::StepManager manager(io, *key, options);
    if (auto started = manager.start(); !started) {
        spdlog::error("step {}.{}: {}", options.job_id, options.step_id, started.message());
        return 1;
    }
    boost::asio::signal_set stop(io, SIGTERM, SIGINT);
    stop.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
    io.run();
    return manager.exit_code();
}
