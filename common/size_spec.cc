// Parsing memory sizes (`--mem=16G`) and counts (`--ntasks=8`) given by users.
#include "common/size_spec.h"

#include <optional>
#include <string>

#include <fmt/format.h>

namespace cohort {
namespace {

// A non-empty run of decimal digits that fits in int64.
std::optional<int64_t> parse_digits(std::string_view digits) {
    if (digits.empty()) {
        return std::nullopt;
    }
    int64_t value = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        if (__builtin_mul_overflow(value, 10, &value)
            || __builtin_add_overflow(value, c - '0', &value)) {
            return std::nullopt;
        }
    }
    return value;
}

Status invalid_size(std::string_view text) {
    return Status::invalid("invalid size '" + std::string(text) +
                           "' (accepted: a number with an optional K, M, G or T suffix, e.g. "
                           "4000, 500M, 16G)");
}

}  // namespace

Result<int64_t> parse_memory_mib(std::string_view text) {
    size_t end = 0;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') {
        ++end;
    }
    std::optional<int64_t> number = parse_digits(text.substr(0, end));
    std::string_view suffix = text.substr(end);
    if (!number) {
        return invalid_size(text);
    }
    // The optional B only follows a unit letter; alone it would mean bytes.
    if (suffix.size() == 2 && (suffix[1] == 'b' || suffix[1] == 'B')) {
        suffix.remove_suffix(1);
    }
    if (suffix.size() > 1) {
        return invalid_size(text);
    }
    const char unit = suffix.empty() ? 'M' : suffix[0];
    int64_t mib = 0;
    switch (unit) {
        case 'k':
        case 'K':
            mib = *number / 1024 + (*number % 1024 != 0 ? 1 : 0);
            return mib;
        case 'm':
        case 'M':
            return *number;
        case 'g':
        case 'G':
            if (__builtin_mul_overflow(*number, int64_t{1024}, &mib)) {
                return invalid_size(text);
            }
            return mib;
        case 't':
        case 'T':
            if (__builtin_mul_overflow(*number, int64_t{1024} * 1024, &mib)) {
                return invalid_size(text);
            }
            return mib;
        default:
            return invalid_size(text);
    }
}

Result<int64_t> parse_count(std::string_view text, int64_t min) {
    const bool negative = !text.empty() && text[0] == '-';
    std::optional<int64_t> magnitude = parse_digits(negative ? text.substr(1) : text);
    if (!magnitude || (negative && *magnitude == 0)
        || (negative ? -*magnitude : *magnitude) < min) {
        return Status::invalid(
                fmt::format("invalid count '{}' (accepted: a whole number >= {})", text, min));
    }
    return negative ? -*magnitude : *magnitude;
}

Result<int64_t> parse_positive_count(std::string_view text) {
    return parse_count(text, 1);
}

}  // namespace cohort
