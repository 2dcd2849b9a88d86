// --gres values besides GPUs, and how --gres splits into its GPU entry and the rest.
#include "common/generic_gres.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(GenericGres, CountsDefaultToOneRepeatsAddUpAndNamesSort) {
    auto gres = parse_generic_gres("--gres", "nvme:20,fpga,nvme:5");
    ASSERT_TRUE(gres) << gres.status().message();
    EXPECT_EQ(*gres, (std::vector<GresCount>{{"fpga", 1}, {"nvme", 25}}));
    EXPECT_EQ(generic_gres_text(*gres), "fpga:1,nvme:25");
}

TEST(GenericGres, BadSpecificationsNameTheOptionValueAndWhatIsAccepted) {
    for (const std::string text : {"", ",", "nvme:", "nvme:0", "nvme:x", "nvme:-1", "1nvme",
                                   "nv me", "nvme:ssd:2", "nvme:99999999999999"}) {
        auto gres = parse_generic_gres("--gres", text);
        ASSERT_FALSE(gres) << text;
        EXPECT_EQ(
                gres.status().message().rfind("--gres: invalid generic resource '" + text + "'", 0),
                0u)
                << gres.status().message();
        EXPECT_NE(gres.status().message().find("(accepted: name[:count]"), std::string::npos);
    }
}

TEST(GenericGres, TheGpuEntrySplitsFromTheOthers) {
    auto both = split_gres_option("gpu:a100_1g.5gb:2,nvme:20,fpga");
    ASSERT_TRUE(both) << both.status().message();
    EXPECT_EQ(both->gpu, "gpu:a100_1g.5gb:2");
    EXPECT_EQ(both->generic, "nvme:20,fpga");
    auto gpu_only = split_gres_option("gpu:2");
    ASSERT_TRUE(gpu_only);
    EXPECT_EQ(gpu_only->gpu, "gpu:2");
    EXPECT_EQ(gpu_only->generic, "");
    auto none = split_gres_option("none");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->gpu + none->generic, "");
    auto twice = split_gres_option("gpu:1,gpu:2");
    ASSERT_FALSE(twice);
    EXPECT_NE(twice.status().message().find("gpu is given twice"), std::string::npos);
}

}  // namespace
}  // namespace cohort
