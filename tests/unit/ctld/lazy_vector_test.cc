// A job's lazily allocated lists: one pointer while empty, a vector's values otherwise.
#include "scheduler/ctld/lazy_vector.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace cohort::ctld {
namespace {

TEST(LazyVector, IsOnePointerWhileEmptyAndReadsAsAVector) {
    static_assert(sizeof(LazyVector<std::string>) == sizeof(void*));
    LazyVector<std::string> nodes;
    EXPECT_TRUE(nodes.empty());
    EXPECT_EQ(nodes.get(), std::vector<std::string>{});
    nodes.push_back("n1");
    nodes.emplace_back("n2");
    const std::vector<std::string>& read = nodes;
    EXPECT_EQ(read, (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(nodes.front(), "n1");
    EXPECT_EQ(nodes[1], "n2");
    EXPECT_THROW(static_cast<void>(std::as_const(nodes).at(2)), std::out_of_range);
}

TEST(LazyVector, CopiesAreIndependentAndEmptyingFreesTheVector) {
    LazyVector<std::string> original = std::vector<std::string>{"a", "b", "a"};
    LazyVector<std::string> copy = original;
    copy.erase_if([](const std::string& name) { return name == "a"; });
    EXPECT_EQ(copy.get(), std::vector<std::string>{"b"});
    EXPECT_EQ(original.size(), 3u);
    copy.erase_if([](const std::string& name) { return name == "b"; });
    EXPECT_TRUE(copy.empty());
    EXPECT_EQ(&copy.get(), &LazyVector<std::string>().get());  // the shared empty vector
    original = std::vector<std::string>{};
    EXPECT_TRUE(original.empty());
    EXPECT_EQ(original, copy);
}

}  // namespace
}  // namespace cohort::ctld
