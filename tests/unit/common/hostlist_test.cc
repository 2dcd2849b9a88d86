// Tests for expanding and compressing hostlist expressions.
#include "common/hostlist.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand_ok(std::string_view expr) {
    Result<Hosts> result = expand_hostlist(expr);
    EXPECT_TRUE(result.is_ok()) << expr << ": " << result.status().message();
    return result.is_ok() ? *result : Hosts{};
}

std::string expand_error(std::string_view expr) {
    Result<Hosts> result = expand_hostlist(expr);
    EXPECT_FALSE(result.is_ok()) << "'" << expr << "' was accepted";
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    return result.status().message();
}

TEST(ExpandHostlist, PlainNames) {
    EXPECT_EQ(expand_ok("alpha"), Hosts({"alpha"}));
    EXPECT_EQ(expand_ok("alpha,beta,gamma"), Hosts({"alpha", "beta", "gamma"}));
    EXPECT_EQ(expand_ok("ip-26-0-159-215"), Hosts({"ip-26-0-159-215"}));
    EXPECT_EQ(expand_ok("node1"), Hosts({"node1"}));
}

TEST(ExpandHostlist, SimpleRangesAndLists) {
    EXPECT_EQ(expand_ok("c[1-2]"), Hosts({"c1", "c2"}));
    EXPECT_EQ(expand_ok("linux[1,2]"), Hosts({"linux1", "linux2"}));
    EXPECT_EQ(expand_ok("n[3]"), Hosts({"n3"}));
    EXPECT_EQ(expand_ok("n[8-11]"), Hosts({"n8", "n9", "n10", "n11"}));
    EXPECT_EQ(expand_ok("n[5-5]"), Hosts({"n5"}));
}

TEST(ExpandHostlist, ZeroPaddingFollowsWrittenWidth) {
    EXPECT_EQ(expand_ok("node[001-004,7]"),
              Hosts({"node001", "node002", "node003", "node004", "node7"}));
    EXPECT_EQ(expand_ok("gpu[01-04,07]"), Hosts({"gpu01", "gpu02", "gpu03", "gpu04", "gpu07"}));
    EXPECT_EQ(expand_ok("n[098-101]"), Hosts({"n098", "n099", "n100", "n101"}));
    EXPECT_EQ(expand_ok("n[09-10]"), Hosts({"n09", "n10"}));
    EXPECT_EQ(expand_ok("n[0-1]"), Hosts({"n0", "n1"}));
    EXPECT_EQ(expand_ok("n[001-3]"), Hosts({"n001", "n002", "n003"}));
}

TEST(ExpandHostlist, CartesianProductLeftmostSlowest) {
    EXPECT_EQ(expand_ok("gpu-[1-2]-[0-3]"), Hosts({"gpu-1-0", "gpu-1-1", "gpu-1-2", "gpu-1-3",
                                                   "gpu-2-0", "gpu-2-1", "gpu-2-2", "gpu-2-3"}));
    EXPECT_EQ(expand_ok("r[1,3]n[01-02]"), Hosts({"r1n01", "r1n02", "r3n01", "r3n02"}));
}

TEST(ExpandHostlist, SuffixAfterBracket) {
    EXPECT_EQ(expand_ok("n[1-2].ib"), Hosts({"n1.ib", "n2.ib"}));
    EXPECT_EQ(expand_ok("[1-2]x"), Hosts({"1x", "2x"}));
}

TEST(ExpandHostlist, MixedLists) {
    EXPECT_EQ(expand_ok("nodeA,nodeB[001,003],nodeC"),
              Hosts({"nodeA", "nodeB001", "nodeB003", "nodeC"}));
    EXPECT_EQ(expand_ok("ml-16-node-[001-002,004],ml-17-node-[001-003]"),
              Hosts({"ml-16-node-001", "ml-16-node-002", "ml-16-node-004", "ml-17-node-001",
                     "ml-17-node-002", "ml-17-node-003"}));
}

TEST(ExpandHostlist, KeepsOrderAndDuplicates) {
    EXPECT_EQ(expand_ok("b,a,n[3,1,2],a"), Hosts({"b", "a", "n3", "n1", "n2", "a"}));
}

TEST(ExpandHostlist, RejectsEmptyTokens) {
    const std::string why = "empty host name (a doubled, leading or trailing comma?)";
    EXPECT_EQ(expand_error(""), "invalid hostlist '': " + why);
    EXPECT_EQ(expand_error("a,,b"), "invalid hostlist 'a,,b': " + why);
    EXPECT_EQ(expand_error(",a"), "invalid hostlist ',a': " + why);
    EXPECT_EQ(expand_error("a,"), "invalid hostlist 'a,': " + why);
    EXPECT_EQ(expand_error(","), "invalid hostlist ',': " + why);
}

TEST(ExpandHostlist, RejectsUnbalancedAndNestedBrackets) {
    EXPECT_EQ(expand_error("node[1-3"),
              "invalid hostlist 'node[1-3': unbalanced '[' in 'node[1-3'");
    EXPECT_EQ(expand_error("a,node[1,2"),
              "invalid hostlist 'a,node[1,2': unbalanced '[' in 'node[1,2'");
    EXPECT_EQ(expand_error("node1-3]"),
              "invalid hostlist 'node1-3]': unbalanced ']' in 'node1-3]'");
    EXPECT_EQ(expand_error("a,n[1]],b"), "invalid hostlist 'a,n[1]],b': unbalanced ']' in 'n[1]]'");
    EXPECT_EQ(expand_error("n[[1]]"), "invalid hostlist 'n[[1]]': nested '[' in 'n[[1]]'");
    EXPECT_EQ(expand_error("["), "invalid hostlist '[': unbalanced '[' in '['");
}

TEST(ExpandHostlist, RejectsReversedRange) {
    EXPECT_EQ(expand_error("node[5-2]"),
              "invalid hostlist 'node[5-2]': reversed range '5-2' in 'node[5-2]' (write the lower "
              "number first)");
    EXPECT_EQ(expand_error("n[1,10-09]"),
              "invalid hostlist 'n[1,10-09]': reversed range '10-09' in 'n[1,10-09]' (write the "
              "lower number first)");
}

TEST(ExpandHostlist, RejectsBadGroupItems) {
    EXPECT_EQ(expand_error("node[]"), "invalid hostlist 'node[]': empty brackets in 'node[]'");
    EXPECT_EQ(expand_error("node[1-x]"),
              "invalid hostlist 'node[1-x]': '1-x' in 'node[1-x]' is not a number or an N-M "
              "range");
    for (const char* expr : {"n[a]", "n[1,]", "n[,1]", "n[1,,2]", "n[-1]", "n[1-]", "n[1-2-3]",
                             "n[ 1]", "n[+1]", "n[1:4]", "n[1234567890123456789]", "[1-2][a]"}) {
        std::string message = expand_error(expr);
        EXPECT_NE(message.find("is not a number or an N-M range"), std::string::npos)
                << expr << ": " << message;
        EXPECT_NE(message.find(expr), std::string::npos) << message;
    }
}

TEST(ExpandHostlist, RejectsBlanksAndControlCharacters) {
    EXPECT_EQ(expand_error("a b"), "invalid hostlist 'a b': blank or control character in 'a b'");
    EXPECT_EQ(expand_error("a, b"), "invalid hostlist 'a, b': blank or control character in ' b'");
    EXPECT_FALSE(expand_hostlist("a\tb").is_ok());
    EXPECT_FALSE(expand_hostlist("n[1-2] ").is_ok());
}

TEST(ExpandHostlist, CapsTotalExpansion) {
    EXPECT_EQ(expand_ok("n[1-1000000]").size(), 1'000'000U);
    const std::string why = "expands to more than 1000000 hosts";
    EXPECT_EQ(expand_error("n[0-1000000]"), "invalid hostlist 'n[0-1000000]': " + why);
    EXPECT_EQ(expand_error("n[0-999999999999999999]"),
              "invalid hostlist 'n[0-999999999999999999]': " + why);
    EXPECT_EQ(expand_error("n[1-1000]-[1-1001]"), "invalid hostlist 'n[1-1000]-[1-1001]': " + why);
    EXPECT_EQ(expand_error("a[1-600000],b[1-400001]"),
              "invalid hostlist 'a[1-600000],b[1-400001]': " + why);
    // A product that overflows size_t is still caught.
    EXPECT_FALSE(expand_hostlist("n[0-999999999999999999][0-999999999999999999][0-9]").is_ok());
}

TEST(CompressHostlist, EmptyAndSingle) {
    EXPECT_EQ(compress_hostlist({}), "");
    EXPECT_EQ(compress_hostlist({"node1"}), "node1");
    EXPECT_EQ(compress_hostlist({"alpha"}), "alpha");
}

TEST(CompressHostlist, MergesRuns) {
    EXPECT_EQ(compress_hostlist({"node1", "node2", "node3", "node4"}), "node[1-4]");
    EXPECT_EQ(compress_hostlist({"node1", "node2", "node3", "node4", "node7"}), "node[1-4,7]");
    EXPECT_EQ(compress_hostlist({"n1", "n3"}), "n[1,3]");
    EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n[9-11]");
}

TEST(CompressHostlist, KeepsPaddingWidth) {
    EXPECT_EQ(compress_hostlist({"node001", "node002", "node003", "node004", "node007"}),
              "node[001-004,007]");
    EXPECT_EQ(compress_hostlist({"n09", "n10"}), "n[09-10]");
    EXPECT_EQ(compress_hostlist({"n10", "n09"}), "n[10,09]");
    EXPECT_EQ(compress_hostlist({"n099", "n100", "n1000"}), "n[099-100,1000]");
    // node1 and node01 cannot share one width.
    EXPECT_EQ(compress_hostlist({"node1", "node01"}), "node1,node01");
    EXPECT_EQ(compress_hostlist({"node01", "node1", "node2"}), "node01,node[1-2]");
}

TEST(CompressHostlist, KeepsInputOrderAndOnlyMergesAdjacentEntries) {
    EXPECT_EQ(compress_hostlist({"n3", "n1", "n2"}), "n[3,1-2]");
    EXPECT_EQ(compress_hostlist({"a1", "b1", "a2"}), "a1,b1,a2");
    EXPECT_EQ(compress_hostlist({"alpha", "n1", "n2", "beta", "n3"}), "alpha,n[1-2],beta,n3");
    EXPECT_EQ(compress_hostlist({"n1", "n1"}), "n[1,1]");
}

TEST(CompressHostlist, PrefixWithDigits) {
    EXPECT_EQ(compress_hostlist(expand_ok("gpu-[1-2]-[0-3]")), "gpu-1-[0-3],gpu-2-[0-3]");
    EXPECT_EQ(compress_hostlist(expand_ok("ml-16-node-[001-002,004],ml-17-node-[001-003]")),
              "ml-16-node-[001-002,004],ml-17-node-[001-003]");
}

TEST(CompressHostlist, NamesWithoutTrailingDigitsStayPlain) {
    EXPECT_EQ(compress_hostlist({"n1.ib", "n2.ib"}), "n1.ib,n2.ib");
    EXPECT_EQ(compress_hostlist({"nodeA", "nodeB"}), "nodeA,nodeB");
}

TEST(CompressHostlist, RoundTripsThroughExpand) {
    for (const char* expr :
         {"node[001-004,7]", "gpu-[1-2]-[0-3]", "n[1-2].ib", "a,b,c", "nodeA,nodeB[001,003],nodeC",
          "n[9-11,13,098-101]", "n[5,3,4,1]", "x1,x01,x001,x0001", "[1-3]"}) {
        Hosts hosts = expand_ok(expr);
        std::string compressed = compress_hostlist(hosts);
        EXPECT_EQ(expand_ok(compressed), hosts) << expr << " -> " << compressed;
    }
}

}  // namespace
}  // namespace cohort
