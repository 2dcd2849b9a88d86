// Parsing and evaluating dependencies.
#include "scheduler/dependency.h"

#include <charconv>

namespace cohort::sched {
namespace {

Status bad_dependency(std::string_view text, const std::string& why) {
    return Status::invalid("--dependency: invalid value '" + std::string(text) + "': " + why
            + " (accepted: after, afterany, afterok, afternotok with :JOBID lists, after:JOBID+MIN,"
              " singleton; ',' for all of, '?' for any of)");
}

bool parse_u64(std::string_view digits, uint64_t& out) {
    if (digits.empty()) {
        return false;
    }
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && end == digits.data() + digits.size();
}

std::optional<DependencyType> type_named(std::string_view name) {
    if (name == "after") {
        return DependencyType::kAfter;
    }
    if (name == "afterany") {
        return DependencyType::kAfterAny;
    }
    if (name == "afterok") {
        return DependencyType::kAfterOk;
    }
    if (name == "afternotok") {
        return DependencyType::kAfterNotOk;
    }
    return std::nullopt;
}

Result<DependencyTerm> parse_term(std::string_view text, std::string_view term_text) {
    DependencyTerm term;
    if (term_text == "singleton") {
        term.type = DependencyType::kSingleton;
        return term;
    }
    size_t colon = term_text.find(':');
    std::string_view name = term_text.substr(0, colon);
    uint64_t bare = 0;
    if (colon == std::string_view::npos && parse_u64(name, bare)) {
        term.job_ids.push_back(bare);  // a bare id means afterany
        return term;
    }
    auto type = type_named(name);
    if (!type) {
        return bad_dependency(text, "unknown type '" + std::string(name) + "'");
    }
    if (colon == std::string_view::npos) {
        return bad_dependency(text, "'" + std::string(name) + "' needs at least one job id");
    }
    term.type = *type;
    std::string_view ids = term_text.substr(colon + 1);
    for (size_t start = 0; start <= ids.size();) {
        size_t next = ids.find(':', start);
        std::string_view id = ids.substr(
                start, next == std::string_view::npos ? std::string_view::npos : next - start);
        if (size_t plus = id.find('+'); plus != std::string_view::npos) {
            uint64_t minutes = 0;
            if (term.type != DependencyType::kAfter || !parse_u64(id.substr(plus + 1), minutes)
                || minutes > 52'560'000) {  // 100 years
                return bad_dependency(text, "'+MIN' is only for after:JOBID+MIN");
            }
            term.delay_s = static_cast<int64_t>(minutes) * 60;
            id = id.substr(0, plus);
        }
        uint64_t job_id = 0;
        if (!parse_u64(id, job_id) || job_id == 0) {
            return bad_dependency(text, "'" + std::string(id) + "' is not a job id");
        }
        term.job_ids.push_back(job_id);
        if (next == std::string_view::npos) {
            break;
        }
        start = next + 1;
    }
    return term;
}

bool failed_state(JobState state) {
    return state == JobState::kFailed || state == JobState::kCancelled
           || state == JobState::kTimeout || state == JobState::kNodeFail
           || state == JobState::kOutOfMemory;
}

DependencyStatus evaluate_term(const DependencyTerm& term,
                               const JobLookup& lookup,
                               int64_t now,
                               bool singleton_clear) {
    if (term.type == DependencyType::kSingleton) {
        return singleton_clear ? DependencyStatus::kSatisfied : DependencyStatus::kWaiting;
    }
    DependencyStatus result = DependencyStatus::kSatisfied;
    for (uint64_t id : term.job_ids) {
        auto other = lookup(id);
        if (!other) {
            return DependencyStatus::kNeverSatisfied;
        }
        const bool finished = is_final(other->state);
        switch (term.type) {
            case DependencyType::kAfter:
                if (other->state == JobState::kPending
                    || (other->start_time + term.delay_s > now && !finished)) {
                    result = DependencyStatus::kWaiting;
                }
                break;
            case DependencyType::kAfterAny:
                if (!finished) {
                    result = DependencyStatus::kWaiting;
                }
                break;
            case DependencyType::kAfterOk:
                if (finished && other->state != JobState::kCompleted) {
                    return DependencyStatus::kNeverSatisfied;
                }
                if (!finished) {
                    result = DependencyStatus::kWaiting;
                }
                break;
            case DependencyType::kAfterNotOk:
                if (other->state == JobState::kCompleted) {
                    return DependencyStatus::kNeverSatisfied;
                }
                if (!finished || !failed_state(other->state)) {
                    result = DependencyStatus::kWaiting;
                }
                break;
            case DependencyType::kSingleton:
                break;
        }
    }
    return result;
}

}  // namespace

Result<Dependency> parse_dependency(std::string_view text) {
    Dependency dependency;
    const bool has_and = text.find(',') != std::string_view::npos;
    const bool has_or = text.find('?') != std::string_view::npos;
    if (has_and && has_or) {
        return bad_dependency(text, "',' and '?' cannot be mixed");
    }
    if (text.empty()) {
        return bad_dependency(text, "empty");
    }
    dependency.any_of = has_or;
    const char separator = has_or ? '?' : ',';
    for (size_t start = 0; start <= text.size();) {
        size_t next = text.find(separator, start);
        auto term = parse_term(
                text, text.substr(start, next == std::string_view::npos ? std::string_view::npos
                                                                        : next - start));
        if (!term) {
            return term.status();
        }
        dependency.terms.push_back(std::move(*term));
        if (next == std::string_view::npos) {
            break;
        }
        start = next + 1;
    }
    return dependency;
}

DependencyStatus evaluate_dependency(const Dependency& dependency,
                                     const JobLookup& lookup,
                                     int64_t now,
                                     bool singleton_clear) {
    bool any_waiting = false;
    bool all_satisfied = true;
    for (const DependencyTerm& term : dependency.terms) {
        DependencyStatus status = evaluate_term(term, lookup, now, singleton_clear);
        if (dependency.any_of && status == DependencyStatus::kSatisfied) {
            return DependencyStatus::kSatisfied;
        }
        if (!dependency.any_of && status == DependencyStatus::kNeverSatisfied) {
            return DependencyStatus::kNeverSatisfied;
        }
        any_waiting = any_waiting || status == DependencyStatus::kWaiting;
        all_satisfied = all_satisfied && status == DependencyStatus::kSatisfied;
    }
    if (dependency.any_of) {
        return any_waiting ? DependencyStatus::kWaiting : DependencyStatus::kNeverSatisfied;
    }
    return all_satisfied ? DependencyStatus::kSatisfied : DependencyStatus::kWaiting;
}

}  // namespace cohort::sched
