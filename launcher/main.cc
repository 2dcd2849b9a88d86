// cohortd: the Cohort node agent.
#include <cstdio>
#include <filesystem>
#include <functional>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/asio.h"
#include "common/config.h"
#include "common/daemon.h"
#include "common/size_spec.h"
#include "common/topology/discover.h"
#include "common/topology/topology_report.h"
#include "launcher/agent.h"

namespace {

cohort::protocol::NodeResources resources_of(const cohort::topology::NodeTopology& topo) {
    cohort::protocol::NodeResources resources;
    resources.cpus = topo.pus;
    resources.sockets = topo.sockets;
    resources.cores = topo.cores;
    resources.numa_nodes = static_cast<int32_t>(topo.numa_nodes.size());
    resources.memory_mib = topo.memory_mib;
    resources.gpus = static_cast<int32_t>(topo.gpus.size());
    resources.topology = topo;  // GPU locality for the controller's GPU-set choice
    return resources;
}

std::string host_name() {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    return name;
}

// The local address the kernel would send from to reach the controller: the interface a
// multi-host cluster's clients and peers reach this host on; 127.0.0.1 for a local instance.
// A UDP socket's connect only picks the route; nothing is sent.
std::string address_towards(const std::string& host, uint16_t port) {
    boost::asio::io_context io;
    boost::system::error_code ec;
    boost::asio::ip::udp::socket probe(io);
    const auto controller = boost::asio::ip::make_address(host, ec);
    if (!ec) {
        probe.connect({controller, port}, ec);
    }
    if (ec) {
        return "127.0.0.1";
    }
    return probe.local_endpoint(ec).address().to_string();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"cohortd: the Cohort node agent"};
    std::string config_path = cohort::default_config_path();
    cohort::agent::AgentOptions options;
    options.name = host_name();
    std::string topology_xml, memory, pid_file, log_level = "info";
    int cpus = 0;
    bool show_topology = false, json = false;
    app.add_option("--config", config_path, "cluster configuration file");
    app.add_option("--name", options.name, "this node's name in the cluster configuration");
    app.add_option("--address", options.address,
                   "address step clients connect to (default: this host's address towards the "
                   "controller)");
    app.add_option("--port", options.port, "port for step clients (0: any free port)");
    app.add_option("--topology", topology_xml, "load a recorded hwloc XML instead of probing");
    app.add_option("--cpus", cpus, "CPUs to offer instead of the discovered count");
    app.add_option("--memory", memory, "memory to offer instead of the discovered size");
    app.add_option("--spool-dir", options.spool_dir, "where batch scripts are kept");
    app.add_option("--pid-file", pid_file, "write the daemon's pid here");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
    app.add_flag("--show-topology", show_topology,
                 "print what this node would register and exit without registering");
    app.add_flag("--json", json, "with --show-topology: print JSON");
    CLI11_PARSE(app, argc, argv);
    spdlog::set_level(spdlog::level::from_str(log_level));

    auto topology = topology_xml.empty() ? cohort::topology::discover_local_topology()
                                         : cohort::topology::load_topology_xml(topology_xml);
    if (!topology) {
        spdlog::error("{}", topology.status().message());
        return 1;
    }
    if (show_topology) {
        std::fputs((json ? cohort::topology::topology_json(*topology)
                         : cohort::topology::topology_text(*topology))
                           .c_str(),
                   stdout);
        return 0;
    }

    auto config = cohort::load_config(config_path);
    auto key = config ? cohort::load_key(config->key_file) : cohort::Result<std::string>("");
    if (!config || !key) {
        spdlog::error("{}", (!config ? config.status() : key.status()).message());
        return 1;
    }
    if (app.count("--address") == 0) {
        options.address = address_towards(config->controller_host, config->controller_port);
    }
    auto resources = resources_of(*topology);
    if (cpus > 0) {
        resources.cpus = cpus;
    }
    if (!memory.empty()) {
        auto mib = cohort::parse_memory_mib(memory);
        if (!mib) {
            spdlog::error("--memory: {}", mib.status().message());
            return 1;
        }
        resources.memory_mib = *mib;
    }
    const auto bin_dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
    options.stepd_binary = (bin_dir / "cohort-stepd").string();
    options.shepherd_binary = (bin_dir / "cohort-shepherd").string();
    if (options.spool_dir.empty()) {
        options.spool_dir = config->state_dir + "/nodes/" + options.name;
    }
    std::error_code ec;
    std::filesystem::create_directories(options.spool_dir, ec);
    // Users' shepherds run their scripts from here by path; nobody may list the directory.
    using std::filesystem::perms;
    std::filesystem::permissions(options.spool_dir,
                                 perms::owner_all | perms::group_exec | perms::others_exec, ec);

    boost::asio::io_context io;
    const cohort::SystemClock clock;
    cohort::agent::Agent agent(io, clock, *config, *key, options, resources);
    if (auto started = agent.start(); !started) {
        spdlog::error("{}", started.message());
        return 1;
    }
    cohort::write_pid_file(pid_file);
    // On SIGTERM the steps' clients hear that this agent stops while their tasks run on: up
    // to a second for those last frames to leave.
    boost::asio::signal_set stop_signals(io, SIGTERM, SIGINT);
    boost::asio::steady_timer flushing(io);
    std::chrono::steady_clock::time_point give_up_at;
    std::function<void()> stop_once_flushed = [&] {
        if (agent.flushed() || std::chrono::steady_clock::now() >= give_up_at) {
            io.stop();
            return;
        }
        flushing.expires_after(std::chrono::milliseconds(10));
        flushing.async_wait([&](const boost::system::error_code&) { stop_once_flushed(); });
    };
    stop_signals.async_wait([&](const boost::system::error_code& signal_ec, int) {
        if (!signal_ec) {
            agent.stop();
            give_up_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            stop_once_flushed();
        }
    });
    io.run();
    cohort::remove_pid_file(pid_file);
    return 0;
}
