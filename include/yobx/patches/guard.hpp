// yobx/patches/guard.hpp — PatchGuard: patches applied for the life of a scope.
//
// The guard applies its patches, each one's dependencies first and each patch
// once, and undoes them in reverse order when it is destroyed. It is the C++
// counterpart of the seed's `with apply_patches_for_model(...)` block.
#pragma once

#include <yobx/error.hpp>
#include <yobx/patches/details.hpp>
#include <yobx/patches/patch_info.hpp>

#include <exception>
#include <iostream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

/// Applies patches on construction and restores them on destruction. Move-only.
///   {
///       yobx::PatchGuard guard({patch_a, patch_b});
///       ...  // patched
///   }        // restored, patch_b first
/// If anything in the constructor throws (a patch's apply, the log stream, an
/// allocation), the patches already applied are undone before the exception
/// leaves it: every target holds its original again.
///
/// Two guards over one target are meant to be nested (the inner one destroyed
/// first). Patches made with PatchInfo::make also restore the right value when
/// the guards end in another order (a std::vector<PatchGuard> destroys front to
/// back): undoing a patch under a later one hands its saved value to that patch.
class [[nodiscard]] PatchGuard {
public:
    /// Applies `patches` in order, each after its dependencies. With a `log`
    /// stream, prints one line per patch applied and undone.
    [[nodiscard]] explicit PatchGuard(const PatchDetails& patches, std::ostream* log = nullptr) : log_(log) {
        std::vector<PatchInfo> order;
        for (const auto& p : patches) schedule(p, order);
        for (const auto& p : order) details_.append(p);  // a refid twice throws before anything is applied
        applied_.reserve(order.size());                  // so that recording an applied patch cannot throw
        for (auto& p : order) {
            try {
                p.apply();
                applied_.push_back(p);  // no allocation (reserved), and a PatchInfo copy does not throw
                if (log_) *log_ << "[PatchGuard] applied " << p.title() << "\n";
            } catch (...) {
                try {
                    restore();
                } catch (...) {  // the first failure is the one to report
                }
                throw;
            }
        }
    }

    PatchGuard(const PatchGuard&) = delete;
    PatchGuard& operator=(const PatchGuard&) = delete;
    PatchGuard(PatchGuard&& other) noexcept
        : applied_(std::exchange(other.applied_, {})), details_(std::exchange(other.details_, {})), log_(other.log_) {}
    PatchGuard& operator=(PatchGuard&& other) noexcept {
        if (this != &other) {
            release();
            applied_ = std::exchange(other.applied_, {});
            details_ = std::exchange(other.details_, {});
            log_ = other.log_;
        }
        return *this;
    }

    /// Undoes the patches; an undo that throws cannot leave a destructor, so
    /// its message goes to std::cerr (call restore() to get it as an exception).
    ~PatchGuard() { release(); }

    /// The patches the guard applied, in the order it applied them
    /// (dependencies first). Copy it to keep it past the guard: a PatchInfo is
    /// a handle, so the copies still print their diffs.
    const PatchDetails& details() const noexcept { return details_; }

    /// Undoes the applied patches in reverse order now. Every patch is undone
    /// even if one throws; the first exception is then rethrown.
    void restore() {
        std::exception_ptr first;
        for (std::size_t i = applied_.size(); i-- > 0;) {
            PatchInfo& p = applied_[i];
            try {
                p.undo();
                if (log_) *log_ << "[PatchGuard] undone " << p.title() << "\n";
            } catch (...) {
                if (!first) first = std::current_exception();
            }
        }
        applied_.clear();
        if (first) std::rethrow_exception(first);
    }

private:
    // Depth-first: dependencies before the patch, each patch once
    // (add_dependency rules out cycles).
    static void schedule(const PatchInfo& p, std::vector<PatchInfo>& order) {
        for (const auto& q : order)
            if (q == p) return;
        for (const auto& d : p.depends_on()) schedule(d, order);
        order.push_back(p);
    }

    void release() noexcept {
        try {
            restore();
        } catch (const std::exception& e) {
            std::cerr << "PatchGuard: restoring the patches failed: " << e.what() << "\n";
        } catch (...) {
            std::cerr << "PatchGuard: restoring the patches failed\n";
        }
    }

    std::vector<PatchInfo> applied_;
    PatchDetails details_;
    std::ostream* log_ = nullptr;
};

}  // namespace yobx
