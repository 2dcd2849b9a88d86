#include "scheduler/ctld/interned_string.h"

#include <mutex>
#include <unordered_map>

namespace cohort::ctld {
namespace {

// Texts by content. A text's count goes from 0 to 1 (intern) and from 1 to 0 (the last
// release) only under the pool's lock, so a text found here is never one being freed.
class Pool {
public:
    boost::intrusive_ptr<const InternedText> intern(std::string_view text) {
        std::lock_guard lock(mutex_);
        auto it = texts_.find(text);
        if (it == texts_.end()) {
            auto* held = new InternedText(text);
            it = texts_.emplace(held->text, held).first;
        }
        return boost::intrusive_ptr<const InternedText>(it->second);
    }

    void release(const InternedText* text) {
        // Not the last holder: no lock needed, and no other thread can make it the last
        // while this one still holds it.
        uint32_t holders = text->holders.load(std::memory_order_relaxed);
        while (holders > 1) {
            if (text->holders.compare_exchange_weak(holders, holders - 1,
                                                    std::memory_order_acq_rel)) {
                return;
            }
        }
        std::lock_guard lock(mutex_);
        if (text->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            texts_.erase(text->text);
            delete text;
        }
    }

    size_t size() {
        std::lock_guard lock(mutex_);
        return texts_.size();
    }

private:
    std::mutex mutex_;
    // Keyed by a view of the held text itself, which lives as long as its entry.
    std::unordered_map<std::string_view, const InternedText*> texts_;
};

Pool& pool() {
    static Pool* the_pool = new Pool;  // never destroyed: handles may outlive static teardown
    return *the_pool;
}

}  // namespace

void intrusive_ptr_release(const InternedText* text) {
    pool().release(text);
}

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
