// yobx/detail/block_cache.hpp — an allocator that keeps, per thread, the small
// arrays it frees for the next allocation of the same size.
//
// The canonical form of the symbolic core builds and drops term arrays of one to
// a few elements at every operation (a sum of two terms, the product of a term
// and an atom): with std::allocator each is a malloc and a free, a fifth of the
// instructions of parsing and deciding a pair of expressions (docs/performance.md).
// CachedAllocator<T> takes an array of 1 to block_classes elements from the
// thread's list of freed arrays of that length when it has one, and gives a freed
// array back to that list while it holds fewer than blocks_kept; everything else
// goes to std::allocator<T> (which knows whether the compiler has sized delete:
// clang does not by default). An array may be freed by another thread than
// the one that made it (it joins that thread's list). A thread's lists are
// released when it ends; an array freed after that (by a thread_local destructor
// that runs later) goes to std::allocator. Under AddressSanitizer the lists are
// not used, so that it sees every use after free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace yobx::detail {

inline constexpr std::size_t block_classes = 8;  // arrays of 1 to 8 elements are kept
inline constexpr std::uint32_t blocks_kept = 32; // at most this many of each length, per thread

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool block_cache_enabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool block_cache_enabled = false;
#else
inline constexpr bool block_cache_enabled = true;
#endif
#else
inline constexpr bool block_cache_enabled = true;
#endif

/// The freed arrays of one element type, per thread.
template <class T>
struct ThreadBlocks {
    void* blocks[block_classes][blocks_kept];
    std::uint32_t count[block_classes] = {};
    static inline thread_local constinit bool closed = false;  // this thread's lists are gone

    ThreadBlocks() noexcept = default;
    ThreadBlocks(const ThreadBlocks&) = delete;
    ThreadBlocks& operator=(const ThreadBlocks&) = delete;
    ~ThreadBlocks() {
        closed = true;
        for (std::size_t c = 0; c < block_classes; ++c)
            for (std::uint32_t i = 0; i < count[c]; ++i) std::allocator<T>().deallocate(static_cast<T*>(blocks[c][i]), c + 1);
    }

    /// This thread's lists, or null once they are released.
    static ThreadBlocks* get() noexcept {
        if (closed) return nullptr;
        thread_local ThreadBlocks lists;
        return &lists;
    }
};

template <class T>
struct CachedAllocator {
    using value_type = T;

    CachedAllocator() noexcept = default;
    template <class U>
    CachedAllocator(const CachedAllocator<U>&) noexcept {}  // NOLINT: rebinding, as std::allocator

    T* allocate(std::size_t n) {
        if constexpr (block_cache_enabled) {
            if (n - 1 < block_classes)
                if (ThreadBlocks<T>* b = ThreadBlocks<T>::get(); b && b->count[n - 1] > 0)
                    return static_cast<T*>(b->blocks[n - 1][--b->count[n - 1]]);
        }
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if constexpr (block_cache_enabled) {
            if (n - 1 < block_classes)
                if (ThreadBlocks<T>* b = ThreadBlocks<T>::get(); b && b->count[n - 1] < blocks_kept) {
                    b->blocks[n - 1][b->count[n - 1]++] = p;
                    return;
                }
        }
        std::allocator<T>().deallocate(p, n);
    }

    friend bool operator==(const CachedAllocator&, const CachedAllocator&) noexcept { return true; }
};

}  // namespace yobx::detail
