// A vector that is one pointer while it holds nothing: most of a job's lists (its nodes'
// CPUs and GPUs, the nodes it excludes, ...) stay empty until it starts or forever, and
// 100,000 pending jobs carry several each. Reads as a const std::vector<T>&; writes go
// through the few members below, which allocate the vector on the first item.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace cohort::ctld {

template <class T>
class LazyVector {
public:
    LazyVector() = default;

    LazyVector(std::vector<T> items) { *this = std::move(items); }  // NOLINT: a vector

    LazyVector(const LazyVector& other) { *this = other.get(); }

    LazyVector(LazyVector&&) noexcept = default;

    LazyVector& operator=(const LazyVector& other) { return *this = other.get(); }

    LazyVector& operator=(LazyVector&&) noexcept = default;

    LazyVector& operator=(std::vector<T> items) {
        if (items.empty()) {
            items_.reset();
        } else {
            items_ = std::make_unique<std::vector<T>>(std::move(items));
        }
        return *this;
    }

    const std::vector<T>& get() const { return items_ ? *items_ : kEmpty; }

    operator const std::vector<T>&() const { return get(); }  // NOLINT: reads as a vector

    bool empty() const { return !items_ || items_->empty(); }

    size_t size() const { return get().size(); }

    auto begin() const { return get().begin(); }

    auto end() const { return get().end(); }

    const T& operator[](size_t at) const { return (*items_)[at]; }

    T& operator[](size_t at) { return (*items_)[at]; }

    const T& front() const { return get().front(); }

    const T& at(size_t at) const { return get().at(at); }

    T& at(size_t at) { return mutable_items().at(at); }

    void push_back(T item) { mutable_items().push_back(std::move(item)); }

    template <class... Args>
    T& emplace_back(Args&&... args) {
        return mutable_items().emplace_back(std::forward<Args>(args)...);
    }

    void clear() { items_.reset(); }

    template <class Predicate>
    void erase_if(Predicate predicate) {
        if (items_ && std::erase_if(*items_, predicate) > 0 && items_->empty()) {
            items_.reset();
        }
    }

    friend bool operator==(const LazyVector& a, const LazyVector& b) { return a.get() == b.get(); }

private:
    std::vector<T>& mutable_items() {
        if (!items_) {
            items_ = std::make_unique<std::vector<T>>();
        }
        return *items_;
    }

    static inline const std::vector<T> kEmpty;

    std::unique_ptr<std::vector<T>> items_;  // null: empty
};

}  // namespace cohort::ctld
