// -C/--constraint expressions: syntax, which nodes match, matching-OR alternatives.
#include "common/node_features.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

FeatureExpr parsed_expr(const std::string& text) {
    auto expr = parse_feature_expr("--constraint", text);
    EXPECT_TRUE(expr) << expr.status().message();
    return expr ? *expr : FeatureExpr{};
}

TEST(NodeFeatures, AndBindsTighterThanOr) {
    const FeatureExpr expr = parsed_expr("a100&ib|h100");
    EXPECT_TRUE(node_matches(expr, {"a100", "ib"}));
    EXPECT_TRUE(node_matches(expr, {"h100"}));
    EXPECT_FALSE(node_matches(expr, {"a100"}));
    EXPECT_FALSE(node_matches(expr, {"ib"}));
}

TEST(NodeFeatures, ParenthesesGroup) {
    const FeatureExpr expr = parsed_expr("(a100|h100)&ib");
    EXPECT_TRUE(node_matches(expr, {"h100", "ib"}));
    EXPECT_FALSE(node_matches(expr, {"h100"}));
}

TEST(NodeFeatures, MatchingOrGivesItsAlternativesInOrder) {
    const FeatureExpr expr = parsed_expr("[rack1|rack2|rack3]");
    EXPECT_EQ(expr.kind, FeatureExpr::Kind::kMatchingOr);
    const std::vector<FeatureExpr> alternatives = matching_alternatives(expr);
    ASSERT_EQ(alternatives.size(), 3u);
    EXPECT_EQ(alternatives[1].name, "rack2");
    EXPECT_TRUE(node_matches(expr, {"rack3"}));
    EXPECT_EQ(matching_alternatives(parsed_expr("a&b")).size(), 1u);
}

TEST(NodeFeatures, CountsAndNamesWithPunctuationParse) {
    const FeatureExpr expr = parsed_expr("gpu_a100.80gb*2&cpu-gen:4");
    EXPECT_EQ(feature_names(expr), (std::vector<std::string>{"gpu_a100.80gb", "cpu-gen:4"}));
    EXPECT_EQ(expr.operands.front().count, 2u);
    EXPECT_TRUE(node_matches(expr, {"cpu-gen:4", "gpu_a100.80gb"}));
}

TEST(NodeFeatures, BadExpressionsNameWhatIsWrong) {
    const std::vector<std::pair<std::string, std::string>> cases = {
            {"", "a feature is missing at the end"},
            {"a&", "a feature is missing at the end"},
            {"a||b", "a feature is missing before '|'"},
            {"(a|b", "'(' is not closed"},
            {"[a|b", "'[' is not closed"},
            {"a)", "unexpected ')'"},
            {"a*0", "'*' must be followed by a node count of 1 or more"},
            {"a b", "unexpected ' '"},
    };
    for (const auto& [text, what] : cases) {
        auto expr = parse_feature_expr("--constraint", text);
        ASSERT_FALSE(expr) << text;
        EXPECT_EQ(expr.status().message(),
                  "--constraint: invalid feature specification '" + text + "': " + what
                          + " (accepted: features joined by & (and) or | (or), grouped with ( ) "
                            "or [ ] (all nodes alike), each optionally *N, e.g. a100&ib or "
                            "[rack1|rack2])");
    }
}

}  // namespace
}  // namespace cohort
