// Starting and stopping a local instance.
#include "cli/local_instance.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/asio.h"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/config.h"
#include "common/hostlist.h"
#include "common/transport/blocking_client.h"

namespace cohort::cli {
namespace {

namespace fs = std::filesystem;

std::string self_dir() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : exe.parent_path().string();
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

uint16_t free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(io,
            boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    return acceptor.local_endpoint().port();
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

Status wait_for_nodes(const ClusterConfig& config, const std::string& key, size_t nodes,
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
        auto client = transport::BlockingClient::connect(config.controller_host,
                config.controller_port, key,
                {static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())});
        if (client) {
            auto reply = client->call<protocol::NodeListReply>(protocol::QueryNodesRequest{});
            if (reply) {
                size_t up = 0;
                for (const auto& node : reply->nodes) {
                    up += node.state != "UNKNOWN" && node.state != "DOWN" ? 1 : 0;
                }
                if (up >= nodes) {
                    return Status::ok();
                }
                last = std::to_string(up) + " of " + std::to_string(nodes)
                        + " nodes registered";
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::unavailable("the instance did not come up within 30 s: " + last
            + " (see the logs in " + config.state_dir + ")");
}

}  // namespace

Result<std::string> start_instance(const InstanceOptions& options) {
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
        return Status::unavailable("an instance is already running in " + dir + " (pid "
                + std::to_string(pid) + "); stop it with: cohort stop --state-dir " + dir);
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
        config.heartbeat_interval_ms = 1000;
        config.node_timeout_ms = 10000;
        config.kill_wait_s = options.kill_wait_s;
    }
    config.controller_port = free_port();
    if (Status saved = save_config(config, config_path); !saved) {
        return saved;
    }
    auto key = load_key(config.key_file);
    if (!key) {
        return key.status();
    }
    const std::string bin = self_dir();
    std::vector<pid_t> pids;
    auto ctld = spawn_daemon({bin + "/cohortctld", "--config", config_path, "--pid-file",
                                     ctld_pid_file},
            dir + "/cohortctld.log");
    if (!ctld) {
        return ctld.status();
    }
    pids.push_back(*ctld);
    for (const auto& name : config.nodes) {
        std::vector<std::string> argv{bin + "/cohortd", "--config", config_path, "--name", name,
                "--pid-file", dir + "/cohortd-" + name + ".pid"};
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
                && (name.rfind("cohortd-", 0) == 0 || name == "cohortctld.pid")) {
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
    return Status::ok();
}

}  // namespace cohort::cli
