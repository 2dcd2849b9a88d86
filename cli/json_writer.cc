#include "cli/json_writer.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace cohort::cli {
namespace {

// Printable ASCII other than the quote and backslash is written as it is; anything else
// (control characters, UTF-8, invalid bytes) is left to nlohmann's escaping.
bool needs_escaping(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\';
    });
}

}  // namespace

void JsonWriter::new_line() {
    out_ += '\n';
    out_.append(2 * (depth_ + level_is_empty_.size()), ' ');
}

void JsonWriter::start_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (level_is_empty_.empty()) {
        return;
    }
    if (!level_is_empty_.back()) {
        out_ += ',';
    }
    level_is_empty_.back() = false;
    new_line();
}

JsonWriter& JsonWriter::key(std::string_view name) {
    start_value();
    write_string(name);
    out_ += ": ";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::open(char bracket) {
    start_value();
    out_ += bracket;
    level_is_empty_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
    const bool was_empty = level_is_empty_.back();
    level_is_empty_.pop_back();
    if (!was_empty) {
        new_line();
    }
    out_ += bracket;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
    start_value();
    write_string(text);
    return *this;
}

void JsonWriter::write_string(std::string_view text) {
    if (needs_escaping(text)) {
        // Invalid UTF-8 becomes U+FFFD: one job's odd name must not fail the whole listing.
        out_ += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
}

JsonWriter& JsonWriter::value(bool flag) {
    start_value();
    out_ += flag ? "true" : "false";
    return *this;
}

}  // namespace cohort::cli
