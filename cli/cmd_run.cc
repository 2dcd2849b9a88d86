// cohort run (srun): a parallel step inside an allocation, or in a new one.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/allocation.h"
#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/het_step.h"
#include "cli/job_options.h"
#include "cli/step_client.h"
#include "common/transport/connect.h"
#include "common/transport/connect_timeouts.h"
#include "common/warning_signal.h"

namespace cohort::cli {
namespace {

namespace asio = boost::asio;

uint64_t allocation_from_env() {
    for (const char* name : {"COHORT_JOB_ID", "SLURM_JOB_ID"}) {
        if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
            return std::strtoull(value, nullptr, 10);
        }
    }
    return 0;
}

// Inside a job, srun's default distribution: the job's (or the enclosing step's), which the
// environment carries as SLURM_DISTRIBUTION and, for planes, SLURM_DIST_PLANESIZE.
std::string distribution_from_env() {
    const char* name = std::getenv("SLURM_DISTRIBUTION");
    if (name == nullptr || *name == '\0') {
        return "";
    }
    const char* plane = std::getenv("SLURM_DIST_PLANESIZE");
    if (std::string(name) == "plane" && plane != nullptr) {
        return "plane=" + std::string(plane);
    }
    return name;
}

// Asks for a step; while the job's running steps hold the CPUs it needs, waits for them as
// srun does, saying so once. The wait ends with them, or with the job.
Result<protocol::StepCreatedReply> create_step(transport::BlockingClient& client,
                                               const protocol::StepCreateRequest& create) {
    for (bool told = false;; told = true) {
        auto created = client.call<protocol::StepCreatedReply>(create);
        if (created || created.status().code() != StatusCode::kUnavailable
            || created.status().message().rfind(protocol::kStepCreationDisabled, 0) != 0) {
            return created;
        }
        if (!told) {
            std::cerr << "cohort run: " << created.status().message() << "; waiting\n";
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}

// srun's -K takes a value only attached (-K0, -K1), as getopt's optional arguments do, and
// CLI11 has no such option: spell it --kill-on-bad-exit=V. Only the words before the command
// are options; an option's separate value is skipped so it is not taken for the command.
Args spell_attached_values(const OptionCatalogue& catalogue, Args args) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& word = args[i];
        if (word == "--" || word.size() < 2 || word[0] != '-') {
            break;
        }
        if (word == "-K0" || word == "-K1") {
            args[i] = "--kill-on-bad-exit=" + word.substr(2);
            continue;
        }
        const bool is_long = word[1] == '-';
        const std::string name = is_long ? word.substr(0, word.find('=')) : word.substr(0, 2);
        const bool value_attached = is_long ? word.find('=') != std::string::npos : word.size() > 2;
        if (catalogue.takes_value(name).value_or(false) && !value_attached) {
            ++i;
        }
    }
    return args;
}

// -K's value; unset: SLURM_KILL_BAD_EXIT, else on for MPI steps, as mpirun ends the job when
// a rank fails.
Result<bool> kill_on_bad_exit_of(const std::string& flag, const std::string& mpi) {
    std::string value = flag;
    if (value.empty()) {
        const char* env = std::getenv("SLURM_KILL_BAD_EXIT");
        value = env != nullptr && *env != '\0' ? env : (mpi == "none" ? "0" : "1");
    }
    if (value == "1" || value == "true") {
        return true;
    }
    if (value == "0" || value == "false") {
        return false;
    }
    return Status::invalid("--kill-on-bad-exit: invalid value '" + value
                           + "' (accepted: 0 or 1, attached as -K0 or --kill-on-bad-exit=0)");
}

// srun's --signal: a signal for the step's tasks before the job's end. B: (the batch shell)
// and R: (at preemption) are sbatch's.
Status check_step_signal(const std::string& text) {
    auto warning = parse_warning_signal("--signal", text);
    if (!warning) {
        return warning.status();
    }
    if (warning->batch_shell_only || warning->at_preemption_only) {
        return Status::invalid("--signal: invalid value '" + text
                               + "' for a step (accepted: SIGNAL[@SECONDS]; B: and R: are "
                                 "sbatch's)");
    }
    return Status::ok();
}

protocol::HetStepPart shape_of(const protocol::JobSpec& spec) {
    return {0, spec.nodes_min, spec.ntasks, spec.ntasks_per_node,
            spec.cpus_per_task_set ? spec.cpus_per_task : 0};
}

// A part of `srun A : B` after the first: its own job options (over what carries over from
// the part before, `previous`, which becomes this one's), --het-group and command.
Result<HetSegment> parse_later_segment(const Args& words, JobOptions& previous) {
    JobOptions options = next_het_component(previous);
    HetSegment segment;
    const CommandOptions part("", [&](OptionRegistrar& add) {
        add_job_options(add, options, JobCommand::kRun);
        add.add_option("--het-group,--pack-group", segment.het_group, "");
    });
    auto rest = parse_component_words(part, spell_attached_values(part.catalogue(), words));
    if (!rest) {
        return rest.status();
    }
    segment.argv = std::move(*rest);
    if (!segment.argv.empty() && segment.argv.front().size() > 1
        && segment.argv.front().front() == '-') {
        return Status::invalid("unrecognized option '" + segment.argv.front()
                               + "' after ':' (accepted there: job options such as -n, -N, -c, "
                                 "--het-group)");
    }
    auto spec = job_spec_from(options);
    if (!spec) {
        return spec.status();
    }
    segment.shape = shape_of(*spec);
    segment.spec = std::move(*spec);
    previous = options;
    return segment;
}

}  // namespace

int cmd_run(const Args& all_args) {
    // srun A : B: one step over a heterogeneous job's components, a part in each.
    const std::vector<Args> segments = split_het_segments(all_args);
    const Args& args = segments.front();
    JobOptions options;
    bool label = false;
    // Like srun: the flag, else SLURM_MPI_TYPE, else PMIx.
    const char* mpi_env = std::getenv("SLURM_MPI_TYPE");
    std::string mpi = mpi_env != nullptr && *mpi_env != '\0' ? mpi_env : "pmix";
    const char* transport_env = std::getenv("COHORT_PMIX_TRANSPORT");
    std::string transport =
            transport_env != nullptr && *transport_env != '\0' ? transport_env : "tcp";
    std::string nodelist;
    std::string kill_on_bad_exit;
    std::string output, error, input = "0";
    std::string signal;
    std::string het_group;
    bool overlap = false;
    std::string torch_env = "yes";
    const CommandOptions command(
            "Run a parallel step: cohort run [options] CMD [ARGS...]", [&](OptionRegistrar& add) {
                add_job_options(add, options, JobCommand::kRun);
                add.add_flag("-l,--label", label, "prefix each output line with its task rank");
                add.add_option(
                        "--mpi", mpi,
                        "how ranks wire up: pmix (default), pmix_v4, pmi1 or pmi2 (MPICH), none");
                add.add_option(
                        "--pmix-transport", transport,
                        "how the nodes' step managers exchange fence data: tcp (default) or ucx");
                add.add_option("-w,--nodelist", nodelist, "run on these nodes of the allocation");
                add.add_flag(
                        "-K,--kill-on-bad-exit", kill_on_bad_exit,
                        "end the step when a task exits with a non-zero code or a signal; -K0 or "
                        "--kill-on-bad-exit=0: let the others run (default: on for MPI steps, off "
                        "with --mpi=none; SLURM_KILL_BAD_EXIT)");
                add.add_option("-o,--output", output,
                               "each task's stdout to this file pattern (%t: rank)");
                add.add_option("-e,--error", error, "each task's stderr to this file pattern");
                if (CLI::Option* option = add.add_option(
                            "-i,--input", input, "where stdin goes: 0 (rank 0, default) or none")) {
                    option->check(CLI::IsMember({"0", "none"}));
                }
                add.add_option("--signal", signal,
                               "SIGNAL[@SECONDS]: send the step's tasks SIGNAL SECONDS (default "
                               "60) before "
                               "the job's time limit");
                add.add_option("--het-group,--pack-group", het_group,
                               "inside a heterogeneous job: the component whose nodes run the step "
                               "(default 0)");
                add.add_flag(
                        "--overlap", overlap,
                        "share the CPUs the job's running steps hold instead of waiting for them");
                if (CLI::Option* option = add.add_option(
                            "--export-torch-env", torch_env,
                            "set RANK, WORLD_SIZE, MASTER_ADDR, ... for PyTorch (yes, no)")) {
                    option->check(CLI::IsMember({"yes", "no"}));
                }
            });
    auto spelled = spell_out_prefixes(command.catalogue(),
                                      spell_attached_values(command.catalogue(), args));
    if (!spelled) {
        return report_error("run", spelled.status());
    }
    // srun's SLURM_* input variables, yielding to the command line.
    const std::vector<std::string> from_environment =
            environment_options(JobCommand::kRun, command.catalogue());
    spelled->insert(spelled->begin(), from_environment.begin(), from_environment.end());
    OptionSelection named;
    named.add_words(*spelled);
    const std::unique_ptr<CLI::App> app = command.app_for(named);
    if (int rc = parse_args(*app, "run", *spelled); rc >= 0) {
        return rc;
    }
    StepRequest request;
    request.argv = app->remaining();
    if (!request.argv.empty() && request.argv.front().size() > 1
        && request.argv.front().front() == '-') {
        return report_error("run", Status::invalid("unrecognized option '" + request.argv.front()
                                                   + "' (see cohort run --help)"));
    }
    std::vector<HetSegment> later;
    JobOptions previous = options;
    for (size_t i = 1; i < segments.size(); ++i) {
        auto segment = parse_later_segment(segments[i], previous);
        if (!segment) {
            return report_error("run", segment.status().with_context("part " + std::to_string(i)
                                                                     + " after ':'"));
        }
        later.push_back(std::move(*segment));
    }
    for (const HetSegment& segment : later) {  // a part without a command runs the next one's
        if (request.argv.empty()) {
            request.argv = segment.argv;
        }
    }
    request.label = label;
    if (mpi == "pmix_v4" || mpi == "pmix_v3") {
        mpi = "pmix";
    }
    if (mpi != "pmix" && mpi != "pmi1" && mpi != "pmi2" && mpi != "none") {
        return report_error("run",
                            Status::invalid("--mpi: invalid value '" + mpi
                                            + "' (accepted: pmix, pmix_v4, pmi1, pmi2, none)"));
    }
    request.mpi = mpi;
    if (transport != "tcp" && transport != "ucx") {
        return report_error("run", Status::invalid("--pmix-transport: invalid value '" + transport
                                                   + "' (accepted: tcp, ucx)"));
    }
    request.pmix_transport = transport;
    auto kill = kill_on_bad_exit_of(kill_on_bad_exit, mpi);
    if (!kill) {
        return report_error("run", kill.status());
    }
    request.kill_on_bad_exit = *kill;
    request.output = output;
    request.error = error;
    request.stdin_to_rank0 = input == "0";
    if (Status checked = check_step_signal(signal); !checked) {
        return report_error("run", checked);
    }
    request.signal = signal;
    if (request.argv.empty()) {
        return report_error("run", Status::invalid("command: missing (accepted: cohort run "
                                                   "[options] CMD [ARGS...])"));
    }
    std::vector<std::string> warnings;
    auto spec = job_spec_from(options, &warnings);
    if (!spec) {
        return report_error("run", spec.status());
    }
    print_warnings(options, warnings);
    request.cwd = spec->cwd;
    request.env = spec->env;
    if (torch_env == "no") {  // for tools such as submitit that refuse preset torch variables
        request.env.emplace_back("COHORT_TORCH_ENV", "0");
    }
    auto context = load_client_context();
    if (!context) {
        return report_error("run", context.status());
    }
    if (Status cluster = check_clusters(options, context->config.cluster_name); !cluster) {
        return report_error("run", cluster);
    }
    asio::io_context io;
    std::shared_ptr<transport::Connection> allocation;
    uint64_t allocated_job = 0;  // the job this command made and ends
    protocol::StepLayout layout;
    uint64_t in_job = allocation_from_env();
    std::vector<uint64_t> component_ids;
    if (in_job == 0 && !later.empty() && !options.test_only) {
        // srun A : B outside a job: first a heterogeneous job of a component per part, held
        // for this one step, as srun makes one.
        protocol::AllocateRequest ask;
        ask.spec = *spec;
        default_interactive_shape(ask.spec, request.argv.front());
        ask.step_name = ask.spec.name;
        for (const HetSegment& part : later) {
            protocol::JobSpec component = part.spec;
            component.name = ask.spec.name;
            default_interactive_shape(component, request.argv.front());
            component.env.clear();  // the step's environment is the leader's
            ask.het_components.push_back(std::move(component));
        }
        auto allocated = allocate(*context, io, ask, "cohort run");
        if (!allocated) {
            return report_error("run", allocated.status());
        }
        // The allocation's first step spans the leader alone; the step below spans them all.
        record_step(*context, allocated->layout, StepResult{});
        allocation = allocated->connection;
        allocated_job = in_job = allocated->layout.job_id;
        for (const protocol::JobRecord& component : allocated->het_components) {
            component_ids.push_back(component.job_id);
        }
    }
    std::vector<HetSegment> het_segments{{het_group, shape_of(*spec), request.argv, {}}};
    het_segments.insert(het_segments.end(), later.begin(), later.end());
    auto step_job = step_job_of(in_job, std::move(het_segments), component_ids);
    if (!step_job) {
        return report_error("run", step_job.status());
    }
    const uint64_t job_id = step_job->job_id;
    request.argv_by_job = step_job->argv_by_job;
    if (options.test_only) {
        if (job_id != 0) {
            return report_error("run", Status::invalid("--test-only: inside an allocation, "
                                                       "steps start at once (accepted: outside "
                                                       "one, to ask when a job would start)"));
        }
        auto client = connect_controller(*context);
        if (!client) {
            return report_error("run", client.status());
        }
        protocol::SubmitJobRequest ask;
        ask.spec = *spec;
        ask.test_only = true;
        ask.spec.script.clear();  // srun's: a command, not a script
        auto will_run = client->call<protocol::WillRunReply>(ask);
        if (!will_run) {
            return report_error("run", will_run.status().with_context("allocation failure"));
        }
        std::cerr << will_run_line("srun", *will_run) << "\n";
        return 0;
    }
    if (job_id != 0) {
        auto client = connect_controller(*context);
        if (!client) {
            return report_error("run", client.status());
        }
        protocol::StepCreateRequest create{
                job_id,
                request.argv.front(),
                spec->nodes_min,
                spec->ntasks,
                spec->ntasks_per_node,
                spec->cpus_per_task_set ? spec->cpus_per_task : 0,
                nodelist,
                spec->distribution.empty() ? distribution_from_env() : spec->distribution,
                overlap,
                step_job->parts,
                spec->gpu,
                spec->gres};
        auto created = create_step(*client, create);
        if (!created) {
            return report_error("run", created.status().with_context("step creation failed"));
        }
        layout = created->layout;
    } else {
        if (!nodelist.empty()) {
            return report_error(
                    "run",
                    Status::invalid(
                            "--nodelist: '" + nodelist
                            + "' names nodes of an allocation; outside one, ask for a node count "
                              "with -N (accepted: inside cohort batch/alloc)"));
        }
        protocol::AllocateRequest ask;
        ask.spec = *spec;
        default_interactive_shape(ask.spec, request.argv.front());
        ask.step_name = ask.spec.name;
        auto allocated = allocate(*context, io, ask, "cohort run");
        if (!allocated) {
            return report_error("run", allocated.status());
        }
        layout = allocated->layout;
        allocation = allocated->connection;
        allocated_job = layout.job_id;
    }
    StepClient step(io, context->auth, context->cred);
    StepResult result = step.run(layout, request);
    record_step(*context, layout, result);
    if (allocation) {
        complete_job(*context, allocated_job, result);
        allocation->close(Status::ok());
        io.poll();
    }
    return result.exit_code;
}

}  // namespace cohort::cli
