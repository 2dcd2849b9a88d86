// cohort share (sshare): which associations to list and how sshare lays them out.
#pragma once

#include <string>
#include <vector>

#include "common/protocol/messages.h"

namespace cohort::cli {

struct ShareOptions {
    bool all_users = false;             // -a: every user's row, not only the caller's
    std::vector<std::string> users;     // -u: these users' rows
    std::vector<std::string> accounts;  // -A: only these accounts' rows and their users'
    bool users_only = false;            // -U: no account rows
    bool long_listing = false;          // -l: NormUsage too
    bool parsable = false;              // -p: '|' after every field
    bool parsable2 = false;             // -P: '|' between fields
    bool no_header = false;             // -n
};

// The table as sshare prints it: Account (indented by depth), User, RawShares, NormShares,
// RawUsage, [NormUsage,] EffectvUsage, FairShare. `caller` is whose rows show without -a/-u.
std::string render_shares(const protocol::ShareListReply& reply,
                          const ShareOptions& options,
                          const std::string& caller);

}  // namespace cohort::cli
