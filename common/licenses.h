// -L/--licenses: cluster-wide counted resources (software licenses), as sbatch takes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace cohort {

struct LicenseRequest {
    std::string name;
    uint32_t count = 1;
};

// "name[:count][,name[:count]...]" (count defaults to 1; a name given twice adds up). Errors
// name the value and what is accepted.
Result<std::vector<LicenseRequest>> parse_licenses(const std::string& text);

// As `scontrol show job` prints it: "matlab:2,fluent:1".
std::string licenses_text(const std::vector<LicenseRequest>& licenses);

}  // namespace cohort
