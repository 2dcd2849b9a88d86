// Shared job options and their conversion to a JobSpec.
#include "cli/job_options.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "cli/json_output.h"
#include "common/begin_time.h"
#include "common/generic_gres.h"
#include "common/gpu_options.h"
#include "common/hostlist.h"
#include "common/licenses.h"
#include "common/mail_type.h"
#include "common/node_features.h"
#include "common/size_spec.h"
#include "common/time_spec.h"
#include "common/warning_signal.h"
#include "scheduler/dependency.h"
#include "scheduler/job_array.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX

namespace cohort::cli {
namespace {

Result<uint32_t> count_option(const std::string& option,
                              const std::string& value,
                              uint32_t fallback) {
    if (value.empty()) {
        return fallback;
    }
    auto count = parse_positive_count(value);
    if (!count) {
        return count.status().with_context(option);
    }
    return static_cast<uint32_t>(*count);
}

// One GPU type per job, from whichever option names one.
Status take_gpu_count(const std::string& option,
                      const Result<GpuCount>& count,
                      int32_t& into,
                      GpuOptions& gpu) {
    if (!count) {
        return count.status();
    }
    if (!count->type.empty() && !gpu.type.empty() && count->type != gpu.type) {
        return Status::invalid(option + ": GPU type '" + count->type + "' differs from '" + gpu.type
                               + "' (accepted: one GPU type per job)");
    }
    if (!count->type.empty()) {
        gpu.type = count->type;
    }
    into = count->count;
    return Status::ok();
}

Result<GpuOptions> gpu_options_from(const JobOptions& o) {
    GpuOptions gpu;
    auto gres = split_gres_option(o.gres);
    if (!gres) {
        return gres.status();
    }
    if (!gres->gpu.empty() && !o.gpus_per_node.empty()) {
        return Status::invalid(
                "--gres: cannot be combined with --gpus-per-node (accepted: "
                "one of them)");
    }
    const std::tuple<const char*, const std::string&, int32_t&> counts[] = {
            {"--gpus", o.gpus, gpu.gpus},
            {"--gpus-per-node", o.gpus_per_node, gpu.per_node},
            {"--gpus-per-task", o.gpus_per_task, gpu.per_task}};
    for (const auto& [option, value, into] : counts) {
        if (!value.empty()) {
            if (Status s = take_gpu_count(option, parse_gpu_count(option, value), into, gpu); !s) {
                return s;
            }
        }
    }
    if (!gres->gpu.empty()) {
        if (Status s = take_gpu_count("--gres", parse_gres(gres->gpu), gpu.per_node, gpu); !s) {
            return s;
        }
    }
    auto cpus = count_option("--cpus-per-gpu", o.cpus_per_gpu, 0);
    auto tasks = count_option("--ntasks-per-gpu", o.ntasks_per_gpu, 0);
    for (const auto* r : {&cpus, &tasks}) {
        if (!*r) {
            return r->status();
        }
    }
    gpu.cpus_per_gpu = static_cast<int32_t>(*cpus);
    gpu.ntasks_per_gpu = static_cast<int32_t>(*tasks);
    if (!o.mem_per_gpu.empty()) {
        auto mem = parse_memory_mib(o.mem_per_gpu);
        if (!mem) {
            return mem.status().with_context("--mem-per-gpu");
        }
        gpu.mem_per_gpu_mib = *mem;
    }
    if (!o.gpu_bind.empty()) {
        auto bind = parse_gpu_bind(o.gpu_bind);
        if (!bind) {
            return bind.status();
        }
        gpu.bind = *bind;
    }
    return gpu;
}

// --switches=N[@max-wait] and --segment=N.
Status read_network_options(const JobOptions& o, protocol::JobSpec& spec) {
    if (!o.switches.empty()) {
        const size_t at = o.switches.find('@');
        auto count = count_option("--switches", o.switches.substr(0, at), 0);
        if (!count || *count == 0) {
            return Status::invalid("--switches: invalid value '" + o.switches
                                   + "' (accepted: N[@max-wait] with N >= 1, e.g. 1@10:00)");
        }
        spec.switches = *count;
        if (at != std::string::npos) {
            auto wait = parse_time_limit(o.switches.substr(at + 1));
            if (!wait || *wait < 0) {
                return Status::invalid("--switches: invalid max-wait in '" + o.switches
                                       + "' (accepted: minutes, M:S, H:M:S or D-H:M:S)");
            }
            spec.switches_wait_s = *wait;
        }
    }
    if (!o.segment.empty()) {
        auto segment = count_option("--segment", o.segment, 0);
        if (!segment || *segment == 0) {
            return Status::invalid("--segment: invalid value '" + o.segment
                                   + "' (accepted: a node count of 1 or more)");
        }
        spec.segment = *segment;
    }
    return Status::ok();
}

// Options of sbatch and srun that mean nothing on this cluster: accepted, kept with the job
// (`show job` lists them) and named in one warning line each.
struct KeptOption {
    const char* names;  // CLI11's spelling; the first long name is the one stored
    enum class Value : uint8_t {
        kRequired,
        kNone,
        kOptional
    } value;
    const char* why;  // why it changes nothing, for the warning
};

constexpr KeptOption kKeptOptions[] = {
        {"--wckey", KeptOption::Value::kRequired, "there is no wckey tracking"},
        {"--profile", KeptOption::Value::kRequired, "there is no profiling plugin"},
        {"--acctg-freq", KeptOption::Value::kRequired, "usage is sampled at the agent's rate"},
        {"--gres-flags", KeptOption::Value::kRequired, "GPUs always come with CPUs near them"},
        {"-S,--core-spec", KeptOption::Value::kRequired, "no cores are set aside for the system"},
        {"--thread-spec", KeptOption::Value::kRequired, "no threads are set aside for the system"},
        {"--tmp", KeptOption::Value::kRequired, "temporary disk space is not tracked"},
        {"--network", KeptOption::Value::kRequired, "there is no network plugin"},
        {"--cpu-freq", KeptOption::Value::kRequired, "CPU frequencies are not set per job"},
        {"--gpu-freq", KeptOption::Value::kRequired, "GPU frequencies are not set per job"},
        {"--deadline", KeptOption::Value::kRequired, "deadlines are not enforced"},
        {"--delay-boot", KeptOption::Value::kRequired, "nodes are not rebooted for jobs"},
        {"--reboot", KeptOption::Value::kNone, "nodes are not rebooted for jobs"},
        {"--mcs-label", KeptOption::Value::kRequired, "there is no MCS plugin"},
        {"--bb", KeptOption::Value::kRequired, "there are no burst buffers"},
        {"--bbf", KeptOption::Value::kRequired, "there are no burst buffers"},
        {"--power", KeptOption::Value::kRequired, "there is no power plugin"},
        {"--sockets-per-node", KeptOption::Value::kRequired,
         "nodes are chosen by CPU count, not socket layout"},
        {"--cores-per-socket", KeptOption::Value::kRequired,
         "nodes are chosen by CPU count, not socket layout"},
        {"--threads-per-core", KeptOption::Value::kRequired,
         "nodes are chosen by CPU count, not socket layout"},
        {"-B,--extra-node-info", KeptOption::Value::kRequired,
         "nodes are chosen by CPU count, not socket layout"},
        {"--ntasks-per-socket", KeptOption::Value::kRequired, "tasks are not spread by socket"},
        {"--ntasks-per-core", KeptOption::Value::kRequired, "tasks are not spread by core"},
        {"--mem-bind", KeptOption::Value::kRequired, "memory is not bound"},
        {"--spread-job", KeptOption::Value::kNone, "nodes are chosen by the placement policy"},
        {"--use-min-nodes", KeptOption::Value::kNone, "nodes are chosen by the placement policy"},
        {"--contiguous", KeptOption::Value::kNone, "nodes are chosen by the placement policy"},
        {"--propagate", KeptOption::Value::kOptional, "resource limits are not propagated"},
        {"--get-user-env", KeptOption::Value::kOptional,
         "the environment is exported from the submitting shell"},
        {"-k,--no-kill", KeptOption::Value::kOptional,
         "a lost node requeues or ends its job (see --requeue)"},
        {"--ignore-pbs", KeptOption::Value::kNone, "#PBS lines are never read"},
        {"--priority", KeptOption::Value::kRequired, "priorities come from the priority policy"},
        {"--cluster-constraint", KeptOption::Value::kRequired, "there is one cluster"},
        {"--container", KeptOption::Value::kRequired, "there is no OCI container runtime"},
        {"--tres-per-task", KeptOption::Value::kRequired,
         "use --cpus-per-task and --gpus-per-task"},
        {"--export-file", KeptOption::Value::kRequired, "use --export"},
};

std::string stored_name(const char* names) {
    const std::string text(names);
    const size_t long_name = text.find("--");
    return text.substr(long_name);
}

const KeptOption* find_kept(const std::string& name) {
    for (const KeptOption& option : kKeptOptions) {
        if (stored_name(option.names) == name) {
            return &option;
        }
    }
    return nullptr;
}

// -w/--nodelist and -F/--nodefile: a hostlist, or (with a '/') a file of host names.
Result<std::vector<std::string>> read_nodelist(const std::string& option,
                                               const std::string& value) {
    std::string text = value;
    if (value.find('/') != std::string::npos) {
        std::ifstream in(value);
        if (!in) {
            return Status::invalid(option + ": cannot read node file '" + value
                                   + "' (accepted: a hostlist, or a file of host names)");
        }
        std::stringstream words;
        words << in.rdbuf();
        text.clear();
        for (std::string word; words >> word;) {
            text += (text.empty() ? "" : ",") + word;
        }
    }
    auto hosts = expand_hostlist(text);
    if (!hosts) {
        return hosts.status().with_context(option);
    }
    // A node named twice is one node, as Slurm counts it. A set, not a scan of the list: a
    // hostlist may name up to a million hosts (fuzz_directives timed out on 43,000).
    std::vector<std::string> unique;
    std::unordered_set<std::string> seen;
    for (std::string& host : *hosts) {
        if (seen.insert(host).second) {
            unique.push_back(std::move(host));
        }
    }
    return unique;
}

// --mem, --mem-per-cpu; with --mem=0 meaning all of each node's memory.
Status read_memory_options(const JobOptions& o, protocol::JobSpec& spec) {
    const int given = !o.mem.empty() + !o.mem_per_cpu.empty() + !o.mem_per_gpu.empty();
    if (given > 1) {
        return Status::invalid(
                "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (accepted: one "
                "of them)");
    }
    if (!o.mem.empty()) {
        auto mem = parse_memory_mib(o.mem);
        if (!mem) {
            return mem.status().with_context("--mem");
        }
        spec.mem_mib = *mem;
        spec.mem_whole_node = *mem == 0;
    }
    if (!o.mem_per_cpu.empty()) {
        auto mem = parse_memory_mib(o.mem_per_cpu);
        if (!mem || *mem == 0) {
            return Status::invalid("--mem-per-cpu: invalid value '" + o.mem_per_cpu
                                   + "' (accepted: N[K|M|G|T] of 1 MiB or more, no suffix = MiB)");
        }
        spec.mem_per_cpu_mib = *mem;
    }
    return Status::ok();
}

// --exclusive, --oversubscribe, -C, --prefer, -w, -L, -O, --mincpus, --hint, --time-min and
// --wait-all-nodes.
Status read_node_options(const JobOptions& o, protocol::JobSpec& spec) {
    if (o.exclusive == "(bare)") {
        spec.sharing = protocol::NodeSharing::kExclusive;
    } else if (o.exclusive == "user") {
        spec.sharing = protocol::NodeSharing::kExclusiveUser;
    } else if (o.exclusive == "mcs") {
        spec.sharing = protocol::NodeSharing::kExclusiveMcs;
    } else if (!o.exclusive.empty()) {
        return Status::invalid("--exclusive: invalid value '" + o.exclusive
                               + "' (accepted: no value, user or mcs)");
    } else if (o.oversubscribe) {
        spec.sharing = protocol::NodeSharing::kOversubscribe;
    }
    for (const auto& [option, text, into] :
         {std::tuple{"--constraint", &o.constraint, &spec.constraint},
          std::tuple{"--prefer", &o.prefer, &spec.prefer}}) {
        if (!text->empty()) {
            if (auto parsed = parse_feature_expr(option, *text); !parsed) {
                return parsed.status();
            }
            *into = *text;
        }
    }
    if (!o.nodelist.empty()) {
        auto nodes = read_nodelist("--nodelist", o.nodelist);
        if (!nodes) {
            return nodes.status();
        }
        spec.nodelist = std::move(*nodes);
    }
    if (!o.licenses.empty()) {
        if (auto parsed = parse_licenses(o.licenses); !parsed) {
            return parsed.status();
        }
        spec.licenses = o.licenses;
    }
    if (auto gres = split_gres_option(o.gres); gres && !gres->generic.empty()) {
        auto parsed = parse_generic_gres("--gres", gres->generic);
        if (!parsed) {
            return parsed.status();
        }
        spec.gres = gres->generic;  // as given: show job prints it so, as Slurm does
    }
    spec.overcommit = o.overcommit;
    auto mincpus = count_option("--mincpus", o.mincpus, 0);
    if (!mincpus) {
        return mincpus.status();
    }
    spec.mincpus = *mincpus;
    if (!o.hint.empty()) {
        const char* const hints[] = {"compute_bound", "memory_bound", "multithread",
                                     "nomultithread"};
        if (std::find(std::begin(hints), std::end(hints), o.hint) == std::end(hints)) {
            return Status::invalid("--hint: invalid value '" + o.hint
                                   + "' (accepted: compute_bound, memory_bound, multithread, "
                                     "nomultithread)");
        }
        spec.hint = o.hint;
    }
    if (!o.time_min.empty()) {
        auto time = parse_time_limit(o.time_min);
        if (!time || *time < 0) {
            return Status::invalid("--time-min: invalid value '" + o.time_min
                                   + "' (accepted: M, M:S, H:M:S, D-H, D-H:M or D-H:M:S)");
        }
        spec.time_min_s = *time;
    }
    if (!o.wait_all_nodes.empty() && o.wait_all_nodes != "0" && o.wait_all_nodes != "1") {
        return Status::invalid("--wait-all-nodes: invalid value '" + o.wait_all_nodes
                               + "' (accepted: 0, 1)");
    }
    spec.wait_all_nodes = o.wait_all_nodes == "1";
    return Status::ok();
}

// The warnings of options that are kept but change nothing here.
void warn_of_kept(const JobOptions& o, std::vector<std::string>& warnings) {
    for (const auto& [name, value] : o.kept) {
        const KeptOption* option = find_kept(name);
        if (option != nullptr) {
            warnings.push_back(fmt::format("{}{} is kept with the job but changes nothing here: {}",
                                           name, value.empty() ? "" : "=" + value, option->why));
        }
    }
    if (o.exclusive == "user" || o.exclusive == "mcs") {
        warnings.push_back("--exclusive=" + o.exclusive
                           + ": nodes are given whole, shared with no other job");
    }
    if (o.oversubscribe) {
        warnings.push_back(
                "--oversubscribe is kept with the job but changes nothing here: CPUs are never "
                "shared between jobs");
    }
}

}  // namespace

JobOptions next_het_component(const JobOptions& previous) {
    JobOptions next = previous;
    for (std::string* reset : {&next.nodes,         &next.ntasks,      &next.ntasks_per_node,
                               &next.cpus_per_task, &next.partition,   &next.gpus,
                               &next.gpus_per_node, &next.gres,        &next.gpus_per_task,
                               &next.cpus_per_gpu,  &next.mem_per_gpu, &next.ntasks_per_gpu,
                               &next.gpu_bind,      &next.switches,    &next.distribution,
                               &next.mail_user,     &next.exclusive,   &next.mem_per_cpu,
                               &next.constraint,    &next.nodelist,    &next.licenses,
                               &next.mincpus,       &next.hint}) {
        reset->clear();
    }
    next.mail_type.clear();
    next.oversubscribe = false;
    next.overcommit = false;
    for (const char* reset :
         {"--bb", "--contiguous", "--core-spec", "--cores-per-socket", "--cpu-freq", "--gpu-freq",
          "--gres-flags", "--mem-bind", "--network", "--ntasks-per-core", "--ntasks-per-socket",
          "--power", "--sockets-per-node", "--spread-job", "--thread-spec", "--threads-per-core",
          "--tmp", "--use-min-nodes"}) {
        next.kept.erase(reset);
    }
    return next;
}

void add_job_options(OptionRegistrar& add, JobOptions& o, JobCommand command) {
    add.add_option("-J,--job-name", o.job_name, "name of the job");
    add.add_option("-N,--nodes", o.nodes, "number of nodes: N or MIN-MAX");
    add.add_option("-n,--ntasks", o.ntasks, "number of tasks");
    add.add_option("--ntasks-per-node,--tasks-per-node", o.ntasks_per_node, "tasks on each node");
    add.add_option("-c,--cpus-per-task", o.cpus_per_task, "CPUs for each task");
    add.add_option("--mem", o.mem, "memory per node: N[K|M|G|T], no suffix = MiB");
    add.add_option("-t,--time", o.time,
                   "time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED");
    add.add_option("-p,--partition", o.partition, "partition to run in");
    add.add_option("-D,--chdir", o.chdir, "working directory");
    add.add_option("--export", o.export_spec, "ALL, NONE or [ALL,]VAR[=value],...");
    add.add_option("--nice", o.nice, "lower the job's priority by this much");
    add.add_option("-b,--begin", o.begin,
                   "start no earlier: 16:00, now+1hour, tomorrow, 2026-12-25T08:00, ...");
    add.add_option(
            "-d,--dependency", o.dependency,
            "afterok:ID[:ID], afterany, afternotok, after:ID[+MIN], singleton; ',' all, '?' any");
    add.add_option("--kill-on-invalid-dep", o.kill_on_invalid_dep,
                   "yes (default): cancel a job whose dependency can never be met; no: keep it");
    add.add_option("-A,--account", o.account, "account charged (default: the user's first)");
    add.add_option("-q,--qos", o.qos, "quality of service (default: the cluster's)");
    add.add_option("--reservation", o.reservation, "run inside this advance reservation");
    add.add_option("-G,--gpus", o.gpus, "GPUs for the whole job: [type:]N");
    add.add_option("--gpus-per-node", o.gpus_per_node, "GPUs on each node: [type:]N");
    add.add_option("--gres", o.gres,
                   "generic resources per node: gpu[:type][:N] and name[:N] the nodes declare");
    add.add_option("--gpus-per-task", o.gpus_per_task, "GPUs for each task: [type:]N");
    add.add_option("--cpus-per-gpu", o.cpus_per_gpu, "CPUs for each GPU: N");
    add.add_option("--mem-per-gpu", o.mem_per_gpu, "memory per GPU: N[K|M|G|T], no suffix = MiB");
    add.add_option("--ntasks-per-gpu", o.ntasks_per_gpu, "tasks for each GPU: N");
    add.add_option("--gpu-bind", o.gpu_bind,
                   "closest (each task its GPUs near its cores), none, map_gpu:<id>[,<id>...]");
    add.add_option("--switches", o.switches,
                   "at most N leaf switches, waiting up to max-wait for them: N[@max-wait]");
    add.add_option("--segment", o.segment, "nodes per segment, each inside one block: N");
    add.add_option("-m,--distribution", o.distribution,
                   "how ranks are dealt over the nodes: block (default), cyclic, plane=N");
    add.add_option("-x,--exclude", o.exclude, "nodes the job may not use: a hostlist");
    add.add_option("--comment", o.comment, "a comment shown with the job");
    add.add_option("-M,--clusters,--cluster", o.clusters, "clusters to submit to: this one's name");
    CLI::Option* mail_type =
            add.add_option("--mail-type", o.mail_type,
                           "events that mail the user: BEGIN, END, FAIL, REQUEUE, ALL, NONE, ...");
    add.add_option("--mail-user", o.mail_user, "who gets the mail (default: the job's user)");
    // Both set how the job shares its nodes: the later one wins, as in sbatch.
    if (CLI::Option* exclusive = add.add_flag(
                "--exclusive{(bare)}", o.exclusive,
                "whole nodes: every CPU and GPU of each (=user, =mcs: the same here)")) {
        exclusive->each([&o](const std::string&) { o.oversubscribe = false; })->trigger_on_parse();
    }
    if (CLI::Option* oversubscribe = add.add_flag_callback(
                "-s,--oversubscribe",
                [&o] {
                    o.oversubscribe = true;
                    o.exclusive.clear();
                },
                "accepted; CPUs are never shared")) {
        oversubscribe->trigger_on_parse();
    }
    add.add_option("--mem-per-cpu", o.mem_per_cpu,
                   "memory per allocated CPU: N[K|M|G|T], no suffix = MiB");
    add.add_option("-C,--constraint", o.constraint,
                   "node features: a&b, a|b, [a|b] (all nodes alike), a*N, (...)");
    add.add_option("--prefer", o.prefer, "node features to try first, as --constraint writes them");
    add.add_option("-L,--licenses", o.licenses, "cluster licenses: name[:count][,...]");
    add.add_flag("-O,--overcommit", o.overcommit,
                 "CPUs for one task per node, however many tasks it runs");
    add.add_option("--mincpus", o.mincpus, "at least this many CPUs on each node");
    add.add_option("--hint", o.hint,
                   "compute_bound, memory_bound, multithread, nomultithread (kept)");
    add.add_option("--time-min", o.time_min,
                   "the least time the job could run with: its limit may be lowered as far to "
                   "start it sooner");
    add.add_option("--wait-all-nodes", o.wait_all_nodes,
                   "1: start once every node is ready, 0: at once (nodes here are ready)");
    add.add_flag("-Q,--quiet", o.quiet, "no warnings");
    for (const KeptOption& kept : kKeptOptions) {
        const std::string name = stored_name(kept.names);
        switch (kept.value) {
            case KeptOption::Value::kRequired:
            case KeptOption::Value::kOptional:
                add.add_option_function(
                        kept.names, [&o, name](const std::string& value) { o.kept[name] = value; },
                        "kept with the job; no effect here",
                        kept.value == KeptOption::Value::kOptional);
                break;
            case KeptOption::Value::kNone:
                add.add_flag_callback(
                        kept.names, [&o, name] { o.kept[name] = ""; },
                        "kept with the job; no effect here");
                break;
        }
    }
    add.add_flag_callback(
            "-v,--verbose", [] {}, "more output (accepted)");
    if (command == JobCommand::kBatch) {
        add.add_option("-o,--output", o.output, "stdout file pattern (default slurm-%j.out)");
        add.add_option("-e,--error", o.error, "stderr file pattern (default: with stdout)");
        add.add_flag("-H,--hold", o.hold, "submit held; release with cohort release");
        add.add_flag("--requeue{yes},--no-requeue{no}", o.requeue,
                     "may (not) run again after a node failure or a requeue "
                     "(default: the cluster's job_requeue)");
        add.add_option("--signal", o.signal,
                       "[{R|B}:]SIGNAL[@SECONDS]: signal the job's steps (B: its batch shell) "
                       "SECONDS (default 60) before its time limit; R: only when requeued");
        add.add_option("--open-mode", o.open_mode,
                       "append or truncate the output files (default: truncate, and append "
                       "each requeued attempt after a banner line)");
        add.add_flag("--parsable", o.parsable, "print only the job id");
        add.add_flag("-W,--wait", o.wait,
                     "return once the job has ended, with its exit code (an array's highest)");
        add.add_option("--wrap", o.wrap, "wrap this command in a /bin/sh script");
        add.add_option("-a,--array", o.array, "job array: 0-15, 1,3,5-9:2, 0-99%10 (throttle)");
    }
    if (command != JobCommand::kAlloc) {  // salloc has none
        add.add_flag("--test-only", o.test_only,
                     "check the job and tell when and where it would start; submit nothing");
    }
    if (command != JobCommand::kRun) {
        // `cohort run` has its own -w: the nodes of a step inside an allocation.
        add.add_option("-w,--nodelist", o.nodelist,
                       "nodes the job must have: a hostlist or a file");
        add.add_option("-F,--nodefile", o.nodelist, "a file of the nodes the job must have");
    }
    for (CLI::Option* option : add.added()) {
        option->multi_option_policy(option == mail_type ? CLI::MultiOptionPolicy::TakeAll
                                                        : CLI::MultiOptionPolicy::TakeLast);
    }
}

Result<std::vector<std::string>> parse_component_words(const CommandOptions& command,
                                                       const std::vector<std::string>& words) {
    auto spelled = spell_out_prefixes(command.catalogue(), words);
    if (!spelled) {
        return spelled.status();
    }
    OptionSelection selection;
    selection.add_words(*spelled);
    const std::unique_ptr<CLI::App> app = command.app_for(selection);
    std::vector<std::string> reversed(spelled->rbegin(), spelled->rend());
    try {
        app->parse(reversed);
    } catch (const CLI::ParseError& e) {
        return Status::invalid(e.what());
    }
    return app->remaining();
}

Result<std::vector<std::string>> spell_out_prefixes(const OptionCatalogue& catalogue,
                                                    std::vector<std::string> words) {
    for (size_t i = 0; i < words.size(); ++i) {
        std::string& word = words[i];
        if (word == "--" || word.size() < 2 || word[0] != '-') {
            break;  // the script or command, and its own arguments
        }
        const bool is_long = word[1] == '-';
        const size_t equals = word.find('=');
        std::string name = is_long ? word.substr(
                                   2, equals == std::string::npos ? std::string::npos : equals - 2)
                                   : word.substr(1, 1);
        if (is_long && !catalogue.takes_value("--" + name)) {
            // Names of one option (--cluster, --clusters) are one match, as for getopt.
            std::vector<std::string> matches;
            std::vector<size_t> options;
            for (const auto& [candidate, option] : catalogue.long_names()) {
                if (candidate.rfind(name, 0) == 0) {
                    matches.push_back(candidate);
                    if (std::find(options.begin(), options.end(), option) == options.end()) {
                        options.push_back(option);
                    }
                }
            }
            if (options.size() > 1) {
                return Status::invalid(fmt::format("--{}: ambiguous option (accepted: one of --{})",
                                                   name, fmt::join(matches, ", --")));
            }
            if (matches.empty()) {
                return Status::invalid("unrecognized option '--" + name + "'");
            }
            name = matches.front();
            word = "--" + name + (equals == std::string::npos ? "" : word.substr(equals));
        }
        const std::optional<bool> takes_value =
                catalogue.takes_value(is_long ? "--" + name : "-" + name);
        if (!takes_value) {
            return Status::invalid("invalid option -- '" + name + "'");  // getopt's words
        }
        // An option's separate value is not an operand.
        const bool value_attached = is_long ? equals != std::string::npos : word.size() > 2;
        if (*takes_value && !value_attached) {
            ++i;
        }
    }
    return words;
}

Status check_clusters(const JobOptions& options, const std::string& this_cluster) {
    if (options.clusters.empty()) {
        return Status::ok();
    }
    size_t start = 0;
    while (start <= options.clusters.size()) {
        const size_t comma = std::min(options.clusters.find(',', start), options.clusters.size());
        if (options.clusters.compare(start, comma - start, this_cluster) == 0) {
            return Status::ok();
        }
        start = comma + 1;
    }
    return Status::invalid(
            fmt::format("--clusters: no cluster '{}' here (accepted: {}, this "
                        "cluster's name)",
                        options.clusters, this_cluster));
}

std::vector<std::pair<std::string, std::string>> current_environment() {
    std::vector<std::pair<std::string, std::string>> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        std::string text(*entry);
        size_t eq = text.find('=');
        if (eq != std::string::npos && eq > 0) {
            env.emplace_back(text.substr(0, eq), text.substr(eq + 1));
        }
    }
    return env;
}

Result<std::vector<std::pair<std::string, std::string>>> exported_environment(
        const std::string& spec) {
    auto current = current_environment();
    if (spec.empty() || spec == "ALL") {
        return current;
    }
    std::map<std::string, std::string> from(current.begin(), current.end());
    std::map<std::string, std::string> out;
    size_t start = 0;
    bool first = true;
    while (start <= spec.size()) {
        size_t comma = spec.find(',', start);
        std::string item =
                spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item == "ALL" && first) {
            out = from;
        } else if ((item == "NONE" || item == "NIL") && first) {
            // Only the variables a shell needs to start; the rest comes from Cohort.
            for (const char* name : {"HOME", "USER", "LOGNAME", "SHELL", "PATH"}) {
                if (from.count(name) != 0) {
                    out[name] = from.at(name);
                }
            }
        } else if (item.empty()) {
            return Status::invalid("--export: empty entry in '" + spec
                                   + "' (accepted: ALL, NONE or [ALL,]VAR[=value],...)");
        } else if (size_t eq = item.find('='); eq != std::string::npos) {
            out[item.substr(0, eq)] = item.substr(eq + 1);
        } else if (from.count(item) != 0) {
            out[item] = from.at(item);
        }
        first = false;
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return std::vector<std::pair<std::string, std::string>>(out.begin(), out.end());
}

namespace {

// Variable, option; a flag's option takes no value from the variable.
struct InputVariable {
    const char* variable;
    const char* option;
    bool flag;
};

// sbatch's SBATCH_<name> and salloc's SALLOC_<name>, by <name>.
constexpr InputVariable kSbatchSallocInputs[] = {
        {"ACCOUNT", "--account", false},
        {"ACCTG_FREQ", "--acctg-freq", false},
        {"ARRAY_INX", "--array", false},
        {"CLUSTERS", "--clusters", false},
        {"CONSTRAINT", "--constraint", false},
        {"CONTAINER", "--container", false},
        {"CORE_SPEC", "--core-spec", false},
        {"CPUS_PER_GPU", "--cpus-per-gpu", false},
        {"DELAY_BOOT", "--delay-boot", false},
        {"DISTRIBUTION", "--distribution", false},
        {"EXPORT", "--export", false},
        {"GPU_BIND", "--gpu-bind", false},
        {"GPU_FREQ", "--gpu-freq", false},
        {"GPUS", "--gpus", false},
        {"GPUS_PER_NODE", "--gpus-per-node", false},
        {"GPUS_PER_TASK", "--gpus-per-task", false},
        {"GRES", "--gres", false},
        {"GRES_FLAGS", "--gres-flags", false},
        {"HINT", "--hint", false},
        {"IGNORE_PBS", "--ignore-pbs", true},
        {"JOB_NAME", "--job-name", false},
        {"MEM_BIND", "--mem-bind", false},
        {"MEM_PER_CPU", "--mem-per-cpu", false},
        {"MEM_PER_GPU", "--mem-per-gpu", false},
        {"MEM_PER_NODE", "--mem", false},
        {"NETWORK", "--network", false},
        {"NO_KILL", "--no-kill", true},
        {"NO_REQUEUE", "--no-requeue", true},
        {"OPEN_MODE", "--open-mode", false},
        {"OVERCOMMIT", "--overcommit", true},
        {"PARTITION", "--partition", false},
        {"POWER", "--power", false},
        {"PROFILE", "--profile", false},
        {"QOS", "--qos", false},
        {"REQUEUE", "--requeue", true},
        {"RESERVATION", "--reservation", false},
        {"SIGNAL", "--signal", false},
        {"SPREAD_JOB", "--spread-job", true},
        {"THREAD_SPEC", "--thread-spec", false},
        {"THREADS_PER_CORE", "--threads-per-core", false},
        {"TIMELIMIT", "--time", false},
        {"USE_MIN_NODES", "--use-min-nodes", true},
        {"WAIT_ALL_NODES", "--wait-all-nodes", false},
        {"WCKEY", "--wckey", false},
};

// srun's, less those a batch script receives as the job's own (SLURM_NTASKS, SLURM_NNODES,
// SLURM_MEM_PER_NODE, ...): inside a job the step takes those from the job already.
// SLURM_MPI_TYPE, SLURM_KILL_BAD_EXIT and SLURM_DISTRIBUTION are read where their options are.
constexpr InputVariable kSrunInputs[] = {
        {"SLURM_ACCOUNT", "--account", false},
        {"SLURM_CLUSTERS", "--clusters", false},
        {"SLURM_CONSTRAINT", "--constraint", false},
        {"SLURM_CPU_FREQ_REQ", "--cpu-freq", false},
        {"SLURM_DELAY_BOOT", "--delay-boot", false},
        {"SLURM_EXPORT_ENV", "--export", false},
        {"SLURM_HINT", "--hint", false},
        {"SLURM_LABELIO", "--label", true},
        {"SLURM_MEM_BIND", "--mem-bind", false},
        {"SLURM_NETWORK", "--network", false},
        {"SLURM_NO_KILL", "--no-kill", true},
        {"SLURM_OVERLAP", "--overlap", true},
        {"SLURM_PARTITION", "--partition", false},
        {"SLURM_PROFILE", "--profile", false},
        {"SLURM_QOS", "--qos", false},
        {"SLURM_RESERVATION", "--reservation", false},
        {"SLURM_SIGNAL", "--signal", false},
        {"SLURM_STDERRMODE", "--error", false},
        {"SLURM_STDINMODE", "--input", false},
        {"SLURM_STDOUTMODE", "--output", false},
        {"SLURM_TIMELIMIT", "--time", false},
        {"SLURM_WCKEY", "--wckey", false},
        {"SLURM_WORKING_DIR", "--chdir", false},
        {"SRUN_CPUS_PER_TASK", "--cpus-per-task", false},
};

void add_input(std::vector<std::string>& words,
               const OptionCatalogue& catalogue,
               const std::string& variable,
               const InputVariable& input) {
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr || !catalogue.takes_value(input.option)) {
        return;
    }
    words.push_back(input.flag ? std::string(input.option)
                               : std::string(input.option) + "=" + value);
}

}  // namespace

std::vector<std::string> environment_options(JobCommand command, const OptionCatalogue& catalogue) {
    std::vector<std::string> words;
    if (command == JobCommand::kRun) {
        for (const InputVariable& input : kSrunInputs) {
            add_input(words, catalogue, input.variable, input);
        }
        return words;
    }
    const std::string prefix = command == JobCommand::kBatch ? "SBATCH_" : "SALLOC_";
    for (const InputVariable& input : kSbatchSallocInputs) {
        add_input(words, catalogue, prefix + input.variable, input);
    }
    if (const char* value = std::getenv((prefix + "EXCLUSIVE").c_str()); value != nullptr) {
        const std::string mode(value);
        words.push_back(mode == "user" || mode == "mcs" ? "--exclusive=" + mode : "--exclusive");
    }
    if (const char* count = std::getenv((prefix + "REQ_SWITCH").c_str()); count != nullptr) {
        const char* wait = std::getenv((prefix + "WAIT4SWITCH").c_str());
        words.push_back(std::string("--switches=") + count
                        + (wait != nullptr ? std::string("@") + wait : ""));
    }
    return words;
}

std::string will_run_line(const std::string& program, const protocol::WillRunReply& reply) {
    return fmt::format("{}: Job {} to start at {} using {} processors on nodes {} in partition {}",
                       program, reply.job_id, format_time(reply.start_time), reply.cpus,
                       compress_hostlist(reply.nodes), reply.partition);
}

void print_warnings(const JobOptions& options, const std::vector<std::string>& warnings) {
    if (options.quiet) {
        return;
    }
    for (const std::string& warning : warnings) {
        fmt::print(stderr, "warning: {}\n", warning);
    }
}

Result<protocol::JobSpec> job_spec_from(const JobOptions& o, std::vector<std::string>* warnings) {
    protocol::JobSpec spec;
    spec.name = o.job_name;
    spec.partition = o.partition;
    if (!o.nodes.empty()) {
        size_t dash = o.nodes.find('-');
        auto min = count_option("--nodes", o.nodes.substr(0, dash), 0);
        if (!min) {
            return min.status();
        }
        spec.nodes_min = *min;
        if (dash != std::string::npos) {
            auto max = count_option("--nodes", o.nodes.substr(dash + 1), 0);
            if (!max) {
                return max.status();
            }
            spec.nodes_max = *max;
            if (spec.nodes_max < spec.nodes_min) {
                return Status::invalid("--nodes: invalid range '" + o.nodes
                                       + "' (accepted: N or MIN-MAX with MIN <= MAX)");
            }
        }
    }
    auto ntasks = count_option("--ntasks", o.ntasks, 0);
    auto per_node = count_option("--ntasks-per-node", o.ntasks_per_node, 0);
    auto cpus = count_option("--cpus-per-task", o.cpus_per_task, 1);
    for (const auto* r : {&ntasks, &per_node, &cpus}) {
        if (!*r) {
            return r->status();
        }
    }
    spec.ntasks = *ntasks;
    spec.ntasks_per_node = *per_node;
    spec.cpus_per_task = *cpus;
    spec.cpus_per_task_set = !o.cpus_per_task.empty();
    if (Status memory = read_memory_options(o, spec); !memory) {
        return memory;
    }
    if (!o.time.empty()) {
        auto time = parse_time_limit(o.time);
        if (!time) {
            return time.status().with_context("--time");
        }
        spec.time_limit_s = *time;
    }
    if (!o.nice.empty()) {
        try {
            size_t used = 0;
            spec.nice = std::stoi(o.nice, &used);
            if (used != o.nice.size()) {
                throw std::invalid_argument(o.nice);
            }
        } catch (const std::exception&) {
            return Status::invalid("--nice: invalid value '" + o.nice
                                   + "' (accepted: an integer, e.g. 100)");
        }
    }
    if (!o.dependency.empty()) {
        if (auto parsed = sched::parse_dependency(o.dependency); !parsed) {
            return parsed.status();
        }
        spec.dependency = o.dependency;
    }
    if (o.kill_on_invalid_dep == "no") {
        spec.kill_on_invalid_dep = false;
    } else if (!o.kill_on_invalid_dep.empty() && o.kill_on_invalid_dep != "yes") {
        return Status::invalid("--kill-on-invalid-dep: invalid value '" + o.kill_on_invalid_dep
                               + "' (accepted: yes, no)");
    }
    if (!o.begin.empty()) {
        auto begin = parse_begin_time(o.begin, static_cast<int64_t>(std::time(nullptr)));
        if (!begin) {
            return begin.status().with_context("--begin");
        }
        spec.begin_time = *begin;
    }
    if (!o.array.empty()) {
        // Syntax only: the cluster's max_array_size bounds the indexes.
        if (auto parsed = sched::parse_array_spec(o.array, sched::kLargestMaxArraySize); !parsed) {
            return parsed.status();
        }
        spec.array = o.array;
    }
    auto gpu = gpu_options_from(o);
    if (!gpu) {
        return gpu.status();
    }
    spec.gpu = std::move(*gpu);
    TaskGeometry geometry{spec.nodes_min,       spec.nodes_max,     spec.ntasks,
                          spec.ntasks_per_node, spec.cpus_per_task, spec.cpus_per_task_set,
                          spec.mem_mib};
    if (auto shape = resolve_gpus(spec.gpu, geometry); !shape) {
        return shape.status();
    }
    if (Status network = read_network_options(o, spec); !network) {
        return network;
    }
    if (auto distribution = parse_distribution("--distribution", o.distribution); !distribution) {
        return distribution.status();
    }
    spec.distribution = o.distribution;
    spec.account = o.account;
    spec.qos = o.qos;
    spec.reservation = o.reservation;
    spec.output = o.output;
    spec.error = o.error;
    spec.hold = o.hold;
    spec.requeue = o.requeue.empty() ? -1 : o.requeue == "yes" ? 1 : 0;
    if (!o.open_mode.empty() && o.open_mode != "append" && o.open_mode != "truncate") {
        return Status::invalid("--open-mode: invalid value '" + o.open_mode
                               + "' (accepted: append, truncate)");
    }
    spec.open_mode = o.open_mode;
    if (auto warning = parse_warning_signal("--signal", o.signal); !warning) {
        return warning.status();
    }
    spec.signal = o.signal;
    spec.comment = o.comment;
    auto mail = parse_mail_type(o.mail_type);
    if (!mail) {
        return mail.status();
    }
    spec.mail_type = *mail;
    spec.mail_user = o.mail_user;
    if (Status nodes = read_node_options(o, spec); !nodes) {
        return nodes;
    }
    if (spec.ntasks != 0 && spec.nodelist.size() > spec.ntasks) {
        // As sbatch: never more named nodes than tasks; the first ones are kept.
        if (warnings != nullptr) {
            warnings->push_back(
                    fmt::format("can't run {} processes on {} nodes, setting nnodes to {}",
                                spec.ntasks, spec.nodelist.size(), spec.ntasks));
        }
        spec.nodelist.resize(spec.ntasks);
    }
    spec.kept_options.assign(o.kept.begin(), o.kept.end());
    if (warnings != nullptr) {
        if (const uint32_t kept = spec.mail_type & ~kMailSent; kept != 0) {
            warnings->push_back(
                    fmt::format("--mail-type: {} is kept with the job but sends no mail here",
                                mail_type_name(kept)));
        }
        warn_of_kept(o, *warnings);
    }
    if (!o.exclude.empty()) {
        auto excluded = expand_hostlist(o.exclude);
        if (!excluded) {
            return excluded.status().with_context("--exclude");
        }
        spec.exclude = std::move(*excluded);
    }
    spec.export_spec = o.export_spec.empty() ? "ALL" : o.export_spec;
    auto env = exported_environment(spec.export_spec);
    if (!env) {
        return env.status();
    }
    spec.env = std::move(*env);
    if (o.chdir.empty()) {
        char cwd[4096];
        spec.cwd = getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/tmp";
    } else {
        // Stored absolute, as Slurm does, so `-D .` and relative output paths mean where the
        // job was submitted from, not where its node's agent runs.
        std::string dir = std::filesystem::absolute(o.chdir).lexically_normal().string();
        if (dir.size() > 1 && dir.back() == '/') {
            dir.pop_back();
        }
        spec.cwd = dir;
    }
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    spec.submit_host = host;
    return spec;
}

}  // namespace cohort::cli
