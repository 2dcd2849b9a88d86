// The job options `cohort batch` and `cohort run` share, as strings first so every bad value
// gets an error naming the option, the value and what is accepted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/command_options.h"
#include "common/protocol/job_types.h"
#include "common/protocol/messages.h"

namespace cohort::cli {

struct JobOptions {
    std::string job_name;
    std::string nodes;
    std::string ntasks;
    std::string ntasks_per_node;
    std::string cpus_per_task;
    std::string mem;
    std::string time;
    std::string partition;
    std::string output;
    std::string error;
    std::string chdir;
    std::string export_spec;
    std::string nice;
    std::string dependency;
    std::string kill_on_invalid_dep;
    std::string array;
    std::string begin;
    std::string account;
    std::string qos;
    std::string reservation;
    std::string gpus;
    std::string gpus_per_node;
    std::string gres;
    std::string gpus_per_task;
    std::string cpus_per_gpu;
    std::string mem_per_gpu;
    std::string ntasks_per_gpu;
    std::string gpu_bind;
    std::string switches;
    std::string segment;
    std::string distribution;
    bool hold = false;
    std::string requeue;  // "yes" (--requeue), "no" (--no-requeue), the last given; "": neither
    std::string open_mode;
    std::string signal;
    std::string comment;
    std::vector<std::string> mail_type;  // every --mail-type given: they add up
    std::string mail_user;
    std::string exclude;
    std::string clusters;
    std::string exclusive;  // "(bare)" for --exclusive alone, or its value (user, mcs)
    bool oversubscribe = false;
    std::string mem_per_cpu;
    std::string constraint;
    std::string prefer;
    std::string nodelist;
    std::string licenses;
    bool overcommit = false;
    std::string mincpus;
    std::string hint;
    std::string time_min;
    std::string wait_all_nodes;
    // Options kept with the job that change nothing on this cluster: name -> value ("" for
    // a flag), see kept_option_table() in job_options.cc.
    std::map<std::string, std::string> kept;
    bool quiet = false;
    bool parsable = false;
    bool wait = false;       // -W: return when the job has ended, with its exit code
    bool test_only = false;  // report when and where the job would start; submit nothing
    std::string wrap;

    bool operator==(const JobOptions&) const = default;
};

enum class JobCommand {
    kBatch,
    kRun,
    kAlloc,
};

// What a heterogeneous job's next component (#SBATCH hetjob) starts from, as in Slurm: the
// previous component's options, less those that shape its resources (nodes, tasks, CPUs,
// GPUs, partition, constraint, node list, ...), which start anew. Account, QoS, time, memory
// per node, names, files, dependency and hold carry over.
JobOptions next_het_component(const JobOptions& previous);

// Defines the options through `add`; every one keeps its last value when repeated, so
// directives followed by command-line flags give flags precedence.
void add_job_options(OptionRegistrar& add, JobOptions& options, JobCommand command);

// getopt_long's abbreviations, as sbatch and srun take them: each `--pre[=V]` before the
// first operand that starts exactly one long option's name is spelled out (`--no-reque` is
// --no-requeue); one that starts several is refused with their names, and an option that is
// none of them with getopt's words.
Result<std::vector<std::string>> spell_out_prefixes(const OptionCatalogue& catalogue,
                                                    std::vector<std::string> words);

// Parses a later part of a `:` line (one heterogeneous job component's options) on the
// options of `command`, which write that component's JobOptions; returns the words after the
// options, its command if it has one.
Result<std::vector<std::string>> parse_component_words(const CommandOptions& command,
                                                       const std::vector<std::string>& words);

// A command's input environment variables as option words: sbatch's SBATCH_* (SBATCH_ACCOUNT=a
// gives --account=a, ...), salloc's SALLOC_* of the same names, and srun's SLURM_* that a
// batch script does not itself receive (SLURM_LABELIO, SRUN_CPUS_PER_TASK, ...). Only options
// the command has are given. They yield to the command line (and sbatch's override
// directives).
std::vector<std::string> environment_options(JobCommand command, const OptionCatalogue& catalogue);

// The line sbatch and srun print for --test-only (on stderr), which scripts read the start
// time from: "sbatch: Job 12 to start at 2026-12-06T03:11:15 using 4 processors on nodes
// node[1-2] in partition debug".
std::string will_run_line(const std::string& program, const protocol::WillRunReply& reply);

// Turns parsed options into a JobSpec (the environment is taken from `environ`). What is
// kept but means nothing here adds one line each to `warnings`.
Result<protocol::JobSpec> job_spec_from(const JobOptions& options,
                                        std::vector<std::string>* warnings = nullptr);

// Prints each warning on its own line to stderr, unless -Q/--quiet was given.
void print_warnings(const JobOptions& options, const std::vector<std::string>& warnings);

// -M/--clusters: ok when this cluster's name is among them (or none was given), as at
// multi-cluster sites; another cluster's name is refused.
Status check_clusters(const JobOptions& options, const std::string& this_cluster);

// Parses "a=b" entries of `environ` into pairs.
std::vector<std::pair<std::string, std::string>> current_environment();

// Applies --export (ALL, NONE, [ALL,]VAR[=value],...) to the current environment.
Result<std::vector<std::pair<std::string, std::string>>> exported_environment(
        const std::string& spec);

}  // namespace cohort::cli
