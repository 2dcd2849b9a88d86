// cohort start / stop: a local multi-node instance with no config to write.
#include <cstdlib>
#include <iostream>

#include <sys/wait.h>
#include <unistd.h>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/local_instance.h"

namespace cohort::cli {
namespace {

// Runs CMD with COHORT_CONF set and returns its exit code.
int run_command(const std::vector<std::string>& argv, const std::string& config_path) {
    // Everything the child needs is prepared here: after fork it only execs.
    setenv("COHORT_CONF", config_path.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): one thread
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        std::cerr << "cohort start: error: cannot fork to run '" << argv[0] << "'\n";
        return 1;
    }
    if (pid == 0) {
        execvp(args[0], args.data());
        _exit(127);
    }
    // The command's Ctrl-C is its own; the instance stops once the command has ended.
    signal(SIGINT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    signal(SIGINT, SIG_DFL);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        std::cerr << "cohort start: note: '" << argv[0] << "' exited with 127 (not found?)\n";
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string state_dir_from_config() {
    auto config = load_config(default_config_path());
    return config ? config->state_dir : default_state_dir();
}

}  // namespace

int cmd_start(const Args& args) {
    CLI::App app{"Start a local instance: cohort start [--nodes N] [--state-dir DIR] [-- CMD...]"};
    InstanceOptions options;
    options.state_dir = default_state_dir();
    app.add_option("--nodes", options.nodes, "node agents to start")->check(CLI::Range(1, 256));
    app.add_option("--state-dir", options.state_dir, "database, key, logs and pid files");
    app.add_option("--topology", options.topology_xml, "recorded hwloc XML for every agent");
    app.add_option("--cpus", options.cpus_per_node, "CPUs each agent offers (default: probed)");
    app.add_option("--kill-wait", options.kill_wait_s, "seconds from SIGTERM to SIGKILL");
    app.add_option("--launch-fanout", options.launch_fanout,
                   "children per agent when a step launch fans out (default 8)")
            ->check(CLI::PositiveNumber);
    app.add_option(
            "--network", options.network_file,
            "JSON file of switches and blocks over node1..nodeN (the config's \"network\" key)");
    app.add_option("--listen", options.listen_address,
                   "address of this host that cohortctld listens on and agents and clients dial "
                   "(default 127.0.0.1; a new instance only)");
    app.add_option("--settings", options.settings_file,
                   "JSON object of cluster settings over the defaults, e.g. "
                   "{\"node_timeout_ms\": 3000, \"job_requeue\": false}");
    app.add_option("--auth", options.auth,
                   "how users' commands prove who they are: cluster_key (the owner's alone) or "
                   "munge (any user, through a munged of the instance's own; a new instance "
                   "only)")
            ->check(CLI::IsMember({"cluster_key", "munge"}));
    app.prefix_command();
    if (int rc = parse_args(app, "start", args); rc >= 0) {
        return rc;
    }
    std::vector<std::string> command = app.remaining();
    if (!command.empty() && command.front() != "--" && command.front().rfind('-', 0) == 0) {
        std::cerr << "cohort start: error: unrecognized option '" << command.front()
                  << "' (see cohort start --help; a command to run goes after --)\n";
        return 1;
    }
    if (!command.empty() && command.front() == "--") {
        command.erase(command.begin());
    }
    auto config_path = start_instance(options);
    if (!config_path) {
        return report_error("start", config_path.status());
    }
    const std::string dir = config_path->substr(0, config_path->find_last_of('/'));
    if (command.empty()) {
        std::cout << "export COHORT_CONF=" << *config_path << "\n";
        return 0;
    }
    int rc = run_command(command, *config_path);
    stop_instance(dir);
    return rc;
}

int cmd_stop(const Args& args) {
    CLI::App app{"Stop a local instance: cohort stop [--state-dir DIR]"};
    std::string state_dir;
    app.add_option("--state-dir", state_dir, "the instance's state directory");
    if (int rc = parse_args(app, "stop", args); rc >= 0) {
        return rc;
    }
    if (state_dir.empty()) {
        state_dir = state_dir_from_config();
    }
    if (Status stopped = stop_instance(state_dir); !stopped) {
        return report_error("stop", stopped);
    }
    return 0;
}

}  // namespace cohort::cli
