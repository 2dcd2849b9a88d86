// Multifactor priority.
#include "scheduler/priority/multifactor.h"

#include <algorithm>
#include <cmath>

namespace cohort::sched {
namespace {

double ratio(int64_t value, int64_t max) {
    if (max <= 0) {
        return 0;
    }
    return std::clamp(static_cast<double>(value) / static_cast<double>(max), 0.0, 1.0);
}

}  // namespace

PriorityFactors multifactor_priority(const PriorityInputs& in, const PriorityWeights& w) {
    PriorityFactors f;
    f.age = ratio(in.eligible_s, w.max_age_s);
    f.fairshare = std::clamp(in.fairshare, 0.0, 1.0);
    const double size = ratio(in.cpus, in.cluster_cpus);
    f.job_size = w.favor_small ? 1.0 - size : size;
    f.partition = ratio(in.partition_tier, in.max_partition_tier);
    f.qos = ratio(in.qos_priority, in.max_qos_priority);
    const double sum =
            static_cast<double>(w.age) * f.age + static_cast<double>(w.fairshare) * f.fairshare
            + static_cast<double>(w.job_size) * f.job_size
            + static_cast<double>(w.partition) * f.partition + static_cast<double>(w.qos) * f.qos;
    const int64_t priority = static_cast<int64_t>(std::llround(sum)) - in.nice;
    f.priority = std::clamp<int64_t>(priority, 0, 0xffffffffLL);
    return f;
}

}  // namespace cohort::sched
