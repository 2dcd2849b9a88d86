#include "common/generic_gres.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/comma_list.h"

namespace cohort {
namespace {

bool valid_name(const std::string& name) {
    return !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) != 0
           && std::all_of(name.begin(), name.end(), [](char c) {
                  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
              });
}

}  // namespace

Result<GresOption> split_gres_option(const std::string& value) {
    GresOption out;
    if (value == "none") {
        return out;
    }
    std::vector<std::string> generic;
    for (const std::string& item : split_comma_list(value)) {
        const std::string name = item.substr(0, item.find(':'));
        if (name != "gpu") {
            generic.push_back(item);
        } else if (out.gpu.empty()) {
            out.gpu = item;
        } else {
            return Status::invalid(fmt::format(
                    "--gres: invalid generic resource '{}': gpu is given twice (accepted: one "
                    "gpu[:type][:N] entry, e.g. gpu:a100:2,nvme:20)",
                    value));
        }
    }
    out.generic = join_comma_list(generic, "");
    return out;
}

Result<std::vector<GresCount>> parse_generic_gres(const std::string& option,
                                                  const std::string& text) {
    const auto invalid = [&](const std::string& what) {
        return Status::invalid(fmt::format(
                "{}: invalid generic resource '{}': {} (accepted: name[:count][,name[:count]...] "
                "of the resources the cluster's nodes declare, e.g. nvme:20)",
                option, text, what));
    };
    std::vector<GresCount> out;
    for (const std::string& item : split_comma_list(text)) {
        const size_t colon = item.find(':');
        GresCount gres;
        gres.name = item.substr(0, colon);
        if (!valid_name(gres.name)) {
            return invalid(fmt::format("'{}' is not a resource name", gres.name));
        }
        if (colon != std::string::npos) {
            const std::string count = item.substr(colon + 1);
            if (count.find(':') != std::string::npos) {
                return invalid(fmt::format("'{}' has a type; only GPUs have types here", item));
            }
            if (count.empty() || count.size() > 13
                || !std::all_of(count.begin(), count.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })
                || std::stoll(count) == 0 || std::stoll(count) > kMaxGresCount) {
                return invalid(fmt::format("count '{}' of '{}' is not a number from 1 to {}", count,
                                           gres.name, kMaxGresCount));
            }
            gres.count = std::stoll(count);
        }
        auto same = std::find_if(out.begin(), out.end(),
                                 [&](const GresCount& g) { return g.name == gres.name; });
        if (same != out.end()) {
            same->count = std::min(same->count + gres.count, kMaxGresCount);
        } else {
            out.push_back(std::move(gres));
        }
    }
    if (out.empty()) {
        return invalid("no resource is named");
    }
    std::sort(out.begin(), out.end(),
              [](const GresCount& a, const GresCount& b) { return a.name < b.name; });
    return out;
}

std::string generic_gres_text(const std::vector<GresCount>& gres) {
    std::string out;
    for (const GresCount& g : gres) {
        out += fmt::format("{}{}:{}", out.empty() ? "" : ",", g.name, g.count);
    }
    return out;
}

}  // namespace cohort
