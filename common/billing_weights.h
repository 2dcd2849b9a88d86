// Slurm's TRESBillingWeights: what one allocation costs in billing units, e.g.
// "CPU=1.0,Mem=0.25G,GRES/gpu=2.0" (Mem's weight is per MiB, or per GiB with a G suffix).
// Billing is the sum of each TRES times its weight; with no weights it is the CPU count, as
// in Slurm.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace cohort {

struct BillingWeights {
    double cpu = 1.0;
    double mem_per_mib = 0.0;
    double gpu = 0.0;

    double billing(int64_t cpus, int64_t mem_mib, int64_t gpus) const {
        return cpu * static_cast<double>(cpus) + mem_per_mib * static_cast<double>(mem_mib)
               + gpu * static_cast<double>(gpus);
    }
};

// "" gives the default (CPU=1). Errors name the item and what is accepted.
Result<BillingWeights> parse_billing_weights(const std::string& text);

}  // namespace cohort
