// Hostlist expressions (`node[001-004,7],gpu-[1-2]-[0-3]`): expanding them and compressing back.
#include "common/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <variant>

#include <fmt/format.h>

namespace cohort {
namespace {

// One `N` or `N-M` item of a bracket group; width is the length of N as written.
struct Range {
    uint64_t lo = 0;
    uint64_t hi = 0;
    size_t width = 0;
};

// A token is literal text and bracket groups, in order.
using Piece = std::variant<std::string, std::vector<Range>>;

// Longer digit runs could overflow uint64; no real host number is that long.
constexpr size_t kMaxDigits = 18;

std::string pad(uint64_t value, size_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width) {
        digits.insert(0, width - digits.size(), '0');
    }
    return digits;
}

std::optional<uint64_t> parse_number(std::string_view text) {
    if (text.empty() || text.size() > kMaxDigits) {
        return std::nullopt;
    }
    uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    return value;
}

class Expander {
public:
    explicit Expander(std::string_view expr) : expr_(expr) {}

    Result<std::vector<std::string>> run() {
        Result<std::vector<std::string_view>> tokens = split_tokens();
        if (!tokens) {
            return tokens.status();
        }
        std::vector<std::vector<Piece>> parsed;
        size_t total = 0;
        for (std::string_view token : *tokens) {
            Result<std::vector<Piece>> pieces = parse_token(token);
            if (!pieces) {
                return pieces.status();
            }
            // Count before generating so an oversized expression fails without allocating.
            size_t count = 1;
            for (const Piece& piece : *pieces) {
                if (const auto* ranges = std::get_if<std::vector<Range>>(&piece)) {
                    count = saturating_mul(count, group_size(*ranges));
                }
            }
            total = std::min(total + count, kMaxHostlistHosts + 1);
            if (total > kMaxHostlistHosts) {
                return fail(fmt::format("expands to more than {} hosts", kMaxHostlistHosts));
            }
            parsed.push_back(std::move(*pieces));
        }
        std::vector<std::string> hosts;
        hosts.reserve(total);
        for (const std::vector<Piece>& pieces : parsed) {
            append_product(pieces, 0, "", hosts);
        }
        return hosts;
    }

private:
    Status fail(const std::string& why) const {
        return Status::invalid("invalid hostlist '" + std::string(expr_) + "': " + why);
    }

    static size_t saturating_mul(size_t a, size_t b) {
        size_t product = 0;
        if (__builtin_mul_overflow(a, b, &product) || product > kMaxHostlistHosts) {
            return kMaxHostlistHosts + 1;
        }
        return product;
    }

    static size_t group_size(const std::vector<Range>& ranges) {
        size_t size = 0;
        for (const Range& range : ranges) {
            const uint64_t span = range.hi - range.lo;
            size += span >= kMaxHostlistHosts ? kMaxHostlistHosts + 1 : span + 1;
            size = std::min(size, kMaxHostlistHosts + 1);
        }
        return size;
    }

    // Splits on commas outside brackets, checking that brackets balance and do not nest.
    Result<std::vector<std::string_view>> split_tokens() const {
        std::vector<std::string_view> tokens;
        size_t start = 0;
        bool in_group = false;
        for (size_t i = 0; i <= expr_.size(); ++i) {
            const char c = i < expr_.size() ? expr_[i] : ',';
            const bool at_end = i == expr_.size();
            if (c == '[' && in_group) {
                return fail("nested '[' in '" + std::string(token_around(start)) + "'");
            }
            if (c == '[') {
                in_group = true;
            } else if (c == ']' && !in_group) {
                return fail("unbalanced ']' in '" + std::string(token_around(start)) + "'");
            } else if (c == ']') {
                in_group = false;
            } else if (c == ',' && at_end && in_group) {
                return fail("unbalanced '[' in '" + std::string(expr_.substr(start)) + "'");
            } else if (c == ',' && !in_group) {
                if (i == start) {
                    return fail("empty host name (a doubled, leading or trailing comma?)");
                }
                tokens.push_back(expr_.substr(start, i - start));
                start = i + 1;
            }
        }
        return tokens;
    }

    // The token that starts at start, up to the next comma outside brackets, for messages.
    std::string_view token_around(size_t start) const {
        size_t end = start;
        int depth = 0;
        while (end < expr_.size() && !(expr_[end] == ',' && depth == 0)) {
            depth += expr_[end] == '[' ? 1 : expr_[end] == ']' ? -1 : 0;
            depth = std::max(depth, 0);
            ++end;
        }
        return expr_.substr(start, end - start);
    }

    // REQUIRES: brackets in token balance and do not nest (split_tokens checked).
    Result<std::vector<Piece>> parse_token(std::string_view token) const {
        std::vector<Piece> pieces;
        size_t pos = 0;
        while (pos < token.size()) {
            const size_t open = token.find('[', pos);
            std::string_view literal = token.substr(pos, open - pos);
            for (char c : literal) {
                if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
                    return fail("blank or control character in '" + std::string(token) + "'");
                }
            }
            if (!literal.empty()) {
                pieces.emplace_back(std::string(literal));
            }
            if (open == std::string_view::npos) {
                break;
            }
            const size_t close = token.find(']', open);
            Result<std::vector<Range>> ranges =
                    parse_group(token.substr(open + 1, close - open - 1), token);
            if (!ranges) {
                return ranges.status();
            }
            pieces.emplace_back(std::move(*ranges));
            pos = close + 1;
        }
        return pieces;
    }

    Result<std::vector<Range>> parse_group(std::string_view inside, std::string_view token) const {
        if (inside.empty()) {
            return fail("empty brackets in '" + std::string(token) + "'");
        }
        std::vector<Range> ranges;
        size_t start = 0;
        while (start <= inside.size()) {
            size_t comma = inside.find(',', start);
            if (comma == std::string_view::npos) {
                comma = inside.size();
            }
            std::string_view item = inside.substr(start, comma - start);
            const size_t dash = item.find('-');
            std::string_view lo_text = item.substr(0, dash);
            std::string_view hi_text =
                    dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
            std::optional<uint64_t> lo = parse_number(lo_text);
            std::optional<uint64_t> hi = parse_number(hi_text);
            if (!lo || !hi) {
                return fail("'" + std::string(item) + "' in '" + std::string(token)
                            + "' is not a number or an N-M range");
            }
            if (*lo > *hi) {
                return fail("reversed range '" + std::string(item) + "' in '" + std::string(token)
                            + "' (write the lower number first)");
            }
            ranges.push_back({*lo, *hi, lo_text.size()});
            start = comma + 1;
        }
        return ranges;
    }

    static void append_product(const std::vector<Piece>& pieces,
                               size_t index,
                               const std::string& head,
                               std::vector<std::string>& out) {
        if (index == pieces.size()) {
            out.push_back(head);
            return;
        }
        if (const auto* literal = std::get_if<std::string>(&pieces[index])) {
            append_product(pieces, index + 1, head + *literal, out);
            return;
        }
        for (const Range& range : std::get<std::vector<Range>>(pieces[index])) {
            for (uint64_t n = range.lo; n <= range.hi; ++n) {
                append_product(pieces, index + 1, head + pad(n, range.width), out);
            }
        }
    }

    std::string_view expr_;
};

// A host split into a prefix and its trailing digits.
struct NumberedHost {
    std::string_view prefix;
    uint64_t value = 0;
    size_t length = 0;    // digits as written
    bool padded = false;  // written with leading zeros, so only this exact width reproduces it
};

std::optional<NumberedHost> split_number(const std::string& host) {
    if (host.find_first_of("[],") != std::string::npos) {
        return std::nullopt;  // cannot sit inside a bracket expression
    }
    size_t start = host.size();
    while (start > 0 && host[start - 1] >= '0' && host[start - 1] <= '9') {
        --start;
    }
    const std::string_view name = host;
    const std::string_view digits = name.substr(start);
    std::optional<uint64_t> value = parse_number(digits);
    if (!value) {
        return std::nullopt;
    }
    return NumberedHost{name.substr(0, start), *value, digits.size(),
                        digits.size() > 1 && digits[0] == '0'};
}

// Adjacent hosts written as one `prefix[...]` group. Every member must be reproduced by padding
// its number to one width in [min_width, max_width]: `node9,node10` share width 0 or 1, and
// `node09,node10` share width 2, but `node1,node01` have none in common.
class Group {
public:
    bool try_add(const std::string& host, const NumberedHost& numbered) {
        size_t lo = numbered.padded ? numbered.length : 0;
        size_t hi = numbered.length;
        if (!members_.empty()) {
            if (numbered.prefix != prefix_) {
                return false;
            }
            lo = std::max(lo, min_width_);
            hi = std::min(hi, max_width_);
            if (lo > hi) {
                return false;
            }
        }
        prefix_ = numbered.prefix;
        min_width_ = lo;
        max_width_ = hi;
        members_.push_back({host, numbered.value});
        return true;
    }

    bool empty() const { return members_.empty(); }

    std::string render() const {
        if (members_.size() == 1) {
            return members_[0].host;
        }
        std::string out = std::string(prefix_) + "[";
        for (size_t i = 0; i < members_.size();) {
            size_t j = i;
            while (j + 1 < members_.size() && members_[j + 1].value == members_[j].value + 1) {
                ++j;
            }
            out += i == 0 ? "" : ",";
            out += pad(members_[i].value, min_width_);
            if (j > i) {
                out += "-" + pad(members_[j].value, min_width_);
            }
            i = j + 1;
        }
        return out + "]";
    }

private:
    struct Member {
        std::string host;
        uint64_t value;
    };

    std::string prefix_;
    size_t min_width_ = 0;
    size_t max_width_ = 0;
    std::vector<Member> members_;
};

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view expr) {
    return Expander(expr).run();
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
    std::string out;
    auto emit = [&out](const std::string& part) {
        out += out.empty() ? "" : ",";
        out += part;
    };
    Group group;
    for (const std::string& host : hosts) {
        std::optional<NumberedHost> numbered = split_number(host);
        if (!numbered) {
            if (!group.empty()) {
                emit(group.render());
                group = Group();
            }
            emit(host);
            continue;
        }
        if (!group.try_add(host, *numbered)) {
            emit(group.render());
            group = Group();
            group.try_add(host, *numbered);
        }
    }
    if (!group.empty()) {
        emit(group.render());
    }
    return out;
}

std::string compact_counts(const std::vector<uint32_t>& counts) {
    std::string out;
    for (size_t i = 0; i < counts.size();) {
        size_t run = 1;
        while (i + run < counts.size() && counts[i + run] == counts[i]) {
            ++run;
        }
        out += (out.empty() ? "" : ",") + std::to_string(counts[i]);
        if (run > 1) {
            out += "(x" + std::to_string(run) + ")";
        }
        i += run;
    }
    return out;
}

}  // namespace cohort
