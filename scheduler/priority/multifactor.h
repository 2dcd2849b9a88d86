// Multifactor priority, as Slurm's: a weighted sum of factors in [0, 1] (age, fair-share,
// job size, partition tier, QoS) minus nice, clamped to 32 bits. Pure: inputs in, factors out,
// so `cohort priority` can show a user why a job waits.
#pragma once

#include <cstdint>

namespace cohort::sched {

struct PriorityWeights {
    int64_t age = 1000;
    int64_t fairshare = 10000;
    int64_t job_size = 1000;
    int64_t partition = 1000;
    int64_t qos = 1000;
    int64_t max_age_s = 7 * 86400;  // the age factor reaches 1 here (PriorityMaxAge)
    bool favor_small = false;       // job size factor favours small jobs instead of large
};

struct PriorityInputs {
    int64_t eligible_s = 0;  // how long the job has been eligible to run
    double fairshare = 0;    // the user's factor from classic_fairshare or fair_tree
    int64_t cpus = 1;
    int64_t cluster_cpus = 1;
    int64_t partition_tier = 0;
    int64_t max_partition_tier = 0;
    int64_t qos_priority = 0;
    int64_t max_qos_priority = 0;
    int32_t nice = 0;
};

struct PriorityFactors {
    double age = 0;
    double fairshare = 0;
    double job_size = 0;
    double partition = 0;
    double qos = 0;
    int64_t priority = 0;  // sum of weight x factor, minus nice, in [0, 2^32 - 1]
};

PriorityFactors multifactor_priority(const PriorityInputs& inputs, const PriorityWeights& weights);

}  // namespace cohort::sched
