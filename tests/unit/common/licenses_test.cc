// -L/--licenses values.
#include "common/licenses.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(Licenses, CountsDefaultToOneAndRepeatsAddUp) {
    auto licenses = parse_licenses("matlab:2,fluent,matlab");
    ASSERT_TRUE(licenses) << licenses.status().message();
    ASSERT_EQ(licenses->size(), 2u);
    EXPECT_EQ(licenses_text(*licenses), "matlab:3,fluent:1");
}

TEST(Licenses, BadSpecificationsAreRefused) {
    for (const std::string text : {"", "matlab:", "matlab:0", ",a", "a:x", "a b", "a:-1"}) {
        auto licenses = parse_licenses(text);
        ASSERT_FALSE(licenses) << text;
        EXPECT_NE(licenses.status().message().find("--licenses: invalid license specification '"
                                                   + text + "'"),
                  std::string::npos)
                << licenses.status().message();
    }
}

}  // namespace
}  // namespace cohort
