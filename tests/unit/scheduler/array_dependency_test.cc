// --array and --dependency: parsing, and when a dependency is met, pending, or never met.
#include <map>

#include <gtest/gtest.h>

#include "scheduler/dependency.h"
#include "scheduler/job_array.h"

namespace cohort::sched {
namespace {

TEST(ArraySpec, RangesListsStepsAndThrottle) {
    auto spec = parse_array_spec("0-99%10");
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->indexes.size(), 100u);
    EXPECT_EQ(spec->max_running, 10u);
    spec = parse_array_spec("1,3,5-9:2");
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->indexes.to_vector(), (std::vector<uint32_t>{1, 3, 5, 7, 9}));
    spec = parse_array_spec("0-15:4");
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->indexes.to_vector(), (std::vector<uint32_t>{0, 4, 8, 12}));
    EXPECT_EQ(spec->step, 4u);
    spec = parse_array_spec("7,0-6:3,3");  // out of order and overlapping, as Slurm allows
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->indexes.to_vector(), (std::vector<uint32_t>{0, 3, 6, 7}));
}

TEST(ArraySpec, AHundredThousandTasksAreOneRun) {
    auto spec = parse_array_spec("0-99999", 100001);
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->indexes.size(), 100000u);
    EXPECT_EQ(spec->indexes.runs().size(), 1u);
    EXPECT_EQ(spec->indexes.to_string(), "0-99999");
}

TEST(ArrayIndexes, PositionsErasureAndSlurmNotation) {
    ArrayIndexes indexes = parse_array_spec("1,3,10-20:5,30-33")->indexes;
    EXPECT_EQ(indexes.to_string(), "1,3,10-20:5,30-33");
    EXPECT_EQ(indexes.size(), 9u);
    EXPECT_EQ(indexes.position_of(15), 3u);
    EXPECT_EQ(indexes.position_of(31), 6u);
    EXPECT_FALSE(indexes.position_of(12));
    EXPECT_FALSE(indexes.position_of(99));
    EXPECT_EQ(indexes.at(0), 1u);
    EXPECT_EQ(indexes.at(4), 20u);
    EXPECT_EQ(indexes.at(8), 33u);
    EXPECT_TRUE(indexes.erase(31));  // splits a run
    EXPECT_TRUE(indexes.erase(10));  // shortens one from the front
    EXPECT_TRUE(indexes.erase(3));   // removes a single
    EXPECT_FALSE(indexes.erase(3));
    EXPECT_FALSE(indexes.erase(12));
    EXPECT_EQ(indexes.to_string(), "1,15-20:5,30,32-33");
    EXPECT_EQ(indexes.size(), 6u);
    EXPECT_EQ(indexes.to_vector(), (std::vector<uint32_t>{1, 15, 20, 30, 32, 33}));
    EXPECT_EQ(ArrayIndexes::from_sorted(indexes.to_vector()).to_vector(), indexes.to_vector());
}

TEST(ArraySpec, BadSpecsNameTheValue) {
    for (const char* text : {"", "5-2", "a-b", "0-10%0", "0-10:0", "0-1000000", "1,,2"}) {
        auto spec = parse_array_spec(text);
        EXPECT_FALSE(spec) << text;
        EXPECT_NE(spec.status().message().find("--array"), std::string::npos);
    }
    EXPECT_NE(parse_array_spec("0-1001").status().message().find("maximum of 1000"),
              std::string::npos);
    // Overlapping items are expanded to merge them: bounded by the maximum, not by memory.
    EXPECT_NE(parse_array_spec("1,0-1000,0-1000").status().message().find("list 2003 indexes"),
              std::string::npos);
}

TEST(Dependency, ParsesTypesListsAndSeparators) {
    auto dep = parse_dependency("afterok:12:13,afterany:14");
    ASSERT_TRUE(dep);
    EXPECT_FALSE(dep->any_of);
    ASSERT_EQ(dep->terms.size(), 2u);
    EXPECT_EQ(dep->terms[0].job_ids, (std::vector<uint64_t>{12, 13}));
    dep = parse_dependency("afterok:12?afternotok:13");
    ASSERT_TRUE(dep);
    EXPECT_TRUE(dep->any_of);
    dep = parse_dependency("after:12+5");
    ASSERT_TRUE(dep);
    EXPECT_EQ(dep->terms[0].delay_s, 300);
    dep = parse_dependency("42");
    ASSERT_TRUE(dep);
    EXPECT_EQ(dep->terms[0].type, DependencyType::kAfterAny);
    EXPECT_TRUE(parse_dependency("singleton"));
    for (const char* text :
         {"", "afterok", "afterfoo:1", "afterok:x", "afterok:1,afterany:2?3", "afterok:1+5"}) {
        EXPECT_FALSE(parse_dependency(text)) << text;
    }
}

class DependencyEvaluation : public ::testing::Test {
protected:
    DependencyStatus eval(const std::string& text, bool singleton_clear = true) {
        auto dep = parse_dependency(text);
        EXPECT_TRUE(dep) << dep.status().message();
        return evaluate_dependency(
                *dep,
                [this](uint64_t id) -> std::optional<OtherJob> {
                    auto it = jobs_.find(id);
                    if (it == jobs_.end()) {
                        return std::nullopt;
                    }
                    return it->second;
                },
                1000, singleton_clear);
    }

    std::map<uint64_t, OtherJob> jobs_ = {{1, {JobState::kCompleted, 10}},
                                          {2, {JobState::kFailed, 10}},
                                          {3, {JobState::kRunning, 990}},
                                          {4, {JobState::kPending, 0}},
                                          {5, {JobState::kRunning, 100}}};
};

TEST_F(DependencyEvaluation, AfterOkWaitsThenRunsOrIsNeverSatisfied) {
    EXPECT_EQ(eval("afterok:1"), DependencyStatus::kSatisfied);
    EXPECT_EQ(eval("afterok:3"), DependencyStatus::kWaiting);
    EXPECT_EQ(eval("afterok:2"), DependencyStatus::kNeverSatisfied);
}

TEST_F(DependencyEvaluation, AfterNotOkOnASuccessCanNeverRun) {
    EXPECT_EQ(eval("afternotok:1"), DependencyStatus::kNeverSatisfied);
    EXPECT_EQ(eval("afternotok:2"), DependencyStatus::kSatisfied);
    EXPECT_EQ(eval("afternotok:3"), DependencyStatus::kWaiting);
}

TEST_F(DependencyEvaluation, AfterAndItsDelay) {
    EXPECT_EQ(eval("after:4"), DependencyStatus::kWaiting);    // not started
    EXPECT_EQ(eval("after:3"), DependencyStatus::kSatisfied);  // started
    EXPECT_EQ(eval("after:3+1"), DependencyStatus::kWaiting);  // started 10 s ago, needs 60
    EXPECT_EQ(eval("after:5+1"), DependencyStatus::kSatisfied);
}

TEST_F(DependencyEvaluation, AllOfAndAnyOf) {
    EXPECT_EQ(eval("afterok:1,afterany:3"), DependencyStatus::kWaiting);
    EXPECT_EQ(eval("afterok:1,afterany:2"), DependencyStatus::kSatisfied);
    EXPECT_EQ(eval("afterok:2,afterany:3"), DependencyStatus::kNeverSatisfied);
    EXPECT_EQ(eval("afterok:2?afterany:3"), DependencyStatus::kWaiting);
    EXPECT_EQ(eval("afterok:2?afterok:1"), DependencyStatus::kSatisfied);
    EXPECT_EQ(eval("afterok:2?afternotok:1"), DependencyStatus::kNeverSatisfied);
}

TEST_F(DependencyEvaluation, UnknownJobAndSingleton) {
    EXPECT_EQ(eval("afterany:99"), DependencyStatus::kNeverSatisfied);
    EXPECT_EQ(eval("singleton", false), DependencyStatus::kWaiting);
    EXPECT_EQ(eval("singleton", true), DependencyStatus::kSatisfied);
}

}  // namespace
}  // namespace cohort::sched
