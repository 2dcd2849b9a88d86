// Parsing --array.
#include "scheduler/job_array.h"

#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

namespace cohort::sched {
namespace {

Status bad_array(std::string_view text, const std::string& why) {
    return Status::invalid(
            "--array: invalid specification '" + std::string(text) + "': " + why
            + " (accepted: N, N-M, N-M:STEP, lists of them separated by ',', and %MAX)");
}

bool parse_number(std::string_view digits, uint32_t& out) {
    if (digits.empty()) {
        return false;
    }
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

ArrayIndexes::ArrayIndexes(std::vector<Run> runs) : runs_(std::move(runs)) {
    for (const Run& run : runs_) {
        size_ += run.size();
    }
}

ArrayIndexes ArrayIndexes::from_sorted(const std::vector<uint32_t>& indexes) {
    std::vector<Run> runs;
    for (size_t i = 0; i < indexes.size();) {
        Run run{indexes[i], indexes[i], 1};
        size_t next = i + 1;
        if (next < indexes.size()) {
            run.step = indexes[next] - indexes[i];
            while (next < indexes.size() && indexes[next] - run.last == run.step) {
                run.last = indexes[next++];
            }
        }
        if (run.first == run.last) {
            run.step = 1;
        }
        runs.push_back(run);
        i = next;
    }
    return ArrayIndexes(std::move(runs));
}

std::optional<uint32_t> ArrayIndexes::position_of(uint32_t index) const {
    uint32_t before = 0;
    for (const Run& run : runs_) {
        if (index < run.first) {
            return std::nullopt;
        }
        if (index <= run.last) {
            if ((index - run.first) % run.step != 0) {
                return std::nullopt;
            }
            return before + (index - run.first) / run.step;
        }
        before += run.size();
    }
    return std::nullopt;
}

uint32_t ArrayIndexes::at(uint32_t position) const {
    for (const Run& run : runs_) {
        if (position < run.size()) {
            return run.first + position * run.step;
        }
        position -= run.size();
    }
    return runs_.back().last;  // out of range: the caller broke the precondition
}

bool ArrayIndexes::erase(uint32_t index) {
    auto run = std::find_if(runs_.begin(), runs_.end(),
                            [index](const Run& r) { return index <= r.last; });
    if (run == runs_.end() || index < run->first || (index - run->first) % run->step != 0) {
        return false;
    }
    --size_;
    if (run->first == run->last) {
        runs_.erase(run);
    } else if (index == run->first) {
        run->first += run->step;
    } else if (index == run->last) {
        run->last -= run->step;
    } else {
        Run after{index + run->step, run->last, run->step};
        run->last = index - run->step;
        runs_.insert(run + 1, after);
    }
    return true;
}

std::vector<uint32_t> ArrayIndexes::to_vector() const {
    std::vector<uint32_t> out;
    out.reserve(size_);
    for (const Run& run : runs_) {
        for (uint64_t i = run.first; i <= run.last; i += run.step) {
            out.push_back(static_cast<uint32_t>(i));
        }
    }
    return out;
}

std::string ArrayIndexes::to_string() const {
    std::string out;
    for (const Run& run : runs_) {
        if (!out.empty()) {
            out += ',';
        }
        out += std::to_string(run.first);
        if (run.last != run.first) {
            out += '-' + std::to_string(run.last);
            if (run.step != 1) {
                out += ':' + std::to_string(run.step);
            }
        }
    }
    return out;
}

Result<ArraySpec> parse_array_spec(std::string_view text, uint32_t max_size) {
    ArraySpec spec;
    std::string_view ranges = text;
    if (size_t percent = text.find('%'); percent != std::string_view::npos) {
        if (!parse_number(text.substr(percent + 1), spec.max_running) || spec.max_running == 0) {
            return bad_array(text, "the throttle after '%' must be a whole number >= 1");
        }
        ranges = text.substr(0, percent);
    }
    if (ranges.empty()) {
        return bad_array(text, "no indexes");
    }
    std::vector<ArrayIndexes::Run> runs;
    bool ascending = true;  // each item above the one before: the runs need no sorting
    for (size_t start = 0; start <= ranges.size();) {
        size_t comma = ranges.find(',', start);
        std::string_view item = ranges.substr(
                start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        uint32_t step = 1;
        if (size_t colon = item.find(':'); colon != std::string_view::npos) {
            if (!parse_number(item.substr(colon + 1), step) || step == 0) {
                return bad_array(text, "the step after ':' must be a whole number >= 1");
            }
            item = item.substr(0, colon);
        }
        uint32_t low = 0;
        uint32_t high = 0;
        if (size_t dash = item.find('-'); dash != std::string_view::npos) {
            if (!parse_number(item.substr(0, dash), low)
                || !parse_number(item.substr(dash + 1), high)) {
                return bad_array(text, "'" + std::string(item) + "' is not a range N-M");
            }
            if (high < low) {
                return bad_array(text, "range '" + std::string(item) + "' is reversed");
            }
        } else if (parse_number(item, low)) {
            high = low;
        } else {
            return bad_array(text, "'" + std::string(item) + "' is not an index");
        }
        if (high >= max_size) {
            return bad_array(
                    text, fmt::format("index {} is above the maximum of {}", high, max_size - 1));
        }
        if (runs.empty()) {
            spec.step = step;
        }
        const uint32_t last = low + (high - low) / step * step;
        ascending = ascending && (runs.empty() || low > runs.back().last);
        runs.push_back({low, last, low == last ? 1 : step});
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    if (ascending) {
        spec.indexes = ArrayIndexes(std::move(runs));
        return spec;
    }
    uint64_t listed = 0;  // bounds the expansion below: overlapping items repeat indexes
    for (const auto& run : runs) {
        listed += run.size();
    }
    if (listed > max_size) {
        return bad_array(text, fmt::format("its items list {} indexes, more than the maximum of {}",
                                           listed, max_size));
    }
    std::vector<uint32_t> all = ArrayIndexes(std::move(runs)).to_vector();
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    spec.indexes = ArrayIndexes::from_sorted(all);
    return spec;
}

}  // namespace cohort::sched
