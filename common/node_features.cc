// A recursive-descent parser for node feature expressions.
#include "common/node_features.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace cohort {
namespace {

constexpr const char* kAccepted =
        "features joined by & (and) or | (or), grouped with ( ) or [ ] (all nodes alike), "
        "each optionally *N, e.g. a100&ib or [rack1|rack2]";

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.'
           || c == ':';
}

class Parser {
public:
    Parser(const std::string& option, const std::string& text) : option_(option), text_(text) {}

    Result<FeatureExpr> parse() {
        auto expr = parse_or();
        if (!expr) {
            return expr;
        }
        if (pos_ != text_.size()) {
            return error(fmt::format("unexpected '{}'", text_[pos_]));
        }
        return expr;
    }

private:
    Result<FeatureExpr> parse_or() {
        return parse_joined('|', FeatureExpr::Kind::kOr, [this] { return parse_and(); });
    }

    Result<FeatureExpr> parse_and() {
        return parse_joined('&', FeatureExpr::Kind::kAnd, [this] { return parse_factor(); });
    }

    template <class Operand>
    Result<FeatureExpr> parse_joined(char op, FeatureExpr::Kind kind, Operand operand) {
        auto first = operand();
        if (!first) {
            return first;
        }
        if (pos_ >= text_.size() || text_[pos_] != op) {
            return first;
        }
        FeatureExpr joined;
        joined.kind = kind;
        joined.operands.push_back(std::move(*first));
        while (pos_ < text_.size() && text_[pos_] == op) {
            ++pos_;
            auto next = operand();
            if (!next) {
                return next;
            }
            joined.operands.push_back(std::move(*next));
        }
        return joined;
    }

    Result<FeatureExpr> parse_factor() {
        if (pos_ >= text_.size()) {
            return error("a feature is missing at the end");
        }
        const char c = text_[pos_];
        if (c == '(' || c == '[') {
            const char close = c == '(' ? ')' : ']';
            ++pos_;
            auto inner = parse_or();
            if (!inner) {
                return inner;
            }
            if (pos_ >= text_.size() || text_[pos_] != close) {
                return error(fmt::format("'{}' is not closed", c));
            }
            ++pos_;
            if (c == '(') {
                return inner;
            }
            FeatureExpr matching;
            matching.kind = FeatureExpr::Kind::kMatchingOr;
            matching.operands.push_back(std::move(*inner));
            return matching;
        }
        const size_t start = pos_;
        while (pos_ < text_.size() && is_name_char(text_[pos_])) {
            ++pos_;
        }
        if (pos_ == start) {
            return error(fmt::format("a feature is missing before '{}'", c));
        }
        FeatureExpr feature;
        feature.name = text_.substr(start, pos_ - start);
        if (pos_ < text_.size() && text_[pos_] == '*') {
            ++pos_;
            const size_t digits = pos_;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                ++pos_;
            }
            const std::string count = text_.substr(digits, pos_ - digits);
            if (count.empty() || count.size() > 6 || std::stoul(count) == 0) {
                return error("'*' must be followed by a node count of 1 or more");
            }
            feature.count = static_cast<uint32_t>(std::stoul(count));
        }
        return feature;
    }

    Status error(const std::string& what) const {
        return Status::invalid(
                fmt::format("{}: invalid feature specification '{}': {} (accepted: {})", option_,
                            text_, what, kAccepted));
    }

    const std::string& option_;
    const std::string& text_;
    size_t pos_ = 0;
};

void collect_names(const FeatureExpr& expr, std::vector<std::string>& out) {
    if (expr.kind == FeatureExpr::Kind::kFeature) {
        out.push_back(expr.name);
    }
    for (const FeatureExpr& operand : expr.operands) {
        collect_names(operand, out);
    }
}

}  // namespace

Result<FeatureExpr> parse_feature_expr(const std::string& option, const std::string& text) {
    return Parser(option, text).parse();
}

bool node_matches(const FeatureExpr& expr, const std::vector<std::string>& features) {
    switch (expr.kind) {
        case FeatureExpr::Kind::kFeature:
            return std::find(features.begin(), features.end(), expr.name) != features.end();
        case FeatureExpr::Kind::kAnd:
            return std::all_of(expr.operands.begin(), expr.operands.end(),
                               [&](const FeatureExpr& e) { return node_matches(e, features); });
        case FeatureExpr::Kind::kOr:
        case FeatureExpr::Kind::kMatchingOr:
            return std::any_of(expr.operands.begin(), expr.operands.end(),
                               [&](const FeatureExpr& e) { return node_matches(e, features); });
    }
    return false;
}

std::vector<FeatureExpr> matching_alternatives(const FeatureExpr& expr) {
    if (expr.kind != FeatureExpr::Kind::kMatchingOr) {
        return {expr};
    }
    const FeatureExpr& inner = expr.operands.front();
    if (inner.kind == FeatureExpr::Kind::kOr) {
        return inner.operands;
    }
    return {inner};
}

std::vector<std::string> feature_names(const FeatureExpr& expr) {
    std::vector<std::string> names;
    collect_names(expr, names);
    return names;
}

}  // namespace cohort
