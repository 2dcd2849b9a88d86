// sshare's table: which rows -a, -u, -A and -U keep, and the columns as sshare prints them.
#include "cli/share_listing.h"

#include <gtest/gtest.h>

namespace cohort::cli {
namespace {

protocol::ShareListReply physics_tree() {
    protocol::ShareListReply reply;
    reply.associations = {
            {"root", "", 0, 0, 1.0, 3000.7, 1.0, 1.0, 0},
            {"physics", "", 1, 3, 0.75, 3000.7, 1.0, 1.0, 0},
            {"physics", "alice", 2, 1, 0.375, 2500.2, 0.833, 0.9165, 0.183},
            {"physics", "bob", 2, 1, 0.375, 500.5, 0.1667, 0.5833, 0.34},
            {"chem", "", 1, 1, 0.25, 0, 0, 0, 0},
    };
    return reply;
}

TEST(ShareListing, ShowsEveryAccountAndOnlyTheCallersRowByDefault) {
    const std::string out = render_shares(physics_tree(), {}, "bob");
    EXPECT_EQ(out,
              "             Account       User  RawShares  NormShares    RawUsage  EffectvUsage "
              " FairShare \n"
              "-------------------- ---------- ---------- ----------- ----------- ------------- "
              "---------- \n"
              "root                                          1.000000        3000      1.000000 "
              "           \n"
              " physics                                 3    0.750000        3000      1.000000 "
              "           \n"
              "  physics                   bob          1    0.375000         500      0.583300 "
              "  0.340000 \n"
              " chem                                    1    0.250000           0      0.000000 "
              "           \n");
}

TEST(ShareListing, AllUsersParsableAndLong) {
    ShareOptions options;
    options.all_users = true;
    options.parsable2 = true;
    options.long_listing = true;
    options.accounts = {"physics"};
    const std::string out = render_shares(physics_tree(), options, "bob");
    EXPECT_EQ(out,
              "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare\n"
              " physics||3|0.750000|3000|1.000000|1.000000|\n"
              "  physics|alice|1|0.375000|2500|0.833000|0.916500|0.183000\n"
              "  physics|bob|1|0.375000|500|0.166700|0.583300|0.340000\n");
}

TEST(ShareListing, UsersOnlyNamedUsersNoHeader) {
    ShareOptions options;
    options.users = {"alice"};
    options.users_only = true;
    options.no_header = true;
    options.parsable = true;
    EXPECT_EQ(render_shares(physics_tree(), options, "bob"),
              "  physics|alice|1|0.375000|2500|0.916500|0.183000|\n");
}

}  // namespace
}  // namespace cohort::cli
