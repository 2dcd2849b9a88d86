// Names and codes of job states.
#include "common/job_state.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace cohort {
namespace {

struct StateNames {
    JobState state;
    std::string_view name;
    std::string_view code;
};

constexpr std::array<StateNames, 11> kStates = {{
        {JobState::kPending, "PENDING", "PD"},
        {JobState::kRunning, "RUNNING", "R"},
        {JobState::kCompleting, "COMPLETING", "CG"},
        {JobState::kCompleted, "COMPLETED", "CD"},
        {JobState::kFailed, "FAILED", "F"},
        {JobState::kCancelled, "CANCELLED", "CA"},
        {JobState::kTimeout, "TIMEOUT", "TO"},
        {JobState::kNodeFail, "NODE_FAIL", "NF"},
        {JobState::kRequeued, "REQUEUED", "RQ"},
        {JobState::kPreempted, "PREEMPTED", "PR"},
        {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
}};

}  // namespace

std::string_view job_state_name(JobState state) {
    return kStates.at(static_cast<size_t>(state)).name;
}

std::string_view job_state_code(JobState state) {
    return kStates.at(static_cast<size_t>(state)).code;
}

Result<JobState> parse_job_state(std::string_view text) {
    std::string upper(text);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    for (const auto& entry : kStates) {
        if (upper == entry.name || upper == entry.code) {
            return entry.state;
        }
    }
    return Status::invalid("invalid job state '" + std::string(text)
            + "' (accepted: PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, "
              "TIMEOUT, NODE_FAIL, REQUEUED, PREEMPTED, OUT_OF_MEMORY or their codes PD, R, CG, CD, "
              "F, CA, TO, NF, RQ, PR, OOM)");
}

Result<std::vector<JobState>> parse_job_states(std::string_view option, std::string_view list) {
    std::vector<JobState> states;
    while (!list.empty()) {
        const size_t comma = list.find(',');
        auto state = parse_job_state(list.substr(0, comma));
        if (!state) {
            return state.status().with_context(std::string(option));
        }
        states.push_back(*state);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return states;
}

bool is_final(JobState state) {
    return state != JobState::kPending && state != JobState::kRunning
           && state != JobState::kCompleting;
}

}  // namespace cohort
