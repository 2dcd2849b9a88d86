// Classic fair-share and Fair Tree.
#include "scheduler/priority/fairshare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <fmt/format.h>

namespace cohort::sched {
namespace {

struct Tree {
    std::vector<std::vector<int>> children;
    std::vector<double> usage;  // users' own, accounts' summed
};

Tree build(const std::vector<Association>& a) {
    Tree tree;
    tree.children.resize(a.size());
    tree.usage.resize(a.size(), 0);
    for (size_t i = 1; i < a.size(); ++i) {
        tree.children[static_cast<size_t>(a[i].parent)].push_back(static_cast<int>(i));
    }
    // Parents come before children, so a reverse walk sums usage upwards.
    for (size_t i = a.size(); i-- > 0;) {
        if (a[i].is_user) {
            tree.usage[i] = a[i].usage;
        }
        if (i > 0) {
            tree.usage[static_cast<size_t>(a[i].parent)] += tree.usage[i];
        }
    }
    return tree;
}

int64_t sibling_shares(const std::vector<Association>& a, const Tree& tree, int node) {
    int64_t total = 0;
    for (int sibling : tree.children[static_cast<size_t>(a[static_cast<size_t>(node)].parent)]) {
        total += a[static_cast<size_t>(sibling)].shares;
    }
    return total;
}

}  // namespace

Status check_tree(const std::vector<Association>& associations) {
    if (associations.empty() || associations[0].parent != -1) {
        return Status::invalid("fair-share tree: the first association must be the root");
    }
    for (size_t i = 1; i < associations.size(); ++i) {
        const Association& node = associations[i];
        if (node.parent < 0 || static_cast<size_t>(node.parent) >= i) {
            return Status::invalid(
                    fmt::format("fair-share tree: association '{}' has parent "
                                "index {} (accepted: an account listed before it)",
                                node.name, node.parent));
        }
        if (node.shares <= 0) {
            return Status::invalid(
                    fmt::format("fair-share tree: association '{}' has shares {} "
                                "(accepted: a whole number >= 1)",
                                node.name, node.shares));
        }
    }
    return Status::ok();
}

std::vector<Standing> standings(const std::vector<Association>& a) {
    Tree tree = build(a);
    const double total_usage = std::max(tree.usage[0], a[0].usage);
    std::vector<Standing> out(a.size());
    out[0] = {1.0, total_usage, total_usage > 0 ? 1.0 : 0.0, 1.0};
    for (size_t i = 1; i < a.size(); ++i) {
        const size_t parent = static_cast<size_t>(a[i].parent);
        const double fraction = static_cast<double>(a[i].shares)
                                / static_cast<double>(sibling_shares(a, tree, static_cast<int>(i)));
        Standing& s = out[i];
        s.norm_shares = out[parent].norm_shares * fraction;
        s.usage = tree.usage[i];
        s.norm_usage = total_usage > 0 ? tree.usage[i] / total_usage : 0.0;
        s.effective_usage =
                parent == 0
                        ? s.norm_usage
                        : s.norm_usage + (out[parent].effective_usage - s.norm_usage) * fraction;
    }
    return out;
}

std::vector<UserFactor> classic_fairshare(const std::vector<Association>& a) {
    const std::vector<Standing> standing = standings(a);
    std::vector<UserFactor> out;
    for (size_t i = 1; i < a.size(); ++i) {
        if (a[i].is_user) {
            out.push_back({static_cast<int>(i),
                           std::pow(2.0, -standing[i].effective_usage / standing[i].norm_shares)});
        }
    }
    return out;
}

std::vector<UserFactor> fair_tree(const std::vector<Association>& a) {
    Tree tree = build(a);
    // Level fair-share of each node among its siblings.
    std::vector<double> level(a.size(), 0.0);
    for (size_t i = 1; i < a.size(); ++i) {
        const auto& siblings = tree.children[static_cast<size_t>(a[i].parent)];
        double sibling_usage = 0;
        for (int s : siblings) {
            sibling_usage += tree.usage[static_cast<size_t>(s)];
        }
        const double s = static_cast<double>(a[i].shares)
                         / static_cast<double>(sibling_shares(a, tree, static_cast<int>(i)));
        const double u = sibling_usage > 0 ? tree.usage[i] / sibling_usage : 0.0;
        level[i] = u > 0 ? s / u : std::numeric_limits<double>::infinity();
    }
    // Depth-first, highest level fair-share first; equal users share a rank.
    std::vector<std::pair<int, double>> order;  // user, level of the user itself
    std::function<void(int)> walk = [&](int node) {
        std::vector<int> kids = tree.children[static_cast<size_t>(node)];
        std::stable_sort(kids.begin(), kids.end(), [&](int x, int y) {
            return level[static_cast<size_t>(x)] > level[static_cast<size_t>(y)];
        });
        for (int kid : kids) {
            if (a[static_cast<size_t>(kid)].is_user) {
                order.emplace_back(kid, level[static_cast<size_t>(kid)]);
            } else {
                walk(kid);
            }
        }
    };
    walk(0);
    std::vector<UserFactor> out;
    const double users = static_cast<double>(order.size());
    size_t rank = order.size();
    for (size_t i = 0; i < order.size(); ++i) {
        const bool tie = i > 0 && order[i].second == order[i - 1].second
                         && a[static_cast<size_t>(order[i].first)].parent
                                    == a[static_cast<size_t>(order[i - 1].first)].parent;
        if (!tie) {
            rank = order.size() - i;
        }
        out.push_back({order[i].first, static_cast<double>(rank) / users});
    }
    return out;
}

double decay_factor(int64_t period_s, int64_t half_life_s) {
    if (half_life_s <= 0) {
        return 1.0;
    }
    return std::pow(0.5, static_cast<double>(period_s) / static_cast<double>(half_life_s));
}

}  // namespace cohort::sched
