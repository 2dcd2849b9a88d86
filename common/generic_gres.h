// --gres for countable resources other than GPUs: what the config declares on nodes
// ("node_gres", e.g. local NVMe space or FPGA slots) and jobs ask per node, as Slurm's GRES
// without device files. GPUs stay with gpu_options.h: they are discovered, typed and bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace cohort {

struct GresCount {
    std::string name;
    int64_t count = 1;

    bool operator==(const GresCount&) const = default;
};

// The upper bound of one count, so sums over thousands of nodes stay far from overflow.
inline constexpr int64_t kMaxGresCount = int64_t{1} << 40;

// --gres split into its GPU entry ("gpu[:type][:N]", empty when none) and the others
// ("nvme:20,fpga", empty when none). "none" asks for nothing.
struct GresOption {
    std::string gpu;
    std::string generic;
};

Result<GresOption> split_gres_option(const std::string& value);

// "name[:count][,name[:count]...]" (count defaults to 1; a name given twice adds up), sorted
// by name. Errors name `option`, the value and what is accepted.
Result<std::vector<GresCount>> parse_generic_gres(const std::string& option,
                                                  const std::string& text);

// As scontrol prints it: "fpga:1,nvme:20".
std::string generic_gres_text(const std::vector<GresCount>& gres);

}  // namespace cohort
