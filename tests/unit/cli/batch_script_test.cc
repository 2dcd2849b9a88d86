// Tests for reading #SBATCH / #COHORT directives from batch scripts.
#include "cli/batch_script.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/size_spec.h"
#include "common/time_spec.h"

namespace cohort::cli {
namespace {

using Words = std::vector<std::string>;

// Relative to the repo root, where the tests run.
const std::filesystem::path kExamples = "../shared/data/sbatch-examples";

std::vector<DirectiveLine> read_ok(std::string_view script) {
    Result<std::vector<DirectiveLine>> result = read_batch_directives(script);
    EXPECT_TRUE(result.is_ok()) << result.status().message();
    return result.is_ok() ? *result : std::vector<DirectiveLine>{};
}

std::string read_error(std::string_view script) {
    Result<std::vector<DirectiveLine>> result = read_batch_directives(script);
    EXPECT_FALSE(result.is_ok()) << "accepted: " << script;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    return result.status().message();
}

std::vector<Words> words_of(const std::vector<DirectiveLine>& lines) {
    std::vector<Words> words;
    for (const DirectiveLine& line : lines) {
        words.push_back(line.words);
    }
    return words;
}

std::vector<int> line_numbers_of(const std::vector<DirectiveLine>& lines) {
    std::vector<int> numbers;
    for (const DirectiveLine& line : lines) {
        numbers.push_back(line.line_number);
    }
    return numbers;
}

TEST(ReadBatchDirectives, ReadsDirectivesWithLineNumbersAndText) {
    auto lines = read_ok("#!/bin/bash\n#SBATCH --job-name=hello\n#SBATCH -N 2 -n 4\necho hi\n");
    ASSERT_EQ(lines.size(), 2U);
    EXPECT_EQ(lines[0].line_number, 2);
    EXPECT_EQ(lines[0].text, "#SBATCH --job-name=hello");
    EXPECT_EQ(lines[0].words, Words({"--job-name=hello"}));
    EXPECT_EQ(lines[1].line_number, 3);
    EXPECT_EQ(lines[1].words, Words({"-N", "2", "-n", "4"}));
}

TEST(ReadBatchDirectives, AcceptsCohortPrefix) {
    auto lines = read_ok("#!/bin/sh\n#COHORT --time=5\n#SBATCH\t--ntasks=1\n");
    EXPECT_EQ(words_of(lines), std::vector<Words>({{"--time=5"}, {"--ntasks=1"}}));
}

TEST(ReadBatchDirectives, BarePrefixIsAnEmptyDirective) {
    auto lines = read_ok("#!/bin/sh\n#SBATCH\n#SBATCH   \n#SBATCH # only a comment\n");
    EXPECT_EQ(words_of(lines), std::vector<Words>({{}, {}, {}}));
}

TEST(ReadBatchDirectives, LookalikesAreComments) {
    auto lines = read_ok(
            "#!/bin/sh\n##SBATCH --a\n# SBATCH --b\n#SBATCHX --c\n #SBATCH --d\n#sbatch --e\n"
            "#SLURM --f\n#COHORTS --g\n#SBATCH --real\n");
    EXPECT_EQ(words_of(lines), std::vector<Words>({{"--real"}}));
    EXPECT_EQ(line_numbers_of(lines), std::vector<int>({9}));
}

TEST(ReadBatchDirectives, BlankLinesAndCommentsDoNotStopTheScan) {
    auto lines = read_ok("#!/bin/sh\n\n   \n# note\n  # indented note\n#SBATCH -n 1\n");
    EXPECT_EQ(line_numbers_of(lines), std::vector<int>({6}));
}

TEST(ReadBatchDirectives, FirstCommandStopsTheScan) {
    auto lines = read_ok("#!/bin/sh\n#SBATCH -n 1\n  echo start\n#SBATCH -N 64\n");
    EXPECT_EQ(words_of(lines), std::vector<Words>({{"-n", "1"}}));
}

TEST(ReadBatchDirectives, UnterminatedQuoteNamesTheLine) {
    EXPECT_EQ(read_error("#!/bin/sh\n#SBATCH -n 1\n#SBATCH --job-name=\"oops\n"),
              "line 3: unterminated quote in '--job-name=\"oops'");
}

TEST(ReadBatchDirectives, BrokenQuotesAfterTheScanAreIgnored) {
    EXPECT_TRUE(read_batch_directives("#!/bin/sh\necho 'x\n#SBATCH --job-name='oops\n").is_ok());
}

TEST(ReadBatchDirectives, LastLineWithoutNewline) {
    EXPECT_EQ(words_of(read_ok("#!/bin/sh\n#SBATCH -n 1")), std::vector<Words>({{"-n", "1"}}));
    EXPECT_TRUE(read_ok("#!/bin/sh").empty());
}

TEST(ReadBatchDirectives, RejectsEmptyAndBlankScripts) {
    EXPECT_EQ(read_error(""), "script is empty");
    EXPECT_EQ(read_error(" \n\t\n"), "script is empty");
}

TEST(ReadBatchDirectives, RejectsMissingInterpreterLine) {
    const std::string message =
            "script does not start with '#!' (a batch script needs an interpreter line such as "
            "#!/bin/bash)";
    EXPECT_EQ(read_error("echo hi\n"), message);
    EXPECT_EQ(read_error("# tool\n#!/bin/bash\n"), message);
    EXPECT_EQ(read_error(" #!/bin/bash\n"), message);
    EXPECT_EQ(read_error("\n#!/bin/bash\n"), message);
}

TEST(ReadBatchDirectives, RejectsNulBytes) {
    using namespace std::string_literals;
    EXPECT_EQ(read_error("#!/bin/sh\n#SBATCH -n 1\necho \0x\n"s),
              "script contains a NUL byte on line 3 (a batch script must be text)");
}

TEST(ReadBatchDirectives, RejectsCrlfLineEnds) {
    EXPECT_EQ(read_error("#!/bin/sh\r\n#SBATCH -n 1\r\n"),
              "script has DOS line breaks (\\r\\n), first on line 1 (convert it with dos2unix)");
    EXPECT_EQ(read_error("#!/bin/sh\n#SBATCH -n 1\necho x\r\n"),
              "script has DOS line breaks (\\r\\n), first on line 3 (convert it with dos2unix)");
}

TEST(WrapCommandScript, BuildsShScript) {
    EXPECT_EQ(wrap_command_script("hostname"),
              "#!/bin/sh\n# This script was created by cohort --wrap.\n\nhostname\n");
    auto lines = read_ok(wrap_command_script("srun -n 2 ./a.out"));
    EXPECT_TRUE(lines.empty());
}

// The shared example scripts, checked against EXPECTED.md.
class SbatchExamples : public testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::is_directory(kExamples)) {
            GTEST_SKIP() << "shared/data/sbatch-examples not found at " << kExamples
                         << " (run the tests from the repo root, beside ../shared)";
        }
    }

    static std::string load(const std::string& name) {
        std::ifstream in(kExamples / name, std::ios::binary);
        EXPECT_TRUE(in.good()) << "cannot read " << (kExamples / name);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    }

    static std::vector<Words> words(const std::string& name) {
        return words_of(read_ok(load(name)));
    }
};

TEST_F(SbatchExamples, Basic) {
    EXPECT_EQ(words("01-basic.sh"), std::vector<Words>({{"--job-name=hello"},
                                                        {"--ntasks=1"},
                                                        {"--time=10"},
                                                        {"--output=hello-%j.out"}}));
}

TEST_F(SbatchExamples, DdpMultinodeStopsBeforeExport) {
    EXPECT_EQ(words("02-ddp-multinode.sh"), std::vector<Words>({{"-J", "ddp-train"},
                                                                {"-N", "4"},
                                                                {"--ntasks-per-node=8"},
                                                                {"--cpus-per-task=12"},
                                                                {"--gres=gpu:8"},
                                                                {"--mem=0"},
                                                                {"-t", "2-00:00:00"},
                                                                {"--exclusive"},
                                                                {"-o", "logs/%x-%j.out"},
                                                                {"-e", "logs/%x-%j.err"}}));
}

TEST_F(SbatchExamples, ArrayThrottle) {
    EXPECT_EQ(words("03-array-throttle.sh"), std::vector<Words>({{"--array=0-99%10"},
                                                                 {"--time=00:30:00"},
                                                                 {"--mem-per-cpu=2G"},
                                                                 {"--cpus-per-task=2"},
                                                                 {"--output=sweep_%A_%a.out"}}));
}

TEST_F(SbatchExamples, TwoOptionsOnOneLineAndQuotesRemoved) {
    std::vector<Words> got = words("04-gpus-per-task.sh");
    ASSERT_EQ(got.size(), 7U);
    EXPECT_EQ(got[0], Words({"--nodes=2", "--ntasks=8"}));
    EXPECT_EQ(got[6], Words({"--constraint=h100&nvlink"}));
}

TEST_F(SbatchExamples, SignalRequeue) {
    std::vector<Words> got = words("05-signal-requeue.sh");
    ASSERT_EQ(got.size(), 7U);
    EXPECT_EQ(got[3], Words({"--signal=B:USR1@120"}));
    EXPECT_EQ(got[4], Words({"--requeue"}));
}

TEST_F(SbatchExamples, Dependency) {
    EXPECT_EQ(words("06-dependency.sh"),
              std::vector<Words>({{"--dependency=afterok:1001:1002,afterany:1003"},
                                  {"--kill-on-invalid-dep=yes"},
                                  {"--time=15:00"},
                                  {"--ntasks=1"}}));
}

TEST_F(SbatchExamples, CommentsAndStop) {
    auto lines = read_ok(load("07-comments-and-stop.sh"));
    EXPECT_EQ(
            words_of(lines),
            std::vector<Words>({{"--job-name=quoted name"}, {"--ntasks", "4"}, {"--parti=debug"}}));
    EXPECT_EQ(line_numbers_of(lines), std::vector<int>({3, 6, 7}));
}

TEST_F(SbatchExamples, HetjobSeparatorIsAWord) {
    std::vector<Words> got = words("08-hetjob.sh");
    ASSERT_EQ(got.size(), 5U);
    EXPECT_EQ(got[1], Words({"--nodes=1", "--ntasks=1", "--cpus-per-task=8", "--mem=32G"}));
    EXPECT_EQ(got[2], Words({"hetjob"}));
}

TEST_F(SbatchExamples, MpiClassicAndBeginNodelist) {
    EXPECT_EQ(words("09-mpi-classic.sh").size(), 8U);
    std::vector<Words> got = words("10-begin-nodelist.sh");
    ASSERT_EQ(got.size(), 6U);
    EXPECT_EQ(got[1], Words({"--nodelist=gpu[01-04,07]"}));
    EXPECT_EQ(got[4], Words({"-D", "/scratch/run42"}));
}

TEST_F(SbatchExamples, UnknownOptionIsLeftToTheOptionParser) {
    EXPECT_EQ(words("11-bad-unknown-option.sh"),
              std::vector<Words>({{"--ntasks=2"}, {"--gpus-per-nod=2"}, {"--frobnicate=yes"}}));
}

TEST_F(SbatchExamples, NoShebangRejected) {
    EXPECT_EQ(read_error(load("12-bad-no-shebang.sh")),
              "script does not start with '#!' (a batch script needs an interpreter line such as "
              "#!/bin/bash)");
}

TEST_F(SbatchExamples, BadValuesReadButRejectedByValueParsers) {
    auto lines = read_ok(load("13-bad-values.sh"));
    ASSERT_EQ(lines.size(), 3U);
    EXPECT_EQ(lines[0].words, Words({"--time=1:99:99:99"}));
    EXPECT_EQ(parse_time_limit("1:99:99:99").status().with_context("--time").message(),
              "--time: invalid time '1:99:99:99' (accepted: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, "
              "INFINITE or UNLIMITED)");
    EXPECT_FALSE(parse_memory_mib("12Q").is_ok());
}

}  // namespace
}  // namespace cohort::cli
