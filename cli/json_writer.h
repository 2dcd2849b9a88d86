// JSON text written a value at a time, laid out as nlohmann's dump(2) lays it out.
//
// `queue --json` at 10,000 jobs spent nine tenths of its time building, printing and freeing
// one nlohmann document per job (about 90 map nodes each). Writing the text straight out
// costs a few appends per field.
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace cohort::cli {

class JsonWriter {
public:
    // Appends to `out`; `depth` is the nesting level the first value is written at (its
    // closing bracket is indented by two spaces per level).
    explicit JsonWriter(std::string& out, int depth = 0) : out_(out), depth_(depth) {}

    JsonWriter& begin_object() { return open('{'); }

    JsonWriter& end_object() { return close('}'); }

    JsonWriter& begin_array() { return open('['); }

    JsonWriter& end_array() { return close(']'); }

    // The next value is this member's; only inside an object.
    JsonWriter& key(std::string_view name);

    JsonWriter& value(std::string_view text);

    JsonWriter& value(const char* text) { return value(std::string_view(text)); }

    JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }

    JsonWriter& value(bool flag);

    template <std::integral Number>
    JsonWriter& value(Number number) {
        start_value();
        fmt::format_to(std::back_inserter(out_), "{}", number);
        return *this;
    }

    // `"name": value` in one call.
    template <class Value>
    JsonWriter& member(std::string_view name, const Value& member_value) {
        return key(name).value(member_value);
    }

private:
    JsonWriter& open(char bracket);
    JsonWriter& close(char bracket);
    // Before a value: the comma, line break and indent an array's element needs.
    void start_value();
    void new_line();
    void write_string(std::string_view text);  // quoted and escaped

    std::string& out_;
    int depth_;
    std::vector<bool> level_is_empty_;  // one per open object or array
    bool after_key_ = false;
};

}  // namespace cohort::cli
