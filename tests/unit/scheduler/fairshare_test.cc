// Fair-share against Slurm's worked examples.
#include "scheduler/priority/fairshare.h"

#include <gtest/gtest.h>

namespace cohort::sched {
namespace {

// Slurm's classic fair-share example: root -> A(40){B(30): user1, C(10): user2, user3},
// D(60){E(25): user4, F(35): user5}; normalized usage user1 0.2, user2 0.25, user4 0.25
// (of a total of 1).
std::vector<Association> slurm_example() {
    return {
            {"root", -1, 1, 1.0, false}, {"A", 0, 40, 0, false},      {"B", 1, 30, 0, false},
            {"C", 1, 10, 0, false},      {"D", 0, 60, 0, false},      {"E", 4, 25, 0, false},
            {"F", 4, 35, 0, false},      {"user1", 2, 1, 0.20, true}, {"user2", 3, 1, 0.25, true},
            {"user3", 3, 1, 0.00, true}, {"user4", 5, 1, 0.25, true}, {"user5", 6, 1, 0.00, true},
    };
}

double factor_of(const std::vector<UserFactor>& factors, int association) {
    for (const auto& f : factors) {
        if (f.association == association) {
            return f.factor;
        }
    }
    return -1;
}

TEST(ClassicFairshare, MatchesSlurmsWorkedExample) {
    auto tree = slurm_example();
    ASSERT_TRUE(check_tree(tree));
    auto factors = classic_fairshare(tree);
    ASSERT_EQ(factors.size(), 5u);
    EXPECT_NEAR(factor_of(factors, 7), 0.408479, 1e-6);
    EXPECT_NEAR(factor_of(factors, 8), 0.022097, 1e-6);
    EXPECT_NEAR(factor_of(factors, 9), 0.125000, 1e-6);
    EXPECT_NEAR(factor_of(factors, 10), 0.500000, 1e-6);
    EXPECT_NEAR(factor_of(factors, 11), 0.749154, 1e-6);
}

TEST(FairTree, AccountsWithMoreShareThanUseRankAllTheirUsersFirst) {
    auto factors = fair_tree(slurm_example());
    ASSERT_EQ(factors.size(), 5u);
    // D (level 0.6/0.357) ranks above A (0.4/0.643); in D, F (no usage) above E; in A,
    // B (0.75/0.444) above C (0.25/0.556); in C, user3 (no usage) above user2.
    EXPECT_EQ(factors[0].association, 11);  // user5
    EXPECT_DOUBLE_EQ(factors[0].factor, 1.0);
    EXPECT_EQ(factors[1].association, 10);  // user4
    EXPECT_EQ(factors[2].association, 7);   // user1
    EXPECT_EQ(factors[3].association, 9);   // user3
    EXPECT_EQ(factors[4].association, 8);   // user2
    EXPECT_DOUBLE_EQ(factors[4].factor, 0.2);
}

TEST(FairTree, EqualUsersShareARank) {
    std::vector<Association> tree = {{"root", -1, 1, 0, false},
                                     {"acct", 0, 1, 0, false},
                                     {"a", 1, 1, 0, true},
                                     {"b", 1, 1, 0, true}};
    auto factors = fair_tree(tree);
    ASSERT_EQ(factors.size(), 2u);
    EXPECT_DOUBLE_EQ(factors[0].factor, 1.0);
    EXPECT_DOUBLE_EQ(factors[1].factor, 1.0);
}

TEST(FairTree, DecayedUsageReordersTwoUsers) {
    // Alice used more than Bob a while ago; after her usage decays below his, she leads.
    std::vector<Association> tree = {{"root", -1, 1, 0, false},
                                     {"acct", 0, 1, 0, false},
                                     {"alice", 1, 1, 1000, true},
                                     {"bob", 1, 1, 300, true}};
    EXPECT_EQ(fair_tree(tree)[0].association, 3);         // bob first
    const double d = decay_factor(7 * 86400, 7 * 86400);  // one half-life
    EXPECT_DOUBLE_EQ(d, 0.5);
    for (int week = 0; week < 2; ++week) {
        tree[2].usage *= d;  // alice stops using the machine
    }
    tree[3].usage += 200;                          // bob keeps going
    EXPECT_EQ(fair_tree(tree)[0].association, 2);  // 250 < 500: alice first
}

TEST(FairshareTree, BadTreesAreRejectedWithTheOffendingValue) {
    std::vector<Association> tree = {{"root", -1, 1, 0, false}, {"x", 3, 1, 0, true}};
    EXPECT_NE(check_tree(tree).message().find("parent index 3"), std::string::npos);
    tree[1].parent = 0;
    tree[1].shares = 0;
    EXPECT_NE(check_tree(tree).message().find("shares 0"), std::string::npos);
}

TEST(Decay, NoHalfLifeMeansNoDecay) {
    EXPECT_DOUBLE_EQ(decay_factor(300, 0), 1.0);
    EXPECT_NEAR(decay_factor(300, 7 * 86400), 0.999656, 1e-6);
}

}  // namespace
}  // namespace cohort::sched
