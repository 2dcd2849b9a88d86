// Multifactor priority: each factor and how they combine.
#include "scheduler/priority/multifactor.h"

#include <gtest/gtest.h>

namespace cohort::sched {
namespace {

TEST(Multifactor, WeightedSumOfFactorsMinusNice) {
    PriorityWeights weights;  // age 1000, fairshare 10000, size 1000, partition 1000, qos 1000
    PriorityInputs in;
    in.eligible_s = 7 * 86400 / 2;  // half the max age
    in.fairshare = 0.25;
    in.cpus = 64;
    in.cluster_cpus = 256;
    in.partition_tier = 1;
    in.max_partition_tier = 2;
    in.qos_priority = 10;
    in.max_qos_priority = 10;
    in.nice = 100;
    PriorityFactors f = multifactor_priority(in, weights);
    EXPECT_DOUBLE_EQ(f.age, 0.5);
    EXPECT_DOUBLE_EQ(f.fairshare, 0.25);
    EXPECT_DOUBLE_EQ(f.job_size, 0.25);
    EXPECT_DOUBLE_EQ(f.partition, 0.5);
    EXPECT_DOUBLE_EQ(f.qos, 1.0);
    EXPECT_EQ(f.priority, 500 + 2500 + 250 + 500 + 1000 - 100);
}

TEST(Multifactor, AgeCapsAtMaxAgeAndSmallJobsCanBeFavoured) {
    PriorityWeights weights;
    weights.favor_small = true;
    PriorityInputs in;
    in.eligible_s = 30 * 86400;
    in.cpus = 64;
    in.cluster_cpus = 256;
    PriorityFactors f = multifactor_priority(in, weights);
    EXPECT_DOUBLE_EQ(f.age, 1.0);
    EXPECT_DOUBLE_EQ(f.job_size, 0.75);
}

TEST(Multifactor, PriorityIsClampedToThirtyTwoBits) {
    PriorityWeights weights;
    weights.fairshare = 0x7fffffffffLL;
    PriorityInputs in;
    in.fairshare = 1.0;
    EXPECT_EQ(multifactor_priority(in, weights).priority, 0xffffffffLL);
    in.fairshare = 0;
    in.nice = 5000;
    EXPECT_EQ(multifactor_priority(in, PriorityWeights{}).priority, 0);
}

}  // namespace
}  // namespace cohort::sched
