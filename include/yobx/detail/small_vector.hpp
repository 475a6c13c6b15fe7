// yobx/detail/small_vector.hpp — a vector that holds its first N elements
// inline: the canonical form's monomials (one factor inline: most are one
// atom) are built, copied and destroyed without an allocation.
//
// Only what the canonical form uses: construction (empty, a list), copy and
// move, element access, push_back/emplace_back, pop_back, erase of one element,
// reserve, clear. Iterators are pointers, invalidated by any growth, as
// std::vector's. Measured (docs/performance.md): 12% less time per random pair
// than std::vector<Factor>; the terms of a sum stay in a std::vector (inline
// terms made the polynomial larger and its moves slower, for no gain).
// Boost.Container's small_vector does this and more, and adds 0.4 s to every
// translation unit that includes <yobx/sym.hpp> at -O0. Beyond N elements the
// array comes from Alloc, a stateless allocator (the canonical form's keeps
// freed arrays per thread: detail/block_cache.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace yobx::detail {

template <class T, std::size_t N, class Alloc = std::allocator<T>>
class SmallVector {
    static_assert(N >= 1, "SmallVector needs an inline capacity of at least 1");
    // growth and copies never leave half-moved or half-copied elements behind
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_copy_constructible_v<T>,
                  "SmallVector holds elements that copy and move without throwing");

public:
    using value_type = T;
    using size_type = std::size_t;
    using iterator = T*;
    using const_iterator = const T*;

    SmallVector() noexcept = default;
    SmallVector(std::initializer_list<T> init) {
        reserve(init.size());
        for (const T& v : init) unchecked_emplace(v);
    }
    SmallVector(const SmallVector& o) {
        reserve(o.size_);
        for (const T& v : o) unchecked_emplace(v);
    }
    SmallVector(SmallVector&& o) noexcept { take(o); }
    SmallVector& operator=(const SmallVector& o) {
        if (this != &o) {
            SmallVector copy(o);
            *this = std::move(copy);
        }
        return *this;
    }
    SmallVector& operator=(SmallVector&& o) noexcept {
        if (this != &o) {
            clear();
            release();
            take(o);
        }
        return *this;
    }
    ~SmallVector() {
        clear();
        release();
    }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    iterator begin() noexcept { return data_; }
    iterator end() noexcept { return data_ + size_; }
    const_iterator begin() const noexcept { return data_; }
    const_iterator end() const noexcept { return data_ + size_; }
    T& operator[](size_type i) noexcept { return data_[i]; }
    const T& operator[](size_type i) const noexcept { return data_[i]; }
    T& front() noexcept { return data_[0]; }
    const T& front() const noexcept { return data_[0]; }
    T& back() noexcept { return data_[size_ - 1]; }
    const T& back() const noexcept { return data_[size_ - 1]; }

    void reserve(size_type n) {
        if (n > capacity_) grow(n);
    }
    template <class... Args>
    T& emplace_back(Args&&... args) {
        if (size_ == capacity_) {
            T value(std::forward<Args>(args)...);  // args may refer into this vector
            grow(2 * capacity_);
            return unchecked_emplace(std::move(value));
        }
        return unchecked_emplace(std::forward<Args>(args)...);
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    void pop_back() noexcept { data_[--size_].~T(); }
    void clear() noexcept {
        std::destroy(begin(), end());
        size_ = 0;
    }
    iterator erase(const_iterator pos) {
        T* p = data_ + (pos - data_);
        std::move(p + 1, end(), p);
        pop_back();
        return p;
    }

private:
    T* inline_data() noexcept { return std::launder(reinterpret_cast<T*>(buffer_)); }
    bool on_heap() const noexcept { return capacity_ > N; }

    template <class... Args>
    T& unchecked_emplace(Args&&... args) {
        T* p = ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
        ++size_;
        return *p;
    }
    void grow(size_type n) {
        T* fresh = Alloc().allocate(n);
        std::uninitialized_move(begin(), end(), fresh);
        std::destroy(begin(), end());
        release();
        data_ = fresh;
        capacity_ = static_cast<std::uint32_t>(n);
    }
    void release() noexcept {
        if (on_heap()) Alloc().deallocate(data_, capacity_);
        data_ = inline_data();
        capacity_ = N;
    }
    // Moves o's elements (or its heap block) here; o is left empty. *this is empty and inline.
    void take(SmallVector& o) noexcept {
        if (o.on_heap()) {
            data_ = o.data_;
            capacity_ = o.capacity_;
            size_ = o.size_;
            o.data_ = o.inline_data();
            o.capacity_ = N;
            o.size_ = 0;
            return;
        }
        std::uninitialized_move(o.begin(), o.end(), data_);
        size_ = o.size_;
        o.clear();
    }

    T* data_ = inline_data();
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = N;
    alignas(T) std::byte buffer_[N * sizeof(T)];
};

}  // namespace yobx::detail
