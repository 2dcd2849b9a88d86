// Starting and stopping a local instance.
#include "cli/local_instance.h"

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/rand.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/asio.h"
#include "common/config.h"
#include "common/hostlist.h"
#include "common/transport/blocking_client.h"
#include "launcher/job_cgroup.h"
#include "launcher/step_record.h"

namespace cohort::cli {
namespace {

namespace fs = std::filesystem;

// Where the daemons are: beside this binary in a build tree, ../sbin once installed.
std::string daemon_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path here = ec ? fs::path(".") : exe.parent_path();
    const fs::path installed = here.parent_path() / "sbin";
    return fs::exists(here / "cohortctld") || !fs::exists(installed / "cohortctld")
                   ? here.string()
                   : installed.string();
}

pid_t read_pid(const std::string& path) {
    std::ifstream in(path);
    pid_t pid = 0;
    in >> pid;
    return pid;
}

bool alive(pid_t pid) {
    return pid > 0 && kill(pid, 0) == 0;
}

Status write_key(const std::string& path) {
    unsigned char key[32];
    if (RAND_bytes(key, sizeof(key)) != 1) {
        return Status::internal("cannot generate a cluster key");
    }
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return Status::io_error("cannot create key file '" + path + "'");
    }
    ssize_t written = write(fd, key, sizeof(key));
    close(fd);
    return written == sizeof(key) ? Status::ok() : Status::io_error("short write to " + path);
}

// The kernel hands out ports in this range to every bind(0) and outgoing connection.
std::pair<int, int> ephemeral_port_range() {
    std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 32768;
    int high = 60999;
    in >> low >> high;
    return {low, high};
}

// A free port for the controller, chosen outside the ephemeral range: a port the kernel
// picks for an agent's listener or a client's connection could otherwise take it between
// this check and the controller's bind.
uint16_t pick_controller_port(const boost::asio::ip::address& address) {
    auto [low, high] = ephemeral_port_range();
    const bool below = low - 10000 >= 2000;  // enough room under the range
    const int first = below ? 10000 : high + 1;
    const int last = below ? low - 1 : 65535;
    boost::asio::io_context io;
    uint32_t seed = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&seed), sizeof(seed));
    const int span = last - first + 1;
    for (int attempt = 0; attempt < 64 && span > 0; ++attempt) {
        const auto port = static_cast<uint16_t>(first + (seed + attempt * 7919u) % span);
        boost::system::error_code ec;
        boost::asio::ip::tcp::acceptor probe(io);
        probe.open(address.is_v4() ? boost::asio::ip::tcp::v4() : boost::asio::ip::tcp::v6(), ec);
        probe.set_option(boost::asio::socket_base::reuse_address(true), ec);
        probe.bind({address, port}, ec);
        if (!ec) {
            return port;
        }
    }
    return 0;
}

// Starts a daemon detached from the terminal, its output in `log`.
Result<pid_t> spawn_daemon(const std::vector<std::string>& argv, const std::string& log) {
    int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        return Status::io_error("cannot open log '" + log + "'");
    }
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int null_fd = open("/dev/null", O_RDONLY);
        dup2(null_fd, STDIN_FILENO);
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        close_range(3, ~0U, 0);  // a daemon holds no descriptor of whoever started it
        execv(args[0], args.data());
        _exit(127);
    }
    close(log_fd);
    if (pid < 0) {
        return Status::io_error("fork failed");
    }
    return pid;
}

Status wait_for_nodes(const ClusterConfig& config,
                      const std::string& key,
                      size_t nodes,
                      const std::vector<pid_t>& pids) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string last = "no answer from cohortctld";
    while (std::chrono::steady_clock::now() < deadline) {
        for (pid_t pid : pids) {
            int status = 0;
            if (waitpid(pid, &status, WNOHANG) == pid) {
                return Status::unavailable("a daemon exited during start-up (see the logs in "
                                           + config.state_dir + ")");
            }
        }
        auto client = transport::BlockingClient::connect(
                config.controller_host, config.controller_port, key,
                {static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())});
        if (client) {
            auto reply = client->call<protocol::NodeListReply>(protocol::QueryNodesRequest{});
            if (reply) {
                // Registered, whether in service or held DOWN by an operator before a restart.
                size_t up = 0;
                for (const auto& node : reply->nodes) {
                    up += node.state != NodeState::kUnknown && !node.address.empty() ? 1 : 0;
                }
                if (up >= nodes) {
                    return Status::ok();
                }
                last = fmt::format("{} of {} nodes registered", up, nodes);
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::unavailable("the instance did not come up within 30 s: " + last
                               + " (see the logs in " + config.state_dir + ")");
}

// Starts cohortctld on a fresh port and waits until it answers, before any agent starts.
// Another instance starting beside this one may take the port between the check and the
// bind; the controller then exits at once, and a new port is tried.
// The "network" object of `cohort start --network FILE`, checked against the instance's nodes.
Result<NetworkConfig> read_network_file(const std::string& path,
                                        const std::vector<std::string>& nodes) {
    std::ifstream in(path);
    if (!in) {
        return Status::invalid("--network: cannot read '" + path + "'");
    }
    nlohmann::json network = nlohmann::json::parse(in, nullptr, false);
    if (network.is_discarded()) {
        return Status::invalid("--network: '" + path + "' is not valid JSON");
    }
    auto read = read_network(nlohmann::json{{"network", network}}, nodes);
    if (!read) {
        return read.status().with_context("--network " + path);
    }
    return read;
}

// `config` with the settings of `path` (a JSON object of cohort.json's keys) over it, checked
// as the config file they end up in is.
Result<ClusterConfig> apply_settings_file(const ClusterConfig& config,
                                          const std::string& path,
                                          const std::string& config_path) {
    std::ifstream in(path);
    if (!in) {
        return Status::invalid("--settings: cannot read '" + path + "'");
    }
    nlohmann::json settings = nlohmann::json::parse(in, nullptr, false);
    if (settings.is_discarded() || !settings.is_object()) {
        return Status::invalid("--settings: '" + path + "' is not a JSON object");
    }
    // The controller's address is chosen here; its backups (standby controllers started
    // by hand against a shared state) may be named.
    nlohmann::json backups;
    if (settings.contains("controller") && settings["controller"].is_object()
        && settings["controller"].size() == 1 && settings["controller"].contains("backups")) {
        backups = settings["controller"]["backups"];
        settings.erase("controller");
    }
    for (const char* fixed : {"nodes", "key_file", "state_dir", "controller"}) {
        if (settings.contains(fixed)) {
            return Status::invalid(
                    fmt::format("--settings: '{}' sets '{}', which cohort start "
                                "chooses (accepted: the other keys of cohort.json)",
                                path, fixed));
        }
    }
    if (Status saved = save_config(config, config_path); !saved) {
        return saved;
    }
    nlohmann::json doc;
    std::ifstream(config_path) >> doc;
    doc.update(settings);
    if (!backups.is_null()) {
        doc["controller"]["backups"] = backups;
    }
    std::ofstream(config_path, std::ios::trunc) << doc.dump(2) << "\n";
    auto merged = load_config(config_path);
    if (!merged) {
        return merged.status().with_context("--settings " + path);
    }
    return merged;
}

// Batch scripts and step tasks outlive their agent (so that restarting cohortd ends no job);
// stopping the whole instance ends them, as a machine's shutdown would.
void end_jobs_left(const std::string& state_dir) {
    std::error_code ec;
    for (const auto& node : fs::directory_iterator(state_dir + "/nodes", ec)) {
        for (pid_t pid : agent::recorded_processes(node.path().string())) {
            killpg(pid, SIGKILL);  // a shepherd and its program
            kill(pid, SIGKILL);    // a step manager, which leads no group
        }
    }
}

// Kills what is left in the cgroups of `dir` and below (daemons that left their batch
// script's process group), then removes them, deepest first.
void remove_cgroup_tree(const fs::path& dir) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.is_directory(ec)) {
            remove_cgroup_tree(entry.path());
        }
    }
    auto members = [&dir] {
        std::vector<pid_t> pids;
        std::ifstream procs(dir / "cgroup.procs");
        for (pid_t pid = 0; procs >> pid;) {
            pids.push_back(pid);
        }
        return pids;
    };
    for (int tries = 0; tries < 100 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++tries) {
        for (pid_t pid : members()) {
            kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// Each agent listed its cgroup directories in its spool; with the jobs ended, they go.
void remove_cgroups_left(const std::string& state_dir) {
    std::error_code ec;
    for (const auto& node : fs::directory_iterator(state_dir + "/nodes", ec)) {
        std::ifstream dirs(node.path() / agent::kCgroupDirsFile);
        for (std::string dir; std::getline(dirs, dir);) {
            if (dir.rfind("/sys/fs/cgroup/", 0) == 0) {
                remove_cgroup_tree(dir);
            }
        }
    }
}

// The instance's own munged: a fresh key, its socket in the state dir. Other users reach
// the socket, the config and the controller; the cluster key stays the owner's.
Status start_munged(const ClusterConfig& config) {
    const std::string dir = config.state_dir + "/munge";
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string key = dir + "/munge.key";
    if (!fs::exists(key)) {
        unsigned char bytes[1024];
        if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
            return Status::internal("cannot generate a MUNGE key");
        }
        std::ofstream(key, std::ios::binary)
                .write(reinterpret_cast<const char*>(bytes), sizeof(bytes));
    }
    chmod(key.c_str(), 0400);
    chmod(dir.c_str(), 0711);
    chmod(config.state_dir.c_str(), 0711);
    fs::remove(config.munge_socket, ec);
    auto munged = spawn_daemon(
            {"/usr/sbin/munged", "--foreground", "--force", "--key-file=" + key,
             "--socket=" + config.munge_socket, "--pid-file=" + dir + "/munged.pid",
             "--seed-file=" + dir + "/seed", "--log-file=" + config.state_dir + "/munged.log"},
            config.state_dir + "/munged.log");
    if (!munged) {
        return munged.status();
    }
    std::ofstream(config.state_dir + "/munged.pid") << *munged << "\n";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!fs::exists(config.munge_socket)) {
        if (!alive(*munged) || waitpid(*munged, nullptr, WNOHANG) == *munged
            || std::chrono::steady_clock::now() > deadline) {
            return Status::unavailable("munged did not start (see " + config.state_dir
                                       + "/munged.log; is the munge package installed?)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::ok();
}

Result<pid_t> start_controller(ClusterConfig& config,
                               const std::string& config_path,
                               const std::string& key,
                               const std::string& ctld_binary,
                               const std::string& pid_file) {
    constexpr int kAttempts = 3;
    Status last = Status::unavailable("no free port for cohortctld");
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        config.controller_port =
                pick_controller_port(boost::asio::ip::make_address(config.controller_host));
        if (config.controller_port == 0) {
            break;
        }
        if (Status saved = save_config(config, config_path); !saved) {
            return saved;
        }
        auto ctld = spawn_daemon({ctld_binary, "--config", config_path, "--pid-file", pid_file},
                                 config.state_dir + "/cohortctld.log");
        if (!ctld) {
            return ctld.status();
        }
        last = wait_for_nodes(config, key, 0, {*ctld});
        if (last) {
            return *ctld;
        }
        if (alive(*ctld)) {  // up but not answering: not a port race, do not retry
            kill(*ctld, SIGKILL);
            waitpid(*ctld, nullptr, 0);
            return last;
        }
    }
    return last;
}

}  // namespace

Result<std::string> start_instance(const InstanceOptions& options) {
    boost::system::error_code bad_address;
    boost::asio::ip::make_address(options.listen_address, bad_address);
    if (bad_address) {
        return Status::invalid(
                fmt::format("--listen: '{}' is not an IP address (accepted: an "
                            "address of this host, such as 127.0.0.1)",
                            options.listen_address));
    }
    std::error_code ec;
    fs::create_directories(options.state_dir, ec);
    if (ec) {
        return Status::io_error("--state-dir: cannot create '" + options.state_dir
                                + "': " + ec.message());
    }
    const std::string dir = fs::absolute(options.state_dir).lexically_normal().string();
    chmod(dir.c_str(), 0700);
    const std::string ctld_pid_file = dir + "/cohortctld.pid";
    if (pid_t pid = read_pid(ctld_pid_file); alive(pid)) {
        return Status::unavailable(
                fmt::format("an instance is already running in {} (pid {}); "
                            "stop it with: cohort stop --state-dir {}",
                            dir, pid, dir));
    }
    const std::string config_path = dir + "/cohort.json";
    const std::string key_path = dir + "/cluster.key";
    ClusterConfig config;
    auto previous = load_config(config_path);
    if (previous) {
        config = *previous;  // resume: same nodes, same key, same database
    } else {
        if (!fs::exists(key_path)) {
            if (Status written = write_key(key_path); !written) {
                return written;
            }
        }
        config.key_file = key_path;
        config.state_dir = dir;
        for (int i = 1; i <= options.nodes; ++i) {
            config.nodes.push_back("node" + std::to_string(i));
        }
        PartitionConfig debug;
        debug.name = "debug";
        debug.nodes = config.nodes;
        debug.is_default = true;
        config.partitions.push_back(std::move(debug));
        config.controller_host = options.listen_address;
        config.heartbeat_interval_ms = 1000;
        config.node_timeout_ms = 10000;
        config.kill_wait_s = options.kill_wait_s;
        config.launch_fanout = options.launch_fanout;
        if (options.auth == "munge") {
            config.auth = "munge";
            config.munge_socket = dir + "/munge/munge.socket";
            config.daemon_user = std::to_string(getuid());
        }
        if (!options.network_file.empty()) {
            auto network = read_network_file(options.network_file, config.nodes);
            if (!network) {
                return network.status();
            }
            config.network = std::move(*network);
        }
        if (!options.settings_file.empty()) {
            auto with_settings = apply_settings_file(config, options.settings_file, config_path);
            if (!with_settings) {
                return with_settings.status();
            }
            config = std::move(*with_settings);
        }
    }
    auto key = load_key(config.key_file);
    if (!key) {
        return key.status();
    }
    if (config.auth == "munge" && config.munge_socket.rfind(dir + "/", 0) == 0) {
        if (Status saved = save_config(config, config_path); !saved) {
            return saved;
        }
        if (Status munged = start_munged(config); !munged) {
            return munged;
        }
    }
    const std::string bin = daemon_dir();
    auto ctld = start_controller(config, config_path, *key, bin + "/cohortctld", ctld_pid_file);
    if (!ctld) {
        return ctld.status();
    }
    if (config.auth == "munge") {
        chmod(config_path.c_str(), 0644);  // every user's commands read it
    }
    std::vector<pid_t> pids{*ctld};
    for (const auto& name : config.nodes) {
        std::vector<std::string> argv{bin + "/cohortd",
                                      "--config",
                                      config_path,
                                      "--name",
                                      name,
                                      "--pid-file",
                                      dir + "/cohortd-" + name + ".pid"};
        if (!options.topology_xml.empty()) {
            argv.insert(argv.end(), {"--topology", fs::absolute(options.topology_xml).string()});
        }
        if (options.cpus_per_node > 0) {
            argv.insert(argv.end(), {"--cpus", std::to_string(options.cpus_per_node)});
        }
        auto agent = spawn_daemon(argv, dir + "/cohortd-" + name + ".log");
        if (!agent) {
            return agent.status();
        }
        pids.push_back(*agent);
    }
    if (Status up = wait_for_nodes(config, *key, config.nodes.size(), pids); !up) {
        stop_instance(dir);
        return up;
    }
    return config_path;
}

Status stop_instance(const std::string& state_dir) {
    std::vector<pid_t> pids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(state_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() == ".pid"
            && (name.rfind("cohortd-", 0) == 0 || name.rfind("cohortctld", 0) == 0
                || name == "munged.pid")) {
            pid_t pid = read_pid(entry.path().string());
            if (alive(pid)) {
                kill(pid, SIGTERM);
                pids.push_back(pid);
            }
        }
    }
    if (ec) {
        return Status::not_found("--state-dir: cannot read '" + state_dir + "'");
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (pid_t pid : pids) {
        while (alive(pid) && std::chrono::steady_clock::now() < deadline) {
            waitpid(pid, nullptr, WNOHANG);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (alive(pid)) {
            kill(pid, SIGKILL);
        }
    }
    end_jobs_left(state_dir);
    remove_cgroups_left(state_dir);
    return Status::ok();
}

}  // namespace cohort::cli
