// Expanding Slurm-style output filename patterns (`logs/%x-%j.out`, `sweep_%A_%a.out`).
#include "common/filename_pattern.h"

#include <algorithm>
#include <iterator>

namespace cohort {
namespace {

// Slurm's value of %a outside an array (NO_VAL - 1), which scripts may already expect.
constexpr uint32_t kNoArrayTaskId = 4294967294U;

// Slurm caps the pad width so `%999j` cannot build a huge name.
constexpr size_t kMaxPadWidth = 10;

std::string padded(uint64_t value, size_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width) {
        digits.insert(0, width - digits.size(), '0');
    }
    return digits;
}

// The expansion of one code, or nullopt to keep it as written.
std::optional<std::string> expand_code(char code, size_t width, const FilenamePatternContext& ctx) {
    const uint32_t task = ctx.array_task_id.value_or(kNoArrayTaskId);
    switch (code) {
        case '%':
            return "%";
        case 'A':
            return padded(ctx.array_job_id != 0 ? ctx.array_job_id : ctx.job_id, width);
        case 'a':
            return padded(task, width);
        case 'b':
            return padded(task % 10, width);
        case 'j':
            return padded(ctx.job_id, width);
        case 'J':
            if (!ctx.step_id) {
                return padded(ctx.job_id, width);
            }
            return padded(ctx.job_id, width) + "." + std::to_string(*ctx.step_id);
        case 'N':
            return ctx.node_name.substr(0, ctx.node_name.find('.'));
        case 'n':
            return padded(ctx.node_index, width);
        case 's':
            return ctx.step_id ? padded(*ctx.step_id, width) : "batch";
        case 't':
            if (!ctx.task_id) {
                return std::nullopt;
            }
            return padded(*ctx.task_id, width);
        case 'u':
            return ctx.user;
        case 'x':
            return ctx.job_name;
        case 'r':
            return padded(ctx.restart_count, width);
        default:
            return std::nullopt;
    }
}

}  // namespace

std::string expand_filename_pattern(std::string_view pattern, const FilenamePatternContext& ctx) {
    std::string out;
    if (pattern.find('\\') != std::string_view::npos) {
        std::copy_if(pattern.begin(), pattern.end(), std::back_inserter(out),
                     [](char c) { return c != '\\'; });
        return out;
    }
    size_t i = 0;
    while (i < pattern.size()) {
        if (pattern[i] != '%') {
            out.push_back(pattern[i]);
            ++i;
            continue;
        }
        size_t j = i + 1;
        size_t width = 0;
        while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
            width = std::min(width * 10 + static_cast<size_t>(pattern[j] - '0'), kMaxPadWidth);
            ++j;
        }
        std::optional<std::string> expansion;
        if (j < pattern.size()) {
            expansion = expand_code(pattern[j], width, ctx);
        }
        if (!expansion) {
            // Keep the '%' and move on, so the rest (`%5q`, a trailing `%3`) is copied as is.
            out.push_back('%');
            ++i;
            continue;
        }
        out += *expansion;
        i = j + 1;
    }
    return out;
}

std::string path_from(const std::string& path, const std::string& cwd) {
    if (path.empty() || path.front() == '/') {
        return path;
    }
    return (cwd.empty() ? std::string(".") : cwd) + "/" + path;
}

}  // namespace cohort
