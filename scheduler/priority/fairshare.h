// Fair-share over an account tree, as Slurm computes it: the classic factor 2^(-U_E/S) and
// the Fair Tree ranking. Pure: a tree of shares and decayed usage in, a factor per user out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace cohort::sched {

// One node of the association tree: an account, or a user (a leaf) under an account.
struct Association {
    std::string name;
    int parent = -1;  // index of the parent account; -1 for the root
    int64_t shares = 1;
    // Decayed usage (billing-seconds) of a user; accounts sum their children. The root's own value,
    // when larger than its children's, is the cluster's total (usage of removed users too).
    double usage = 0;
    bool is_user = false;
};

struct UserFactor {
    int association = 0;  // index of the user
    double factor = 0;    // in [0, 1]; higher runs sooner
};

// REQUIRES: associations[0] is the root; parents come before children. The error names a
// bad parent index or non-positive shares.
Status check_tree(const std::vector<Association>& associations);

// Where one association stands, as sshare lists it: its shares normalized along the path
// (S), its usage (an account's sums its children's), that usage over the cluster's (U), and
// its effective usage U_E = U + (U_E(parent) - U) * S_self / S_self_and_siblings. The root's
// S and U_E are 1.
struct Standing {
    double norm_shares = 1;
    double usage = 0;
    double norm_usage = 0;
    double effective_usage = 0;
};

// One per association, in the same order.
std::vector<Standing> standings(const std::vector<Association>& associations);

// Classic fair-share: each user's factor is 2^(-U_E / S).
std::vector<UserFactor> classic_fairshare(const std::vector<Association>& associations);

// Fair Tree: siblings sorted by level fair-share S/U (infinite without usage), users ranked
// by a depth-first walk, factor = rank / users (the first user gets 1.0; ties share a rank).
std::vector<UserFactor> fair_tree(const std::vector<Association>& associations);

// The factor usage is multiplied by every `period_s` so that it halves every `half_life_s`
// (a half-life of 0 means no decay).
double decay_factor(int64_t period_s, int64_t half_life_s);

}  // namespace cohort::sched
