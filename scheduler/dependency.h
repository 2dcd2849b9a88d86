// Job dependencies (--dependency): "afterok:12:13,afterany:14" (all of) or
// "afterok:12?afternotok:13" (any of), "after:12+5", "singleton", a bare id = afterany.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_state.h"
#include "common/status.h"

namespace cohort::sched {

enum class DependencyType {
    kAfter,
    kAfterAny,
    kAfterOk,
    kAfterNotOk,
    kSingleton
};

struct DependencyTerm {
    DependencyType type = DependencyType::kAfterAny;
    std::vector<uint64_t> job_ids;  // empty for singleton
    int64_t delay_s = 0;            // after+MIN: minutes after the start, in seconds
};

struct Dependency {
    std::vector<DependencyTerm> terms;
    bool any_of = false;  // '?' joins the terms; ',' (the default) needs all of them
};

Result<Dependency> parse_dependency(std::string_view text);

enum class DependencyStatus {
    kSatisfied,
    kWaiting,
    kNeverSatisfied
};

// What the scheduler knows of another job; nullopt for a job id that never existed.
struct OtherJob {
    JobState state = JobState::kPending;
    int64_t start_time = 0;
};

using JobLookup = std::function<std::optional<OtherJob>(uint64_t job_id)>;

// `singleton_clear` says whether no other job of the same name and user is running or
// pending ahead of this one.
DependencyStatus evaluate_dependency(const Dependency& dependency,
                                     const JobLookup& lookup,
                                     int64_t now,
                                     bool singleton_clear);

}  // namespace cohort::sched
