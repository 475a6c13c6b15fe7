// yobx/patches/patch_info.hpp — PatchInfo: one reversible replacement.
//
// A patch swaps a replacement into a target (a function pointer variable, a
// std::function, an entry of a hook table, any assignable value) and swaps the
// previous value back when undone. It knows its name, family, dependencies,
// and the source of the patch and of the original, so that it can print the
// unified diff of what it changes. PatchInfo is a handle, like a Python
// object: copies refer to the same patch and see the same `is_applied()`.
#pragma once

#include <yobx/detail/unified_diff.hpp>
#include <yobx/error.hpp>
#include <yobx/patch_source.hpp>

#include <algorithm>
#include <concepts>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx {

namespace detail {

template <class T>
struct std_function_pointer {};
template <class R, class... A>
struct std_function_pointer<std::function<R(A...)>> {
    using type = R (*)(A...);
};

/// The source registered for what `value` calls, when it is a function
/// pointer, an entry of the shape hook table (a ShapeHook: its `get()`) or a
/// std::function holding a pointer.
template <class T>
std::optional<SourceText> source_of_value(const T& value) {
    if constexpr (std::is_pointer_v<T> && std::is_function_v<std::remove_pointer_t<T>>) {
        if (value != nullptr) return find_source(value);
    } else if constexpr (requires { { value.get() } -> std::same_as<typename T::pointer>; }) {
        if (const auto p = value.get(); p != nullptr) return find_source(p);
    } else if constexpr (requires { typename std_function_pointer<T>::type; }) {
        using Pointer = typename std_function_pointer<T>::type;
        if (const Pointer* p = value.template target<Pointer>(); p != nullptr && *p != nullptr) return find_source(*p);
    }
    return std::nullopt;
}

/// The patches `PatchInfo::make` has applied to each target of type T, oldest
/// first, each as the value it saved. Undoing a patch that a later one covers
/// hands its saved value to that later patch, so that the target ends with its
/// original value whatever the order of the undos.
template <class T>
struct TargetStacks {
    using Saved = std::shared_ptr<std::optional<T>>;
    std::mutex mutex;
    std::map<T*, std::vector<Saved>> stacks;

    static TargetStacks& instance() {
        static TargetStacks stacks;
        return stacks;
    }

    template <class R>
    void apply(T* where, const Saved& saved, const R& replacement) {
        const std::lock_guard lock(mutex);
        std::vector<Saved>& stack = stacks[where];
        stack.reserve(stack.size() + 1);  // the push_back below cannot throw
        saved->emplace(std::move(*where));
        try {
            *where = replacement;
        } catch (...) {  // the target keeps its value
            *where = std::move(**saved);
            saved->reset();
            if (stack.empty()) stacks.erase(where);
            throw;
        }
        stack.push_back(saved);
    }

    void undo(T* where, const Saved& saved) {
        const std::lock_guard lock(mutex);
        const auto it = stacks.find(where);  // apply recorded every patch of `make`: the target is there
        std::vector<Saved>& stack = it->second;
        const auto pos = std::find(stack.begin(), stack.end(), saved);
        if (std::next(pos) == stack.end()) *where = std::move(**saved);  // the latest patch: its value goes back
        else **std::next(pos) = std::move(**saved);  // a later patch holds the target: it will restore this value
        saved->reset();
        stack.erase(pos);
        if (stack.empty()) stacks.erase(it);
    }
};

}  // namespace detail

/// How a diff or a report is written: text, or reStructuredText.
enum class DiffFormat { raw, rst };

/// The format named "raw" or "rst"; `where` names the caller in the error.
inline DiffFormat diff_format(std::string_view name, const char* where) {
    if (name == "raw") return DiffFormat::raw;
    if (name == "rst") return DiffFormat::rst;
    throw value_error(std::string(where) + ": unknown format '" + std::string(name) + "', expected 'raw' or 'rst'");
}

/// The names PatchInfo::make gives a patch, by member so that they cannot be swapped:
///   PatchInfo::make(&leaky_relu, activation, {.original = "relu", .family = "user"})
struct PatchNames {
    std::string original;   // what the patch replaces (`relu`)
    std::string family;     // the group it belongs to (`user`, `yobx`, `transformers`)
    std::string name = {};  // the patch's own name; empty: the replacement's YOBX_PATCH_SOURCE name
};

/// One patch: a replacement swapped into a target by `apply()` and swapped
/// back by `undo()` (the seed's `do()` / `undo()`).
///
///   YOBX_PATCH_SOURCE(leaky_relu,
///   double leaky_relu(double x) { return x > 0 ? x : 0.01 * x; }
///   ) YOBX_PATCH_SOURCE_END
///
///   std::function<double(double)> activation = relu;
///   yobx::PatchInfo p = yobx::PatchInfo::make(&leaky_relu, activation, {.original = "relu", .family = "user"});
///   p.apply();   // activation calls leaky_relu
///   p.undo();    // activation calls relu again
///   std::cout << p.format_diff("raw");
class PatchInfo {
public:
    /// A patch with its own `apply` and `undo` actions, for targets `make`
    /// does not cover. `name` is the patch's, `original_name` what it replaces.
    PatchInfo(std::string name, std::string original_name, std::string family, std::function<void()> apply,
              std::function<void()> undo)
        : s_(std::make_shared<State>()) {
        if (name.empty()) throw value_error("PatchInfo: the patch of '" + original_name + "' has an empty name");
        if (!apply || !undo) throw value_error("PatchInfo: patch '" + name + "' needs both an apply and an undo action");
        s_->name = std::move(name);
        s_->original_name = std::move(original_name);
        s_->family = std::move(family);
        s_->apply = std::move(apply);
        s_->undo = std::move(undo);
    }

    /// The common case, like the seed's `make()`: `apply()` stores
    /// `replacement` into `target` and keeps the value it held; `undo()` puts
    /// that value back. Several patches of one target may be undone in any
    /// order: undoing one that a later patch covers leaves the target to the
    /// later patch, which then restores the older value. The patch's name and source come from the
    /// replacement's YOBX_PATCH_SOURCE, the original's source from the value
    /// `target` holds now; a replacement defined elsewhere needs `name`. The
    /// patch keeps a pointer to `target`: the target must outlive its use.
    ///   PatchInfo::make(&patched_broadcast_shapes, shape_hooks.broadcast_shapes,
    ///                   {.original = "default_broadcast_shapes", .family = "yobx"})
    template <class Target, class Replacement>
        requires std::is_assignable_v<Target&, const Replacement&> && std::is_move_constructible_v<Target> &&
                 std::is_copy_constructible_v<Replacement>
    static PatchInfo make(Replacement replacement, Target& target, PatchNames names) {
        return make_named(std::move(replacement), target, std::move(names.original), std::move(names.family),
                          std::move(names.name));
    }

    /// The seed's positional form, kept for code written against it: two adjacent strings are
    /// easy to swap, PatchNames says which is which.
    template <class Target, class Replacement>
        requires std::is_assignable_v<Target&, const Replacement&> && std::is_move_constructible_v<Target> &&
                 std::is_copy_constructible_v<Replacement>
    [[deprecated("use PatchInfo::make(replacement, target, {.original = ..., .family = ..., .name = ...})")]]
    static PatchInfo make(Replacement replacement, Target& target, std::string original_name, std::string family,
                          std::string name = {}) {
        return make_named(std::move(replacement), target, std::move(original_name), std::move(family), std::move(name));
    }

private:
    template <class Target, class Replacement>
    static PatchInfo make_named(Replacement replacement, Target& target, std::string original_name, std::string family,
                                std::string name) {
        auto patch_source = detail::source_of_value(replacement);
        if (name.empty() && patch_source) name = std::string(patch_source->name);
        if (name.empty())
            throw value_error("PatchInfo::make: the replacement of '" + original_name +
                              "' has no name: define it inside YOBX_PATCH_SOURCE or pass a name");
        auto saved = std::make_shared<std::optional<Target>>();
        Target* where = &target;
        using Stacks = detail::TargetStacks<Target>;
        PatchInfo p(
            std::move(name), std::move(original_name), std::move(family),
            [where, saved, replacement = std::move(replacement)] { Stacks::instance().apply(where, saved, replacement); },
            [where, saved] { Stacks::instance().undo(where, saved); });
        p.s_->patch_source = std::move(patch_source);
        p.s_->original_source = detail::source_of_value(target);
        return p;
    }

public:

    /// Swaps the replacement in. Applying a patch that is applied is an error.
    void apply() {
        if (s_->applied) throw runtime_error("PatchInfo::apply: patch '" + s_->name + "' is already applied");
        s_->apply();
        s_->applied = true;
    }

    /// Swaps the original back. Undoing a patch that is not applied is an error.
    void undo() {
        if (!s_->applied) throw runtime_error("PatchInfo::undo: patch '" + s_->name + "' is not applied");
        s_->undo();
        s_->applied = false;
    }

    bool is_applied() const noexcept { return s_->applied; }
    /// The patch's name: `patched_broadcast_shapes`.
    const std::string& name() const noexcept { return s_->name; }
    /// The name of what the patch replaces: `default_broadcast_shapes`.
    const std::string& original_name() const noexcept { return s_->original_name; }
    /// A free-form category used in reports: "yobx", "user"...
    const std::string& family() const noexcept { return s_->family; }
    /// `patch-<family>-<name>`, the RST label of the patch.
    std::string refid() const { return "patch-" + s_->family + "-" + s_->name; }
    /// `<family>: <original name> -> <patch name>`.
    std::string title() const { return s_->family + ": " + s_->original_name + " -> " + s_->name; }

    /// The patches that must be applied before this one (PatchGuard applies them first).
    const std::vector<PatchInfo>& depends_on() const noexcept { return s_->depends_on; }
    /// Adds a dependency. A patch cannot depend on itself, nor on a patch that
    /// depends on it: dependencies never form a cycle (which also means the
    /// handles never keep each other alive).
    PatchInfo& add_dependency(PatchInfo other) {
        if (other == *this) throw value_error("PatchInfo::add_dependency: patch '" + s_->name + "' cannot depend on itself");
        std::vector<const PatchInfo*> path{&other};
        if (other.reaches(*this, path)) {
            std::string chain;
            for (const PatchInfo* q : path) chain += q->name() + " -> ";
            throw value_error("PatchInfo::add_dependency: patch '" + s_->name + "' cannot depend on '" + other.name() +
                              "', which depends on it (" + chain.substr(0, chain.size() - 4) + ")");
        }
        s_->depends_on.push_back(std::move(other));
        return *this;
    }

    /// The sources, when the definitions were wrapped in YOBX_PATCH_SOURCE.
    const std::optional<SourceText>& patch_source() const noexcept { return s_->patch_source; }
    const std::optional<SourceText>& original_source() const noexcept { return s_->original_source; }
    /// Sets the sources of a patch built with the constructor, or of an
    /// original `make` could not find (a std::function holding a lambda).
    PatchInfo& set_patch_source(SourceText source) {
        s_->patch_source = source;
        return *this;
    }
    PatchInfo& set_original_source(SourceText source) {
        s_->original_source = source;
        return *this;
    }

    /// The unified diff original -> patch (`--- original` / `+++ rewritten`),
    /// followed by the diffs of the dependencies. A definition without a
    /// captured source shows as one line saying so.
    std::string make_diff() const {
        std::string diff = detail::unified_diff(text_of(s_->original_source, s_->original_name),
                                                text_of(s_->patch_source, s_->name), "original", "rewritten");
        for (const auto& d : s_->depends_on) diff += d.make_diff();
        return diff;
    }

    /// The diff with a title, as text (DiffFormat::raw) or as an RST section (DiffFormat::rst):
    ///   format_diff()  is  "yobx: default_broadcast_shapes -> patched_broadcast_shapes\n--- original\n..."
    std::string format_diff(DiffFormat format = DiffFormat::raw) const {
        const std::string diff = make_diff();
        if (format == DiffFormat::raw) return title() + "\n" + diff;
        const std::string t = title();
        std::string out = ".. _" + refid() + ":\n\n" + t + "\n" + std::string(t.size(), '=') +
                          "\n\n.. code-block:: diff\n    :linenos:\n\n";
        for (auto line : detail::split_lines(diff)) out += "    " + std::string(line) + "\n";
        return out;
    }
    /// The same with the format's name, "raw" or "rst" (as the seed and JSON write it).
    std::string format_diff(std::string_view format) const { return format_diff(diff_format(format, "PatchInfo::format_diff")); }

    /// Two PatchInfo are equal when they are the same patch (copies of one handle).
    friend bool operator==(const PatchInfo& a, const PatchInfo& b) noexcept { return a.s_ == b.s_; }

private:
    struct State {
        std::string name, original_name, family;
        std::function<void()> apply, undo;
        bool applied = false;
        std::vector<PatchInfo> depends_on;
        std::optional<SourceText> patch_source, original_source;
    };

    // Whether `target` is among the dependencies of this patch, transitively;
    // `path` ends with the chain that reaches it.
    bool reaches(const PatchInfo& target, std::vector<const PatchInfo*>& path) const {
        for (const auto& d : s_->depends_on) {
            path.push_back(&d);
            if (d == target || d.reaches(target, path)) return true;
            path.pop_back();
        }
        return false;
    }

    static std::string text_of(const std::optional<SourceText>& source, const std::string& name) {
        if (source) return source->text();
        return "// the source of " + name + " is not available: it is not defined inside YOBX_PATCH_SOURCE\n";
    }

    std::shared_ptr<State> s_;
};

}  // namespace yobx
