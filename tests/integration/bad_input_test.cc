// Every rejected submission: one line on stderr naming the field, the value and what is
// accepted; a non-zero exit; nothing queued.
#include <fstream>

#include <gtest/gtest.h>

#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

struct BadInput {
    const char* name;
    std::vector<std::string> args;
    std::string script;  // written to bad.sh when not empty
    std::vector<std::string> must_mention;
};

void PrintTo(const BadInput& input, std::ostream* os) {
    *os << input.name;
}

class BadInputTest : public SharedCluster<BadInputTest, ::testing::TestWithParam<BadInput>> {};

size_t count_jobs(const LocalCluster& cluster) {
    CommandResult acct = cluster.cohort({"acct", "--json"});
    EXPECT_EQ(acct.exit_code, 0) << acct.err;
    size_t count = 0;
    for (size_t at = acct.out.find("\"job_id\""); at != std::string::npos;
         at = acct.out.find("\"job_id\"", at + 1)) {
        ++count;
    }
    return count;
}

TEST_P(BadInputTest, IsRejectedWithOneClearLineAndQueuesNothing) {
    ASSERT_TRUE(cluster_->up());
    const BadInput& input = GetParam();
    if (!input.script.empty()) {
        std::ofstream(cluster_->work_dir() + "/bad.sh") << input.script;
    }
    size_t before = count_jobs(*cluster_);
    CommandResult result = cluster_->cohort(input.args);
    EXPECT_NE(result.exit_code, 0);
    ASSERT_FALSE(result.err.empty());
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << "not one line: " << result.err;
    for (const auto& word : input.must_mention) {
        EXPECT_NE(result.err.find(word), std::string::npos)
                << "'" << word << "' missing from: " << result.err;
    }
    EXPECT_EQ(count_jobs(*cluster_), before);
}

const std::string kGood = "#!/bin/sh\ntrue\n";

INSTANTIATE_TEST_SUITE_P(
        Submissions,
        BadInputTest,
        ::testing::Values(
                BadInput{"UnknownOption",
                         {"batch", "--frobnicate", "--wrap", "true"},
                         "",
                         {"--frobnicate"}},
                BadInput{"BadTime",
                         {"batch", "-t", "1:2:3:4", "--wrap", "true"},
                         "",
                         {"--time", "1:2:3:4", "accepted"}},
                BadInput{"BadSize",
                         {"batch", "--mem", "12X", "--wrap", "true"},
                         "",
                         {"--mem", "12X", "accepted"}},
                BadInput{"BadCount",
                         {"batch", "-n", "zero", "--wrap", "true"},
                         "",
                         {"--ntasks", "zero", "accepted"}},
                BadInput{"BadOpenMode",
                         {"batch", "--open-mode=sideways", "--wrap", "true"},
                         "",
                         {"--open-mode", "sideways", "append, truncate"}},
                BadInput{"RequeueOfNoJob",
                         {"requeue", "999999"},
                         "",
                         {"999999", "no such pending or running job"}},
                BadInput{"UnknownPartition",
                         {"batch", "-p", "nope", "--wrap", "true"},
                         "",
                         {"--partition", "nope", "debug"}},
                BadInput{"TooManyNodes",
                         {"batch", "-N", "9", "--wrap", "true"},
                         "",
                         {"9 node(s)", "2 node(s)"}},
                BadInput{"TooManyCpus",
                         {"batch", "-c", "4096", "--wrap", "true"},
                         "",
                         {"4096 CPU(s)"}},
                BadInput{
                        "MissingScript", {"batch", "no-such-script.sh"}, "", {"no-such-script.sh"}},
                BadInput{"BadDirective",
                         {"batch", "bad.sh"},
                         "#!/bin/sh\n#SBATCH --time=bogus\ntrue\n",
                         {"line 2", "bogus"}},
                BadInput{"UnknownDirectiveOption",
                         {"batch", "bad.sh"},
                         "#!/bin/sh\n#SBATCH --frobnicate\ntrue\n",
                         {"line 2", "--frobnicate"}},
                // An unquoted value with a space: sbatch refuses the word left over too.
                BadInput{"StrayWordOnADirectiveLine",
                         {"batch", "bad.sh"},
                         "#!/bin/sh\n#SBATCH -A <project id>\ntrue\n",
                         {"line 2", "id>"}},
                BadInput{"NoShebang", {"batch", "bad.sh"}, "echo hi\n", {"#!"}},
                BadInput{"OtherCluster",
                         {"batch", "-M", "gpu", "--wrap", "true"},
                         "",
                         {"--clusters: no cluster 'gpu' here (accepted: cohort, this cluster's "
                          "name)"}},
                BadInput{"BadDependency",
                         {"batch", "-d", "afterfoo:1", "--wrap", "true"},
                         "",
                         {"--dependency", "afterfoo", "accepted"}},
                BadInput{"DependencyOnUnknownJob",
                         {"batch", "-d", "afterok:999999", "--wrap", "true"},
                         "",
                         {"--dependency", "999999", "does not exist"}},
                BadInput{"BadArray",
                         {"batch", "--array=5-2", "--wrap", "true"},
                         "",
                         {"--array", "5-2", "accepted"}},
                BadInput{"BadBegin",
                         {"batch", "--begin", "someday", "--wrap", "true"},
                         "",
                         {"--begin", "someday", "accepted"}},
                BadInput{"AbsurdTime",
                         {"batch", "-t", "99999999-0", "--wrap", "true"},
                         "",
                         {"--time", "100 years"}},
                BadInput{"RunUnknownOption", {"run", "--bogus", "true"}, "", {"--bogus"}},
                BadInput{"RunBadTime", {"run", "-t", "soon", "true"}, "", {"--time", "soon"}}),
        [](const ::testing::TestParamInfo<BadInput>& p) { return p.param.name; });

// Under each of Slurm's names, as scripts call it: -V and --version print one line and succeed;
// an option the command does not know is one line naming it, in getopt's words, and exit 1.
TEST(SlurmCommandNames, AnswerVersionAndRefuseAnUnknownOptionInOneLine) {
    const std::string compat = std::string(COHORT_BIN_DIR) + "/../compat/";
    for (const char* name : {"sbatch", "srun", "salloc", "squeue", "scancel", "sinfo", "sacct",
                             "sreport", "scontrol", "sprio", "sshare"}) {
        SCOPED_TRACE(name);
        for (const char* version : {"-V", "--version"}) {
            CommandResult shown = run_command({compat + name, version}, "");
            EXPECT_EQ(shown.exit_code, 0) << shown.err;
            EXPECT_EQ(shown.out, "cohort " COHORT_VERSION "\n");
        }
        CommandResult refused = run_command({compat + name, "--bogus"}, "");
        EXPECT_EQ(refused.exit_code, 1);
        EXPECT_EQ(refused.out, "");
        EXPECT_NE(refused.err.find("unrecognized option '--bogus'"), std::string::npos)
                << refused.err;
        EXPECT_EQ(refused.err.find('\n'), refused.err.size() - 1)
                << "not one line: " << refused.err;
    }
}

}  // namespace
}  // namespace cohort::testing
