// cohort share / sshare: each account's and user's shares, decayed usage and fair-share
// factor, as the controller ranks pending jobs by them now.
#include <iostream>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/share_listing.h"

namespace cohort::cli {

int cmd_share(const Args& args) {
    CLI::App app{"Fair-share standing of accounts and users (sshare)"};
    ShareOptions options;
    app.add_flag("-a,--all", options.all_users, "every user's row, not only yours");
    app.add_option("-u,--users", options.users, "these users' rows (comma separated)")
            ->delimiter(',');
    app.add_option("-A,--accounts", options.accounts, "only these accounts (comma separated)")
            ->delimiter(',');
    app.add_flag("-U,--Users", options.users_only, "users' rows only, no accounts");
    app.add_flag("-l,--long", options.long_listing, "NormUsage too");
    app.add_flag("-p,--parsable", options.parsable, "fields separated by '|', one after the last");
    app.add_flag("-P,--parsable2", options.parsable2, "fields separated by '|'");
    app.add_flag("-n,--noheader", options.no_header, "no header");
    if (int rc = parse_args(app, "share", args); rc >= 0) {
        return rc;
    }
    auto reply = ask<protocol::ShareListReply>(protocol::ShareQueryRequest{});
    if (!reply) {
        return report_error("share", reply.status());
    }
    std::cout << render_shares(*reply, options, current_user_name());
    return 0;
}

}  // namespace cohort::cli
