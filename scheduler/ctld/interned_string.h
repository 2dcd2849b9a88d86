// A string many jobs share (user, account, partition, QoS, working directory, output
// pattern, wait reason), held once: each job keeps an 8-byte handle instead of its own copy.
// 100,000 pending jobs of a few users in a few directories then cost one copy of each name.
// A string is freed when the last job holding it is, so a long-running controller does not
// accumulate the names of jobs long gone. Safe to create and copy from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <fmt/format.h>

namespace cohort::ctld {

// One held text and how many handles hold it. The count is in the text, not beside it as
// a shared_ptr's is, so a handle is one pointer: a job holds about 30 of them.
struct InternedText {
    explicit InternedText(std::string_view text_in) : text(text_in) {}

    const std::string text;
    mutable std::atomic<uint32_t> holders{0};
};

inline void intrusive_ptr_add_ref(const InternedText* text) {
    text->holders.fetch_add(1, std::memory_order_relaxed);
}

// The last holder's release removes the text from the pool (interned_string.cc).
void intrusive_ptr_release(const InternedText* text);

class InternedString {
public:
    InternedString() = default;
    InternedString(std::string_view text);  // NOLINT(google-explicit-constructor): a string

    InternedString(const std::string& text) : InternedString(std::string_view(text)) {}

    InternedString(const char* text) : InternedString(std::string_view(text)) {}

    // Assigning the text already held costs a comparison, not a lookup: a pass sets every
    // pending job's wait reason, mostly to what it was.
    InternedString& operator=(std::string_view text) {
        if (str() != text) {
            *this = InternedString(text);
        }
        return *this;
    }

    InternedString& operator=(const std::string& text) { return *this = std::string_view(text); }

    InternedString& operator=(const char* text) { return *this = std::string_view(text); }

    const std::string& str() const { return text_ ? text_->text : empty_string(); }

    operator const std::string&() const { return str(); }  // NOLINT: reads as a string

    operator std::string_view() const { return str(); }  // NOLINT: reads as a string

    bool empty() const { return !text_ || text_->text.empty(); }

    size_t size() const { return str().size(); }

    const char* c_str() const { return str().c_str(); }

    // Equal texts share one copy, so equality is a pointer comparison.
    friend bool operator==(const InternedString& a, const InternedString& b) {
        return a.text_ == b.text_ || a.str() == b.str();
    }

    friend bool operator!=(const InternedString& a, const InternedString& b) { return !(a == b); }

    friend bool operator==(const InternedString& a, std::string_view b) { return a.str() == b; }

    friend bool operator!=(const InternedString& a, std::string_view b) { return a.str() != b; }

    friend bool operator==(const InternedString& a, const std::string& b) { return a.str() == b; }

    friend bool operator!=(const InternedString& a, const std::string& b) { return a.str() != b; }

    friend bool operator==(const InternedString& a, const char* b) { return a.str() == b; }

    friend bool operator!=(const InternedString& a, const char* b) { return a.str() != b; }

    friend bool operator<(const InternedString& a, const InternedString& b) {
        return a.str() < b.str();
    }

    friend std::ostream& operator<<(std::ostream& out, const InternedString& s) {
        return out << s.str();
    }

    // How many distinct strings are held now (for tests and memory figures).
    static size_t pool_size();

private:
    static const std::string& empty_string();

    boost::intrusive_ptr<const InternedText> text_;  // null: the empty string
};

}  // namespace cohort::ctld

template <>
struct fmt::formatter<cohort::ctld::InternedString> : fmt::formatter<std::string_view> {
    template <class Context>
    auto format(const cohort::ctld::InternedString& s, Context& ctx) const {
        return fmt::formatter<std::string_view>::format(s.str(), ctx);
    }
};
