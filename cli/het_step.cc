#include "cli/het_step.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/comma_list.h"

namespace cohort::cli {
namespace {

// --het-group's indexes: "1", "0,2", "0-2".
Result<std::vector<uint32_t>> indexes_of(const std::string& het_group) {
    std::vector<uint32_t> indexes;
    const auto digits = [](const std::string& text) {
        return !text.empty() && text.size() < 4
               && std::all_of(text.begin(), text.end(),
                              [](unsigned char c) { return std::isdigit(c) != 0; });
    };
    for (const std::string& item : split_comma_list(het_group)) {
        const size_t dash = item.find('-');
        const std::string first = item.substr(0, dash);
        const std::string last = dash == std::string::npos ? first : item.substr(dash + 1);
        if (!digits(first) || !digits(last) || std::stoul(last) < std::stoul(first)) {
            return Status::invalid("--het-group: invalid value '" + het_group
                                   + "' (accepted: component indexes such as 1, 0,2 or 0-2)");
        }
        for (auto n = static_cast<uint32_t>(std::stoul(first)); n <= std::stoul(last); ++n) {
            if (std::find(indexes.begin(), indexes.end(), n) == indexes.end()) {
                indexes.push_back(n);
            }
        }
    }
    return indexes;
}

// Component n's job id; component 0 of a job of one component is the job itself.
Result<uint64_t> component_job(uint64_t allocation,
                               uint32_t n,
                               const std::vector<uint64_t>& component_ids) {
    if (n < component_ids.size()) {
        return component_ids[n];
    }
    const std::string name = "SLURM_JOB_ID_HET_GROUP_" + std::to_string(n);
    if (const char* id = std::getenv(name.c_str()); id != nullptr && *id != '\0') {
        return std::strtoull(id, nullptr, 10);
    }
    if (n == 0 && allocation != 0) {
        return allocation;
    }
    return Status::invalid("--het-group: invalid value '" + std::to_string(n)
                           + "' (accepted: the indexes of this job's components; " + name
                           + " is not set)");
}

}  // namespace

std::vector<std::vector<std::string>> split_het_segments(const std::vector<std::string>& args) {
    std::vector<std::vector<std::string>> segments(1);
    for (const std::string& word : args) {
        if (word == ":") {
            segments.emplace_back();
        } else {
            segments.back().push_back(word);
        }
    }
    return segments;
}

Result<StepJob> step_job_of(uint64_t allocation,
                            std::vector<HetSegment> segments,
                            const std::vector<uint64_t>& component_ids) {
    for (size_t i = segments.size() - 1; i > 0; --i) {
        if (segments[i - 1].argv.empty()) {
            segments[i - 1].argv = segments[i].argv;
        }
    }
    StepJob step{allocation, {}, {}};
    if (segments.size() == 1) {
        const HetSegment& only = segments.front();
        if (only.het_group.empty()) {
            return step;
        }
        auto indexes = indexes_of(only.het_group);
        if (!indexes) {
            return indexes.status();
        }
        for (uint32_t n : *indexes) {
            auto job = component_job(allocation, n, component_ids);
            if (!job) {
                return job.status();
            }
            protocol::HetStepPart part = only.shape;
            part.job_id = *job;
            step.parts.push_back(part);
        }
    } else {
        for (size_t i = 0; i < segments.size(); ++i) {
            const HetSegment& segment = segments[i];
            auto indexes = segment.het_group.empty()
                                   ? Result<std::vector<uint32_t>>({static_cast<uint32_t>(i)})
                                   : indexes_of(segment.het_group);
            if (!indexes) {
                return indexes.status();
            }
            if (indexes->size() != 1) {
                return Status::invalid("--het-group: invalid value '" + segment.het_group
                                       + "' (accepted: one component for each part of srun "
                                         "A : B)");
            }
            auto job = component_job(allocation, indexes->front(), component_ids);
            if (!job) {
                return job.status();
            }
            protocol::HetStepPart part = segment.shape;
            part.job_id = *job;
            step.parts.push_back(part);
            step.argv_by_job[*job] = segment.argv;
        }
    }
    if (step.parts.size() == 1) {  // one component: a plain step in its job
        step.job_id = step.parts.front().job_id;
        step.parts.clear();
        step.argv_by_job.clear();
    }
    return step;
}

}  // namespace cohort::cli
