// Who may act beyond their own jobs, as Slurm's AdminLevel: root and the controller's own
// user are administrators; the config's `admins` and `operators` name more. Operators may
// act on every job; only administrators change nodes and reservations.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "common/config.h"

namespace cohort::ctld {

class Roles {
public:
    // Resolves the config's user names; a name this host does not know is logged and
    // grants nothing.
    Roles(const ClusterConfig& config, uint32_t self_uid);

    bool is_admin(uint32_t uid) const;
    bool is_operator(uint32_t uid) const;  // administrators are operators too
    // private_data lists "jobs" and `uid` is no operator: it sees its own jobs only.
    bool sees_only_own_jobs(uint32_t uid) const;

private:
    uint32_t self_uid_;
    std::set<uint32_t> admins_;
    std::set<uint32_t> operators_;
    bool private_jobs_ = false;
};

// The login name of `uid`, or its number when it has none.
std::string user_name_of(uint32_t uid);

}  // namespace cohort::ctld
