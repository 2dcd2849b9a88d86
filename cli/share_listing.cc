// sshare's layout of the fair-share tree.
#include "cli/share_listing.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cohort::cli {
namespace {

struct Column {
    const char* title;
    int width;  // negative: values left-aligned (titles are always right-aligned)
};

bool listed(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

bool shown(const protocol::ShareEntry& row, const ShareOptions& o, const std::string& caller) {
    if (!o.accounts.empty() && !listed(o.accounts, row.account)) {
        return false;
    }
    if (row.user.empty()) {
        return !o.users_only;
    }
    if (!o.users.empty()) {
        return listed(o.users, row.user);
    }
    return o.all_users || row.user == caller;
}

}  // namespace

std::string render_shares(const protocol::ShareListReply& reply,
                          const ShareOptions& o,
                          const std::string& caller) {
    std::vector<Column> columns = {{"Account", -20},
                                   {"User", 10},
                                   {"RawShares", 10},
                                   {"NormShares", 11},
                                   {"RawUsage", 11}};
    if (o.long_listing) {
        columns.push_back({"NormUsage", 11});
    }
    columns.push_back({"EffectvUsage", 13});
    columns.push_back({"FairShare", 10});
    const bool parsable = o.parsable || o.parsable2;
    auto line = [&](const std::vector<std::string>& cells, bool titles) {
        std::string out;
        for (size_t i = 0; i < cells.size(); ++i) {
            const int width = columns[i].width;
            if (parsable) {
                out += cells[i] + (o.parsable || i + 1 < cells.size() ? "|" : "");
            } else if (width < 0 && !titles) {
                out += fmt::format("{:<{}} ", cells[i].substr(0, -width), -width);
            } else {
                out += fmt::format("{:>{}} ", cells[i].substr(0, std::abs(width)), std::abs(width));
            }
        }
        return out + "\n";
    };
    std::string out;
    if (!o.no_header) {
        std::vector<std::string> titles, rules;
        for (const Column& column : columns) {
            titles.emplace_back(column.title);
            rules.emplace_back(static_cast<size_t>(std::abs(column.width)), '-');
        }
        out += line(titles, true);
        if (!parsable) {
            out += line(rules, true);
        }
    }
    for (const protocol::ShareEntry& row : reply.associations) {
        if (!shown(row, o, caller)) {
            continue;
        }
        const bool root = row.depth == 0;
        std::vector<std::string> cells = {
                std::string(static_cast<size_t>(row.depth), ' ') + row.account, row.user,
                root ? "" : std::to_string(row.raw_shares), fmt::format("{:.6f}", row.norm_shares),
                fmt::format("{:.0f}", std::floor(row.raw_usage))};
        if (o.long_listing) {
            cells.push_back(fmt::format("{:.6f}", row.norm_usage));
        }
        cells.push_back(fmt::format("{:.6f}", row.effective_usage));
        cells.push_back(row.user.empty() ? "" : fmt::format("{:.6f}", row.fairshare));
        out += line(cells, false);
    }
    return out;
}

}  // namespace cohort::cli
