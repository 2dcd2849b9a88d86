// gpu_fit_order(), the order in which the planning pass tries nodes for a GPU job. How the
// pass places GPU jobs end to end is in the golden scenarios (tests/data/scenarios/gpu_*.json).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/placement/node_fit.h"

namespace cohort::sched {
namespace {

TEST(PlanGpu, FitOrderKeepsTheGivenOrderOnTies) {
    const std::vector<int64_t> free = {4, 2, 4, 2};
    const auto count = [&](int i) {
        return free[static_cast<size_t>(i)];
    };
    const auto unknown = [](int) {
        return GpuSetLocality{};
    };
    EXPECT_EQ(gpu_fit_order({0, 1, 2, 3}, count, unknown), (std::vector<int>{1, 3, 0, 2}));
    const auto clique_on_2 = [](int i) {
        return GpuSetLocality{i == 2, false, false, false};
    };
    EXPECT_EQ(gpu_fit_order({0, 1, 2, 3}, count, clique_on_2), (std::vector<int>{2, 1, 3, 0}));
}

}  // namespace
}  // namespace cohort::sched
