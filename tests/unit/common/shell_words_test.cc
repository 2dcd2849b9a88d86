// Tests for shell-style word splitting of directive lines.
#include "common/shell_words.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

using Words = std::vector<std::string>;

Words split_ok(std::string_view line) {
    Result<Words> result = split_shell_words(line);
    EXPECT_TRUE(result.is_ok()) << line << ": " << result.status().message();
    return result.is_ok() ? *result : Words{"<error>"};
}

TEST(SplitShellWords, BlanksSeparateWords) {
    EXPECT_EQ(split_ok(""), Words{});
    EXPECT_EQ(split_ok("   \t "), Words{});
    EXPECT_EQ(split_ok("--nodes=2 --ntasks=8"), Words({"--nodes=2", "--ntasks=8"}));
    EXPECT_EQ(split_ok("  -N\t4   -n  8 "), Words({"-N", "4", "-n", "8"}));
    EXPECT_EQ(split_ok("a\nb"), Words({"a", "b"}));
}

TEST(SplitShellWords, SingleQuotesAreLiteral) {
    EXPECT_EQ(split_ok("--job-name='my job'"), Words({"--job-name=my job"}));
    EXPECT_EQ(split_ok(R"('a\"b $x # c')"), Words({R"(a\"b $x # c)"}));
    EXPECT_EQ(split_ok("'a'b'c'"), Words({"abc"}));
}

TEST(SplitShellWords, DoubleQuotesHonourFourEscapes) {
    EXPECT_EQ(split_ok(R"(--job-name="quoted name")"), Words({"--job-name=quoted name"}));
    EXPECT_EQ(split_ok(R"(--constraint="h100&nvlink")"), Words({"--constraint=h100&nvlink"}));
    EXPECT_EQ(split_ok(R"("a\"b")"), Words({R"(a"b)"}));
    EXPECT_EQ(split_ok(R"("a\\b")"), Words({R"(a\b)"}));
    EXPECT_EQ(split_ok(R"("\$HOME")"), Words({"$HOME"}));
    EXPECT_EQ(split_ok(R"("\`x\`")"), Words({"`x`"}));
    // Any other backslash stays, as in sh.
    EXPECT_EQ(split_ok(R"("a\nb\'")"), Words({R"(a\nb\')"}));
    EXPECT_EQ(split_ok(R"("it's")"), Words({"it's"}));
    EXPECT_EQ(split_ok(R"("# not a comment")"), Words({"# not a comment"}));
}

TEST(SplitShellWords, BackslashOutsideQuotesEscapesNextCharacter) {
    EXPECT_EQ(split_ok(R"(my\ job)"), Words({"my job"}));
    EXPECT_EQ(split_ok(R"(\"x\")"), Words({R"("x")"}));
    EXPECT_EQ(split_ok(R"(\#x)"), Words({"#x"}));
    EXPECT_EQ(split_ok(R"(a\\b)"), Words({R"(a\b)"}));
    EXPECT_EQ(split_ok(R"(\')"), Words({"'"}));
    EXPECT_EQ(split_ok("a\\\nb"), Words({"ab"}));    // a line continuation vanishes
    EXPECT_EQ(split_ok(R"(a\)"), Words({R"(a\)"}));  // a trailing backslash stays
}

TEST(SplitShellWords, AdjacentQuotedPartsJoinOneWord) {
    EXPECT_EQ(split_ok(R"(--x="a b"'c d'e)"), Words({"--x=a bc de"}));
}

TEST(SplitShellWords, EmptyQuotesGiveEmptyWords) {
    EXPECT_EQ(split_ok("a '' b"), Words({"a", "", "b"}));
    EXPECT_EQ(split_ok(R"("")"), Words({""}));
    EXPECT_EQ(split_ok("--comment="), Words({"--comment="}));
}

TEST(SplitShellWords, UnquotedHashAtWordStartEndsTheLine) {
    EXPECT_EQ(split_ok("--ntasks 4\t# a tab, then an inline comment"), Words({"--ntasks", "4"}));
    EXPECT_EQ(split_ok("--nodes=2 --ntasks=8     # two options on one line"),
              Words({"--nodes=2", "--ntasks=8"}));
    EXPECT_EQ(split_ok("# whole line"), Words{});
    EXPECT_EQ(split_ok("a #b 'unterminated"), Words({"a"}));
}

TEST(SplitShellWords, HashInsideAWordIsLiteral) {
    EXPECT_EQ(split_ok("a#b"), Words({"a#b"}));
    EXPECT_EQ(split_ok("--comment=run#3"), Words({"--comment=run#3"}));
    EXPECT_EQ(split_ok("''#x"), Words({"#x"}));
}

TEST(SplitShellWords, RejectsUnterminatedQuotes) {
    for (const char* line :
         {"--job-name='oops", R"(--job-name="oops)", R"("a\")", "'", "\"", R"(ok "and 'mixed)"}) {
        Result<Words> result = split_shell_words(line);
        ASSERT_FALSE(result.is_ok()) << line;
        EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
        EXPECT_EQ(result.status().message(), "unterminated quote in '" + std::string(line) + "'");
    }
}

}  // namespace
}  // namespace cohort
