#include "scheduler/ctld/roles.h"

#include <algorithm>

#include <pwd.h>
#include <spdlog/spdlog.h>

namespace cohort::ctld {
namespace {

std::set<uint32_t> uids_of(const std::vector<std::string>& names, const char* key) {
    std::set<uint32_t> uids;
    for (const std::string& name : names) {
        struct passwd pw {};
        struct passwd* found = nullptr;
        char buffer[4096];
        if (getpwnam_r(name.c_str(), &pw, buffer, sizeof(buffer), &found) == 0
            && found != nullptr) {
            uids.insert(found->pw_uid);
        } else {
            spdlog::warn("{}: no user '{}' on this host; it is given nothing", key, name);
        }
    }
    return uids;
}

}  // namespace

Roles::Roles(const ClusterConfig& config, uint32_t self_uid)
    : self_uid_(self_uid),
      admins_(uids_of(config.admins, "admins")),
      operators_(uids_of(config.operators, "operators")),
      private_jobs_(std::find(config.private_data.begin(), config.private_data.end(), "jobs")
                    != config.private_data.end()) {}

bool Roles::is_admin(uint32_t uid) const {
    return uid == 0 || uid == self_uid_ || admins_.count(uid) > 0;
}

bool Roles::is_operator(uint32_t uid) const {
    return is_admin(uid) || operators_.count(uid) > 0;
}

bool Roles::sees_only_own_jobs(uint32_t uid) const {
    return private_jobs_ && !is_operator(uid);
}

std::string user_name_of(uint32_t uid) {
    struct passwd pw {};
    struct passwd* result = nullptr;
    char buffer[4096];
    if (getpwuid_r(uid, &pw, buffer, sizeof(buffer), &result) == 0 && result != nullptr) {
        return pw.pw_name;
    }
    return std::to_string(uid);
}

}  // namespace cohort::ctld
