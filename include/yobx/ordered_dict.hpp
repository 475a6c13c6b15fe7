// yobx/ordered_dict.hpp — an insertion-ordered, string-keyed dictionary.
//
// Python's dict keeps insertion order and keyword arguments rely on it; the
// standard library has no such map. Lookups are linear: argument dicts hold a
// handful of keys, and a vector of pairs is faster than hashing for them.
#pragma once

#include <yobx/error.hpp>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// A string-keyed map that iterates in insertion order, like a Python dict.
///   yobx::ordered_dict<int> d{{"b", 1}, {"a", 2}};
///   d["c"] = 3;             // appended
///   for (auto& [k, v] : d)  // b, a, c
template <class V>
class ordered_dict {
public:
    using key_type = std::string;
    using mapped_type = V;
    using value_type = std::pair<std::string, V>;
    using iterator = typename std::vector<value_type>::iterator;
    using const_iterator = typename std::vector<value_type>::const_iterator;

    ordered_dict() = default;
    /// Later duplicates overwrite earlier values and keep the first position, as in Python.
    ordered_dict(std::initializer_list<value_type> items) {
        for (const auto& [k, v] : items) insert_or_assign(k, v);
    }

    iterator begin() noexcept { return items_.begin(); }
    iterator end() noexcept { return items_.end(); }
    const_iterator begin() const noexcept { return items_.begin(); }
    const_iterator end() const noexcept { return items_.end(); }
    std::size_t size() const noexcept { return items_.size(); }
    bool empty() const noexcept { return items_.empty(); }
    void reserve(std::size_t n) { items_.reserve(n); }
    void clear() noexcept { items_.clear(); }

    iterator find(std::string_view key) {
        return std::find_if(items_.begin(), items_.end(), [&](const value_type& p) { return p.first == key; });
    }
    const_iterator find(std::string_view key) const {
        return std::find_if(items_.begin(), items_.end(), [&](const value_type& p) { return p.first == key; });
    }
    bool contains(std::string_view key) const { return find(key) != end(); }

    /// The value of key; throws value_error naming the key when it is absent.
    V& at(std::string_view key) {
        auto it = find(key);
        if (it == end()) throw value_error("ordered_dict: no key '" + std::string(key) + "'");
        return it->second;
    }
    const V& at(std::string_view key) const { return const_cast<ordered_dict*>(this)->at(key); }

    /// The value of key, appended default-constructed when absent.
    V& operator[](std::string_view key) {
        auto it = find(key);
        if (it != end()) return it->second;
        items_.emplace_back(std::string(key), V{});
        return items_.back().second;
    }

    /// Sets key to value; a new key goes last, an existing one keeps its position.
    template <class U>
    std::pair<iterator, bool> insert_or_assign(std::string_view key, U&& value) {
        auto it = find(key);
        if (it != end()) {
            it->second = std::forward<U>(value);
            return {it, false};
        }
        items_.emplace_back(std::string(key), std::forward<U>(value));
        return {items_.end() - 1, true};
    }

    /// Appends without looking for the key; the caller guarantees it is new (used by fast paths).
    /// Returns the appended value.
    template <class U>
    V& append_unique(std::string key, U&& value) {
        return items_.emplace_back(std::move(key), std::forward<U>(value)).second;
    }

    /// Removes key; returns whether it was there. Later keys keep their relative order.
    bool erase(std::string_view key) {
        auto it = find(key);
        if (it == end()) return false;
        items_.erase(it);
        return true;
    }

    /// Same keys, values and order, like collections.OrderedDict (not like dict, which ignores order).
    friend bool operator==(const ordered_dict& a, const ordered_dict& b) { return a.items_ == b.items_; }

private:
    std::vector<value_type> items_;
};

}  // namespace yobx
