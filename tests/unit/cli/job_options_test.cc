// The value syntax of the job options: what each option's words become in the JobSpec, and
// the one line a bad value gets.
#include "cli/job_options.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

struct Parsed {
    Result<protocol::JobSpec> spec = Status::internal("not parsed");
    std::vector<std::string> warnings;
};

Parsed parse(std::vector<std::string> words) {
    JobOptions options;
    const CommandOptions command("", [&options](OptionRegistrar& add) {
        add_job_options(add, options, JobCommand::kBatch);
    });
    auto spelled = spell_out_prefixes(command.catalogue(), std::move(words));
    Parsed parsed;
    if (!spelled) {
        parsed.spec = spelled.status();
        return parsed;
    }
    OptionSelection named;
    named.add_words(*spelled);
    std::vector<std::string> reversed(spelled->rbegin(), spelled->rend());
    try {
        command.app_for(named)->parse(reversed);
    } catch (const CLI::ParseError& e) {
        parsed.spec = Status::invalid(e.what());
        return parsed;
    }
    parsed.spec = job_spec_from(options, &parsed.warnings);
    return parsed;
}

protocol::JobSpec spec_of(const std::vector<std::string>& words) {
    Parsed parsed = parse(words);
    EXPECT_TRUE(parsed.spec) << parsed.spec.status().message();
    return parsed.spec ? *parsed.spec : protocol::JobSpec{};
}

std::string error_of(const std::vector<std::string>& words) {
    Parsed parsed = parse(words);
    EXPECT_FALSE(parsed.spec) << words.front();
    return parsed.spec ? "" : parsed.spec.status().message();
}

TEST(JobOptions, ExclusiveTakesAnOptionalValueOnlyAfterAnEqualsSign) {
    EXPECT_EQ(spec_of({"--exclusive"}).sharing, protocol::NodeSharing::kExclusive);
    EXPECT_EQ(spec_of({"--exclusive=user"}).sharing, protocol::NodeSharing::kExclusiveUser);
    EXPECT_EQ(spec_of({"--exclusive=mcs"}).sharing, protocol::NodeSharing::kExclusiveMcs);
    EXPECT_EQ(spec_of({"--exclusive", "-n", "2"}).ntasks, 2u);
    EXPECT_EQ(spec_of({"--exclus"}).sharing, protocol::NodeSharing::kExclusive);
    EXPECT_EQ(error_of({"--exclu"}),
              "--exclu: ambiguous option (accepted: one of --exclude, --exclusive)");
    EXPECT_EQ(spec_of({"-s"}).sharing, protocol::NodeSharing::kOversubscribe);
    EXPECT_EQ(error_of({"--exclusive=node"}),
              "--exclusive: invalid value 'node' (accepted: no value, user or mcs)");
    // The later of the two wins, as in sbatch.
    EXPECT_EQ(spec_of({"--exclusive", "--oversubscribe"}).sharing,
              protocol::NodeSharing::kOversubscribe);
    EXPECT_EQ(spec_of({"-s", "--exclusive"}).sharing, protocol::NodeSharing::kExclusive);
}

TEST(JobOptions, MemoryOptionsAndTheirExclusions) {
    const protocol::JobSpec all = spec_of({"--mem=0"});
    EXPECT_TRUE(all.mem_whole_node);
    EXPECT_EQ(all.mem_mib, 0);
    EXPECT_FALSE(spec_of({"--mem=4G"}).mem_whole_node);
    EXPECT_EQ(spec_of({"--mem-per-cpu=2G"}).mem_per_cpu_mib, 2048);
    EXPECT_EQ(spec_of({"--mem-per-cpu", "512"}).mem_per_cpu_mib, 512);
    EXPECT_EQ(error_of({"--mem-per-cpu=0"}),
              "--mem-per-cpu: invalid value '0' (accepted: N[K|M|G|T] of 1 MiB or more, no "
              "suffix = MiB)");
    EXPECT_EQ(error_of({"--mem=1G", "--mem-per-gpu=1G"}),
              "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (accepted: one of "
              "them)");
}

TEST(JobOptions, NodeChoiceOptions) {
    const protocol::JobSpec spec =
            spec_of({"-C", "[a|b]&ib", "--prefer=h100", "-w", "node[1-3],node2", "-L", "matlab:2",
                     "-O", "--mincpus", "8", "--wait-all-nodes=1"});
    EXPECT_EQ(spec.constraint, "[a|b]&ib");
    EXPECT_EQ(spec.prefer, "h100");
    EXPECT_EQ(spec.nodelist, (std::vector<std::string>{"node1", "node2", "node3"}));
    EXPECT_EQ(spec.licenses, "matlab:2");
    EXPECT_TRUE(spec.overcommit);
    EXPECT_EQ(spec.mincpus, 8u);
    EXPECT_TRUE(spec.wait_all_nodes);
    EXPECT_NE(error_of({"-C", "a&&b"}).find("--constraint: invalid feature specification 'a&&b'"),
              std::string::npos);
    EXPECT_NE(error_of({"-L", "x:0"}).find("--licenses: invalid license specification 'x:0'"),
              std::string::npos);
    EXPECT_EQ(error_of({"--wait-all-nodes=2"}),
              "--wait-all-nodes: invalid value '2' (accepted: 0, 1)");
    EXPECT_EQ(error_of({"--hint=fast"}),
              "--hint: invalid value 'fast' (accepted: compute_bound, memory_bound, multithread, "
              "nomultithread)");
}

// As sbatch: a node list longer than the task count keeps its first nodes, with a warning.
TEST(JobOptions, MoreNamedNodesThanTasksKeepsTheFirst) {
    Parsed parsed = parse({"-w", "node[1-3]", "-n", "2"});
    ASSERT_TRUE(parsed.spec);
    EXPECT_EQ(parsed.spec->nodelist, (std::vector<std::string>{"node1", "node2"}));
    EXPECT_EQ(parsed.warnings,
              std::vector<std::string>{"can't run 2 processes on 3 nodes, setting nnodes to 2"});
}

TEST(JobOptions, OptionsWithNoMeaningHereAreKeptWithAWarningEach) {
    Parsed parsed = parse({"--wckey=proj", "--reboot", "--propagate", "--no-kill",
                           "--ntasks-per-core=1", "--time-min=30", "-v"});
    ASSERT_TRUE(parsed.spec) << parsed.spec.status().message();
    EXPECT_EQ(parsed.spec->kept_options,
              (std::vector<std::pair<std::string, std::string>>{{"--no-kill", ""},
                                                                {"--ntasks-per-core", "1"},
                                                                {"--propagate", ""},
                                                                {"--reboot", ""},
                                                                {"--wckey", "proj"}}));
    EXPECT_EQ(parsed.spec->time_min_s, 1800);  // which the scheduler uses: no warning
    EXPECT_EQ(parsed.warnings.size(), 5u);
}

TEST(JobOptions, SbatchInputVariablesBecomeOptionWords) {
    setenv("SBATCH_PARTITION", "gpu", 1);
    setenv("SBATCH_EXCLUSIVE", "user", 1);
    setenv("SBATCH_REQUEUE", "", 1);
    setenv("SBATCH_REQ_SWITCH", "2", 1);
    setenv("SBATCH_WAIT4SWITCH", "10:00", 1);
    JobOptions options;
    const CommandOptions command("", [&options](OptionRegistrar& add) {
        add_job_options(add, options, JobCommand::kBatch);
    });
    const std::vector<std::string> words =
            environment_options(JobCommand::kBatch, command.catalogue());
    for (const char* name : {"SBATCH_PARTITION", "SBATCH_EXCLUSIVE", "SBATCH_REQUEUE",
                             "SBATCH_REQ_SWITCH", "SBATCH_WAIT4SWITCH"}) {
        unsetenv(name);
    }
    EXPECT_EQ(words, (std::vector<std::string>{"--partition=gpu", "--requeue", "--exclusive=user",
                                               "--switches=2@10:00"}));
}

// salloc reads SALLOC_* of sbatch's names, less the options it has not (--requeue, --signal).
TEST(JobOptions, SallocInputVariablesAreSbatchsNamesForItsOwnOptions) {
    setenv("SALLOC_ACCOUNT", "physics", 1);
    setenv("SALLOC_TIMELIMIT", "30", 1);
    setenv("SALLOC_REQUEUE", "", 1);
    setenv("SALLOC_SIGNAL", "USR1@60", 1);
    setenv("SBATCH_QOS", "high", 1);  // sbatch's, not salloc's
    JobOptions options;
    const CommandOptions command("", [&options](OptionRegistrar& add) {
        add_job_options(add, options, JobCommand::kAlloc);
    });
    const std::vector<std::string> words =
            environment_options(JobCommand::kAlloc, command.catalogue());
    for (const char* name :
         {"SALLOC_ACCOUNT", "SALLOC_TIMELIMIT", "SALLOC_REQUEUE", "SALLOC_SIGNAL", "SBATCH_QOS"}) {
        unsetenv(name);
    }
    EXPECT_EQ(words, (std::vector<std::string>{"--account=physics", "--time=30"}));
}

// srun reads the SLURM_* a batch script does not receive as the job's own (SLURM_NTASKS is
// the job's and must not become the step's -n).
TEST(JobOptions, SrunInputVariablesAreTheOnesNoJobSets) {
    setenv("SLURM_LABELIO", "1", 1);
    setenv("SRUN_CPUS_PER_TASK", "2", 1);
    setenv("SLURM_STDOUTMODE", "out-%t", 1);
    setenv("SLURM_NTASKS", "8", 1);
    JobOptions options;
    bool label = false;
    std::string output;
    const CommandOptions command("", [&](OptionRegistrar& add) {
        add_job_options(add, options, JobCommand::kRun);
        add.add_flag("-l,--label", label, "");
        add.add_option("-o,--output", output, "");
    });
    const std::vector<std::string> words =
            environment_options(JobCommand::kRun, command.catalogue());
    for (const char* name :
         {"SLURM_LABELIO", "SRUN_CPUS_PER_TASK", "SLURM_STDOUTMODE", "SLURM_NTASKS"}) {
        unsetenv(name);
    }
    EXPECT_EQ(words, (std::vector<std::string>{"--label", "--output=out-%t", "--cpus-per-task=2"}));
}

}  // namespace
}  // namespace cohort::cli
