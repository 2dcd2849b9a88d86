// -C/--constraint and --prefer: expressions over node features, as Slurm writes them.
//   a&b     nodes with both          a|b       nodes with either
//   [a|b]   every node of the job has the same one of them (a "matching OR")
//   a*2     at least two of the job's nodes have a     (a&b)|c  grouping
// `&` binds tighter than `|`. Features are names of letters, digits, '_', '-', '.' and ':'.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace cohort {

struct FeatureExpr {
    enum class Kind : uint8_t {
        kFeature,     // `name`, with `count` > 0 when written name*count
        kAnd,         // every operand
        kOr,          // any operand
        kMatchingOr,  // [...]: one alternative of the single operand for all the job's nodes
    };
    Kind kind = Kind::kFeature;
    std::string name;
    uint32_t count = 0;
    std::vector<FeatureExpr> operands;
};

// Parses `text`; errors name `option`, the text and what is accepted.
Result<FeatureExpr> parse_feature_expr(const std::string& option, const std::string& text);

// Whether a node with `features` may hold a task of a job with this constraint. A matching
// OR accepts a node with any alternative (which one all nodes share is chosen with
// matching_alternatives()); `a*N` accepts nodes with `a`.
bool node_matches(const FeatureExpr& expr, const std::vector<std::string>& features);

// The alternatives of a matching OR at the top of `expr` (`[a|b]` gives a and b), each an
// expression every node of the job must match; `expr` alone when it has none.
std::vector<FeatureExpr> matching_alternatives(const FeatureExpr& expr);

// Every feature name `expr` uses, in written order, repeats kept.
std::vector<std::string> feature_names(const FeatureExpr& expr);

}  // namespace cohort
