#include "common/comma_list.h"

#include <algorithm>

namespace cohort {

std::vector<std::string> split_comma_list(const std::string& text) {
    std::vector<std::string> items;
    for (size_t start = 0; start < text.size();) {
        const size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) {
            items.push_back(text.substr(start, comma - start));
        }
        start = comma + 1;
    }
    return items;
}

std::string join_comma_list(const std::vector<std::string>& items, const std::string& when_empty) {
    std::string out;
    for (const std::string& item : items) {
        out += (out.empty() ? "" : ",") + item;
    }
    return out.empty() ? when_empty : out;
}

}  // namespace cohort
