#include "common/mail_type.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace cohort {
namespace {

constexpr std::pair<const char*, uint32_t> kMailTypeNames[] = {
        {"BEGIN", kMailBegin},
        {"END", kMailEnd},
        {"FAIL", kMailFail},
        {"REQUEUE", kMailRequeue},
        {"INVALID_DEPEND", kMailInvalidDepend},
        {"STAGE_OUT", kMailStageOut},
        {"TIME_LIMIT", kMailTimeLimit},
        {"TIME_LIMIT_90", kMailTimeLimit90},
        {"TIME_LIMIT_80", kMailTimeLimit80},
        {"TIME_LIMIT_50", kMailTimeLimit50},
        {"ARRAY_TASKS", kMailArrayTasks},
};

// Slurm's ALL: every event of a job, not the time-limit warnings or per-task mail.
constexpr uint32_t kMailAll =
        kMailBegin | kMailEnd | kMailFail | kMailRequeue | kMailInvalidDepend | kMailStageOut;

}  // namespace

Result<uint32_t> parse_mail_type(const std::vector<std::string>& values) {
    uint32_t events = 0;
    for (const std::string& value : values) {
        size_t start = 0;
        while (start <= value.size()) {
            const size_t comma = std::min(value.find(',', start), value.size());
            std::string word = value.substr(start, comma - start);
            std::transform(word.begin(), word.end(), word.begin(),
                           [](unsigned char c) { return std::toupper(c); });
            start = comma + 1;
            if (word == "NONE") {
                events = 0;
                continue;
            }
            if (word == "ALL") {
                events |= kMailAll;
                continue;
            }
            auto known = std::find_if(std::begin(kMailTypeNames), std::end(kMailTypeNames),
                                      [&](const auto& entry) { return word == entry.first; });
            if (known == std::end(kMailTypeNames)) {
                return Status::invalid(
                        "--mail-type: invalid value '" + value
                        + "' (accepted: comma-separated NONE, BEGIN, END, FAIL, REQUEUE, ALL, "
                          "INVALID_DEPEND, STAGE_OUT, TIME_LIMIT, TIME_LIMIT_90, TIME_LIMIT_80, "
                          "TIME_LIMIT_50, ARRAY_TASKS)");
            }
            events |= known->second;
        }
    }
    return events;
}

std::string mail_type_name(uint32_t events) {
    std::string names;
    for (const auto& [name, bit] : kMailTypeNames) {
        if ((events & bit) != 0) {
            names += (names.empty() ? "" : ",") + std::string(name);
        }
    }
    return names.empty() ? "NONE" : names;
}

}  // namespace cohort
