// yobx/detail/flat_tree.hpp — a tree held as its spec and its leaves in order.
//
// This is what tree_unflatten gives a dynamic node that keeps it as it came
// (Value<T>, see Value::is_flat), shared by the copies of that node.
// Flattening such a node copies the leaves and shares the spec instead of
// walking a tree.
#pragma once

#include <yobx/treespec.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define YOBX_DETAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define YOBX_DETAIL_ASAN 1
#endif
#endif
#ifdef YOBX_DETAIL_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace yobx::detail {

/// The spec and the leaves of a tree, immutable once made, shared through
/// FlatTree::Ref (a reference count, changed atomically: copies of a Value
/// may live on several threads).
///   auto r = FlatTree<T>::copy_of(spec, leaves);
///   r->spec(); r->leaves();   // the spec, then a span of the leaves in order
///
/// Copied leaves live in the same allocation as the count and the spec:
/// tree_unflatten from a span makes one allocation. Leaves moved in keep
/// their vector (adopt), so nothing is copied or moved leaf by leaf.
///
/// Each thread keeps the largest block of copied leaves it freed, up to
/// max_cached_bytes, and reuses it for the next tree that fits in it but not
/// in half of it: a program unflattening the same structure call after call
/// does not go through malloc. The block is freed when the thread ends.
/// Under AddressSanitizer a kept block is poisoned until it is reused.
template <class T>
class FlatTree {
public:
    /// One owner of a FlatTree (null when default-constructed, moved from or reset).
    class Ref {
    public:
        Ref() noexcept = default;
        Ref(const Ref& o) noexcept : p_(o.p_) {
            if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
        }
        Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
        Ref& operator=(Ref o) noexcept {
            swap(o);
            return *this;
        }
        ~Ref() { reset(); }

        const FlatTree* get() const noexcept { return p_; }
        const FlatTree* operator->() const noexcept { return p_; }
        explicit operator bool() const noexcept { return p_ != nullptr; }
        // The null check inline: most Refs destroyed are moved from.
        void reset() noexcept {
            if (p_) release(std::exchange(p_, nullptr));
        }
        void swap(Ref& o) noexcept { std::swap(p_, o.p_); }

    private:
        friend FlatTree;
        explicit Ref(FlatTree* p) noexcept : p_(p) {}
        static void release(FlatTree* p) noexcept {
            // A count of 1 seen by its owner is final (no other owner is left
            // to copy it), so the common case needs no read-modify-write.
            if (p->refs_.load(std::memory_order_acquire) == 1 || p->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
                destroy(p);
        }
        FlatTree* p_ = nullptr;
    };

    /// A FlatTree holding copies of `leaves`, in one allocation with its spec.
    static Ref copy_of(const TreeSpec& spec, std::span<const T> leaves) {
        std::size_t capacity = leaves_offset() + leaves.size() * sizeof(T);
        void* raw = take_cached(capacity);  // a kept block gives its own capacity
        if (!raw) raw = allocate(capacity);
        FlatTree* p = ::new (raw) FlatTree(spec, capacity);
        T* first = reinterpret_cast<T*>(static_cast<std::byte*>(raw) + leaves_offset());
        try {
            copy_into(leaves, first);
        } catch (...) {
            p->~FlatTree();
            keep_or_deallocate(raw, capacity);
            throw;
        }
        p->data_ = std::launder(first);
        p->size_ = leaves.size();
        return Ref(p);
    }

    /// A FlatTree owning `leaves` (their vector is kept, no leaf is moved).
    static Ref adopt(const TreeSpec& spec, std::vector<T>&& leaves) {
        void* raw = allocate(sizeof(FlatTree));
        FlatTree* p = ::new (raw) FlatTree(spec, 0);
        p->adopted_ = std::move(leaves);
        p->data_ = p->adopted_.data();
        p->size_ = p->adopted_.size();
        return Ref(p);
    }

    const TreeSpec& spec() const noexcept { return spec_; }
    std::span<const T> leaves() const noexcept { return {data_, size_}; }
    /// A copy of the leaves (what flattening a node kept flat returns).
    [[gnu::flatten]] std::vector<T> copy_leaves() const { return std::vector<T>(data_, data_ + size_); }

    /// The largest block this thread keeps for reuse (16 KiB: a thousand
    /// 16-byte tensors). Past that, malloc costs little beside the copies.
    static constexpr std::size_t max_cached_bytes = 16 * 1024;
    /// The size in bytes of the block this thread keeps (0 when none); for tests.
    static std::size_t cached_bytes() noexcept { return cache().bytes; }

private:
    FlatTree(const TreeSpec& spec, std::size_t capacity) noexcept : spec_(spec), capacity_(capacity) {}
    FlatTree(const FlatTree&) = delete;
    FlatTree& operator=(const FlatTree&) = delete;
    ~FlatTree() = default;

    static constexpr std::size_t alignment() noexcept {
        return alignof(FlatTree) > alignof(T) ? alignof(FlatTree) : alignof(T);
    }
    // Copied leaves start at the first multiple of alignof(T) after the header.
    static constexpr std::size_t leaves_offset() noexcept {
        return (sizeof(FlatTree) + alignof(T) - 1) / alignof(T) * alignof(T);
    }
    static void* allocate(std::size_t bytes) {
        if constexpr (alignment() > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
            return ::operator new(bytes, std::align_val_t(alignment()));
        else
            return ::operator new(bytes);
    }
    static void deallocate(void* raw) noexcept {
        if constexpr (alignment() > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
            ::operator delete(raw, std::align_val_t(alignment()));
        else
            ::operator delete(raw);
    }

    // This thread's kept block. Trivially destructible, so that it can still
    // be read after the thread's Reaper ran (a Value held in a thread_local
    // or, on the main thread, in a static may be destroyed later).
    struct Cache {
        void* block = nullptr;
        std::size_t bytes = 0;
        bool reaper_set = false;
        bool closed = false;  // the thread is ending: free blocks at once
    };
    static Cache& cache() noexcept {
        static thread_local constinit Cache c;
        return c;
    }
    // Frees the kept block when its thread ends, and closes the cache.
    struct Reaper {
        Reaper() = default;
        Reaper(const Reaper&) = delete;
        Reaper& operator=(const Reaper&) = delete;
        ~Reaper() {
            Cache& c = cache();
            c.closed = true;
            if (c.block) release_block(std::exchange(c.block, nullptr), std::exchange(c.bytes, 0));
        }
    };
    // The kept block if `capacity` bytes fit in it but not in half of it;
    // `capacity` becomes the block's size.
    static void* take_cached(std::size_t& capacity) noexcept {
        Cache& c = cache();
        if (!c.block || capacity > c.bytes || capacity <= c.bytes / 2) return nullptr;
        unpoison(c.block, c.bytes);
        capacity = std::exchange(c.bytes, 0);
        return std::exchange(c.block, nullptr);
    }
    // Keeps the larger of `raw` and the kept block, frees the other.
    static void keep_or_deallocate(void* raw, std::size_t bytes) noexcept {
        Cache& c = cache();
        if (c.closed || bytes > max_cached_bytes || (c.block && bytes <= c.bytes)) {
            deallocate(raw);
            return;
        }
        if (!c.reaper_set) {
            static thread_local Reaper reaper;  // registered on the first pass
            (void)reaper;
            c.reaper_set = true;
        }
        if (c.block) release_block(c.block, c.bytes);
        poison(raw, bytes);
        c.block = raw;
        c.bytes = bytes;
    }
    static void release_block(void* raw, std::size_t bytes) noexcept {
        unpoison(raw, bytes);
        deallocate(raw);
    }
#ifdef YOBX_DETAIL_ASAN
    static void poison(void* p, std::size_t n) noexcept { __asan_poison_memory_region(p, n); }
    static void unpoison(void* p, std::size_t n) noexcept { __asan_unpoison_memory_region(p, n); }
#else
    static void poison(void*, std::size_t) noexcept {}
    static void unpoison(void*, std::size_t) noexcept {}
#endif

    // Copying and destroying the leaves is most of what a FlatTree costs.
    // `flatten` inlines T's copy and destructor here whatever the including
    // unit's inlining budget: GCC stops inlining once a unit has grown by a
    // set share (--param inline-unit-growth), and in the benchmark's unit a
    // call for each reference count made unflatten about 30% slower and the
    // flatten of a flat Value about 50% slower.
    [[gnu::flatten]] static void copy_into(std::span<const T> leaves, T* out) {
        std::uninitialized_copy(leaves.begin(), leaves.end(), out);
    }
    [[gnu::flatten]] static void destroy_leaves(T* first, std::size_t n) noexcept { std::destroy_n(first, n); }
    [[gnu::flatten]] static void destroy(FlatTree* p) noexcept {
        // Copied leaves are ours to destroy; an adopted vector destroys its own.
        const std::size_t capacity = p->capacity_;
        if (capacity) destroy_leaves(p->data_, p->size_);
        p->~FlatTree();
        if (capacity) keep_or_deallocate(p, capacity);
        else deallocate(p);
    }

    std::atomic<std::size_t> refs_{1};
    TreeSpec spec_;
    std::vector<T> adopted_;
    T* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_;  // bytes of a block of copied leaves, 0 when adopted
};

}  // namespace yobx::detail
