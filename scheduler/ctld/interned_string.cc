#include "scheduler/ctld/interned_string.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace cohort::ctld {
namespace {

// Texts by content. Entries whose last holder is gone are swept when the table has doubled
// since the last sweep, so the sweep's cost is spread over the insertions that caused it.
class Pool {
public:
    std::shared_ptr<const std::string> intern(std::string_view text) {
        std::lock_guard lock(mutex_);
        auto it = texts_.find(text);
        if (it != texts_.end()) {
            if (auto held = it->second.lock()) {
                return held;
            }
            texts_.erase(it);
        }
        if (texts_.size() >= 2 * swept_size_) {
            sweep();
        }
        auto held = std::make_shared<const std::string>(text);
        texts_.emplace(*held, held);
        return held;
    }

    size_t size() {
        std::lock_guard lock(mutex_);
        sweep();
        return texts_.size();
    }

private:
    void sweep() {
        for (auto it = texts_.begin(); it != texts_.end();) {
            it = it->second.expired() ? texts_.erase(it) : std::next(it);
        }
        swept_size_ = std::max<size_t>(texts_.size(), 64);
    }

    // Looks a std::string key up by a string_view without building a string.
    struct Hash {
        using is_transparent = void;

        size_t operator()(std::string_view text) const {
            return std::hash<std::string_view>{}(text);
        }
    };

    std::mutex mutex_;
    // The key is a copy of its own: a view into the held text would dangle once the last
    // holder frees it, before the sweep erases the entry.
    std::unordered_map<std::string, std::weak_ptr<const std::string>, Hash, std::equal_to<>> texts_;
    size_t swept_size_ = 64;
};

Pool& pool() {
    static Pool* the_pool = new Pool;  // never destroyed: handles may outlive static teardown
    return *the_pool;
}

}  // namespace

InternedString::InternedString(std::string_view text) {
    if (!text.empty()) {
        text_ = pool().intern(text);
    }
}

size_t InternedString::pool_size() {
    return pool().size();
}

const std::string& InternedString::empty_string() {
    static const std::string empty;
    return empty;
}

}  // namespace cohort::ctld
