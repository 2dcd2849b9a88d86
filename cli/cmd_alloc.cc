// cohort alloc (salloc): holds an allocation while a command, by default the user's shell,
// runs here with the job's environment; `cohort run` (srun) inside it starts steps on the
// allocated nodes. The allocation ends with the command, and the command with the allocation.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/allocation.h"
#include "cli/commands.h"
#include "cli/het_step.h"
#include "cli/job_options.h"
#include "common/hostlist.h"
#include "launcher/het_environment.h"

namespace cohort::cli {
namespace {

// What salloc gives its command, under Slurm's names (and COHORT_CONF, so that the Cohort
// commands inside reach this cluster).
std::vector<std::pair<std::string, std::string>> allocation_environment(
        const protocol::StepLayout& layout,
        const protocol::JobSpec& spec,
        const ClientContext& context) {
    const std::string id = std::to_string(layout.job_id);
    const std::string nodelist = compress_hostlist(layout.job_nodes);
    std::string hosts;
    for (const std::string& node : layout.job_nodes) {
        hosts += (hosts.empty() ? "" : " ") + node;
    }
    std::vector<std::pair<std::string, std::string>> env = {
            {"SLURM_JOB_ID", id},
            {"SLURM_JOBID", id},
            {"SLURM_JOB_NAME", layout.job_name},
            {"SLURM_JOB_NODELIST", nodelist},
            {"SLURM_NODELIST", nodelist},
            {"SLURM_JOB_NUM_NODES", std::to_string(layout.job_nodes.size())},
            {"SLURM_NNODES", std::to_string(layout.job_nodes.size())},
            {"SLURM_JOB_CPUS_PER_NODE", compact_counts(layout.job_cpus_per_node)},
            {"SLURM_TASKS_PER_NODE", compact_counts(layout.tasks_per_node)},
            {"SLURM_JOB_PARTITION", layout.partition},
            {"SLURM_CLUSTER_NAME", layout.cluster_name},
            {"SLURM_SUBMIT_DIR", spec.cwd},
            {"SLURM_SUBMIT_HOST", spec.submit_host},
            {"COHORT_JOB_HOSTS", hosts},
            {"COHORT_CONF", context.config.path},
    };
    if (spec.ntasks != 0) {
        env.emplace_back("SLURM_NTASKS", std::to_string(spec.ntasks));
        env.emplace_back("SLURM_NPROCS", std::to_string(spec.ntasks));
    }
    if (spec.cpus_per_task_set) {
        env.emplace_back("SLURM_CPUS_PER_TASK", std::to_string(spec.cpus_per_task));
    }
    return env;
}

// The command and its arguments; none given: the user's shell, as salloc runs it.
std::vector<std::string> command_or_shell(std::vector<std::string> command) {
    if (command.empty()) {
        const char* shell = std::getenv("SHELL");
        command.emplace_back(shell != nullptr && *shell != '\0' ? shell : "/bin/sh");
    }
    return command;
}

pid_t start_command(const std::vector<std::string>& command,
                    const std::vector<std::pair<std::string, std::string>>& env) {
    const pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    for (const auto& [name, value] : env) {
        setenv(name.c_str(), value.c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& word : command) {
        argv.push_back(const_cast<char*>(word.c_str()));  // NOLINT: execvp's signature
    }
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::cerr << "salloc: error: cannot run '" << command.front() << "': " << std::strerror(errno)
              << "\n";
    _exit(127);
}

// A component of salloc A : B after the first: its own job options over what carries over
// from the one before (`previous`, which becomes this one's), then perhaps the command.
Result<JobOptions> parse_later_component(const Args& words,
                                         const JobOptions& previous,
                                         std::vector<std::string>& command) {
    JobOptions options = next_het_component(previous);
    const CommandOptions component("", [&options](OptionRegistrar& add) {
        add_job_options(add, options, JobCommand::kAlloc);
    });
    auto rest = parse_component_words(component, words);
    if (!rest) {
        return rest.status();
    }
    command = std::move(*rest);
    return options;
}

// Each component's job, checked alone; the command names them when no --job-name does.
Result<protocol::JobSpec> component_spec(const JobOptions& options,
                                         const std::vector<std::string>& command,
                                         std::vector<std::string>* warnings) {
    auto spec = job_spec_from(options, warnings);
    if (!spec) {
        return spec.status();
    }
    default_interactive_shape(*spec, command.front());
    return spec;
}

}  // namespace

int cmd_alloc(const Args& args) {
    // salloc A : B: a ":" before the command starts the next component of a heterogeneous
    // job; once the command has begun, a ":" is one of its words.
    const std::vector<Args> segments = split_het_segments(args);
    JobOptions options;
    const CommandOptions alloc_options(
            "Hold an allocation while a command runs here (salloc): "
            "cohort alloc [options] [: [options] ...] [CMD [ARGS...]]",
            [&options](OptionRegistrar& add) {
                add_job_options(add, options, JobCommand::kAlloc);
            });
    auto spelled = spell_out_prefixes(alloc_options.catalogue(), segments.front());
    if (!spelled) {
        return report_error("alloc", spelled.status());
    }
    // salloc's SALLOC_* variables, yielding to the command line.
    const std::vector<std::string> from_environment =
            environment_options(JobCommand::kAlloc, alloc_options.catalogue());
    spelled->insert(spelled->begin(), from_environment.begin(), from_environment.end());
    OptionSelection named;
    named.add_words(*spelled);
    const std::unique_ptr<CLI::App> app = alloc_options.app_for(named);
    if (int rc = parse_args(*app, "alloc", *spelled); rc >= 0) {
        return rc;
    }
    std::vector<std::string> command = app->remaining();
    std::vector<JobOptions> components{options};
    size_t segment = 1;
    for (; segment < segments.size() && command.empty(); ++segment) {
        auto component = parse_later_component(segments[segment], components.back(), command);
        if (!component) {
            return report_error("alloc", component.status().with_context(fmt::format(
                                                 "heterogeneous job component {}", segment)));
        }
        components.push_back(std::move(*component));
    }
    for (; segment < segments.size(); ++segment) {
        command.emplace_back(":");
        command.insert(command.end(), segments[segment].begin(), segments[segment].end());
    }
    command = command_or_shell(std::move(command));
    protocol::AllocateRequest request;
    std::vector<std::string> warnings;
    for (size_t n = 0; n < components.size(); ++n) {
        auto spec = component_spec(components[n], command, n == 0 ? &warnings : nullptr);
        if (!spec) {
            return report_error("alloc", n == 0 ? spec.status()
                                                : spec.status().with_context(fmt::format(
                                                        "heterogeneous job component {}", n)));
        }
        if (n == 0) {
            request.spec = std::move(*spec);
        } else {
            spec->env.clear();  // the leader's environment serves every component
            request.het_components.push_back(std::move(*spec));
        }
    }
    print_warnings(options, warnings);
    request.step_name = request.spec.name;
    auto context = load_client_context();
    if (!context) {
        return report_error("alloc", context.status());
    }
    if (Status cluster = check_clusters(options, context->config.cluster_name); !cluster) {
        return report_error("alloc", cluster);
    }
    boost::asio::io_context io;
    auto allocation = allocate(*context, io, request, "salloc");
    if (!allocation) {
        return report_error("alloc", allocation.status());
    }
    const protocol::StepLayout& layout = allocation->layout;
    // The allocation comes with a first step for `cohort run`; this command's steps are its
    // own, so that one ends at once and holds no CPUs.
    record_step(*context, layout, StepResult{});
    std::cerr << "salloc: Granted job allocation " << layout.job_id << "\n";
    auto env = allocation_environment(layout, request.spec, *context);
    auto het_env = het_job_environment(allocation->het_components);
    env.insert(env.end(), het_env.begin(), het_env.end());
    const pid_t child = start_command(command, env);
    // Ctrl-C is the command's; the allocation outlives it only until the command exits.
    std::signal(SIGINT, SIG_IGN);
    int status = 0;
    bool revoked = false;
    while (waitpid(child, &status, WNOHANG) == 0) {
        io.run_for(std::chrono::milliseconds(200));
        io.restart();
        if (*allocation->lost && !revoked) {
            std::cerr << "salloc: Job allocation " << layout.job_id << " has been revoked.\n";
            kill(child, SIGHUP);
            revoked = true;
        }
    }
    std::signal(SIGINT, SIG_DFL);
    StepResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!revoked) {
        std::cerr << "salloc: Relinquishing job allocation " << layout.job_id << "\n";
        complete_job(*context, layout.job_id, result);
    }
    allocation->connection->close(Status::ok());
    io.poll();
    return result.exit_code;
}

}  // namespace cohort::cli
