#include "common/billing_weights.h"

#include <cstdlib>

#include "common/comma_list.h"

namespace cohort {
namespace {

Result<double> parse_weight(const std::string& item, std::string text, double unit_scale) {
    double scale = 1.0;
    if (!text.empty() && (text.back() == 'G' || text.back() == 'g')) {
        scale = unit_scale;
        text.pop_back();
    }
    char* end = nullptr;
    const double weight = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || weight < 0) {
        return Status::invalid("tres_billing_weights: invalid weight in '" + item
                               + "' (accepted: a non-negative number, e.g. CPU=1.0)");
    }
    return weight / scale;
}

}  // namespace

Result<BillingWeights> parse_billing_weights(const std::string& text) {
    BillingWeights weights;
    if (text.empty()) {
        return weights;
    }
    weights.cpu = 0.0;  // named weights replace the default, as in Slurm
    for (const std::string& item : split_comma_list(text)) {
        const size_t eq = item.find('=');
        const std::string name = item.substr(0, eq);
        if (eq == std::string::npos) {
            return Status::invalid("tres_billing_weights: '" + item
                                   + "' has no weight (accepted: CPU=W, Mem=W[G], GRES/gpu=W)");
        }
        const std::string value = item.substr(eq + 1);
        double* target = name == "CPU" || name == "cpu"             ? &weights.cpu
                         : name == "Mem" || name == "mem"           ? &weights.mem_per_mib
                         : name == "GRES/gpu" || name == "gres/gpu" ? &weights.gpu
                                                                    : nullptr;
        if (target == nullptr) {
            return Status::invalid("tres_billing_weights: unknown TRES '" + name
                                   + "' (accepted: CPU, Mem, GRES/gpu)");
        }
        // A G suffix on Mem means per GiB; the weight is kept per MiB.
        auto weight = parse_weight(item, value, target == &weights.mem_per_mib ? 1024.0 : 1.0);
        if (!weight) {
            return weight.status();
        }
        *target = *weight;
    }
    return weights;
}

}  // namespace cohort
