#include "common/licenses.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace cohort {

Result<std::vector<LicenseRequest>> parse_licenses(const std::string& text) {
    const auto invalid = [&](const std::string& what) {
        return Status::invalid(
                fmt::format("--licenses: invalid license specification '{}': {} (accepted: "
                            "name[:count][,name[:count]...], e.g. matlab:2,fluent)",
                            text, what));
    };
    std::vector<LicenseRequest> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, comma - start);
        const size_t colon = item.find(':');
        LicenseRequest license;
        license.name = item.substr(0, colon);
        if (license.name.empty()) {
            return invalid("a license name is empty");
        }
        for (char c : license.name) {
            if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-' && c != '.'
                && c != '@') {
                return invalid(fmt::format("'{}' is not a license name", license.name));
            }
        }
        if (colon != std::string::npos) {
            const std::string count = item.substr(colon + 1);
            if (count.empty() || count.size() > 9
                || !std::all_of(count.begin(), count.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })
                || std::stoul(count) == 0) {
                return invalid(fmt::format("count '{}' of '{}' is not a number of 1 or more", count,
                                           license.name));
            }
            license.count = static_cast<uint32_t>(std::stoul(count));
        }
        auto same = std::find_if(out.begin(), out.end(),
                                 [&](const LicenseRequest& l) { return l.name == license.name; });
        if (same != out.end()) {
            same->count += license.count;
        } else {
            out.push_back(std::move(license));
        }
        start = comma + 1;
    }
    return out;
}

std::string licenses_text(const std::vector<LicenseRequest>& licenses) {
    std::string out;
    for (const LicenseRequest& license : licenses) {
        out += fmt::format("{}{}:{}", out.empty() ? "" : ",", license.name, license.count);
    }
    return out;
}

}  // namespace cohort
