// yobx/pytree.hpp — flatten nested argument structures into tensors + a TreeSpec, and back.
//
// The static layer works on C++ types known at compile time: standard
// containers, aggregates (Boost.PFR), Boost.Hana structs and classes
// registered through yobx::pytree_node<X>. The dynamic layer (yobx/value.hpp)
// uses the same functions on Value<T>, whose structure is known at run time.
#pragma once

#include <yobx/detail/pytree_impl.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx {

/// Registers a user class as a pytree node (torch's register_class_flattening).
/// Specialize it with a type name, flatten (children as a tuple), unflatten
/// (children back to the class) and, optionally, flatten_with_keys (children
/// with attribute names, used in the TreeSpec and in key paths):
///
///   template <class T> struct yobx::pytree_node<KVCache<T>> {
///       static constexpr std::string_view type_name = "DynamicCache";
///       static auto flatten(const KVCache<T>& c) { return std::tie(c.key_cache, c.value_cache); }
///       static auto flatten_with_keys(const KVCache<T>& c) {
///           return std::tuple{yobx::attr("key_cache", c.key_cache), yobx::attr("value_cache", c.value_cache)};
///       }
///       static KVCache<T> unflatten(std::vector<T> k, std::vector<T> v) { return {std::move(k), std::move(v)}; }
///   };
///
/// The primary template is empty: a class without a specialization is not registered.
template <class X>
struct pytree_node {
    using yobx_unregistered = void;  // marks the primary template; never define it yourself
};

/// A child named for flatten_with_keys; it prints as `.name` in key paths.
template <class C>
struct named_child {
    std::string_view name;
    const C& child;
};

/// yobx::attr("key_cache", c.key_cache): a child of a registered node with its attribute name.
template <class C>
named_child<C> attr(std::string_view name, const C& child) {
    return {name, child};
}

/// The tensor type held by X (void when it holds none): leaf_t<std::vector<DenseTensor>> is DenseTensor.
template <class X>
using leaf_t = typename detail::node<X>::leaf_type;

/// The number of leaves when the type alone fixes it (no vector, optional, map
/// or Value inside), -1 otherwise.
template <class X>
inline constexpr long static_num_leaves = detail::node<X>::fixed;

/// The leaves in order and the structure.
///   auto [leaves, spec] = yobx::tree_flatten(std::pair{x, std::vector{y, z}});   // leaves == {x, y, z}
/// The tensor type is deduced; name it (tree_flatten<MyTensor>(x)) when X holds none.
template <class T = void, class X>
auto tree_flatten(const X& x) {
    return detail::flatten_with_spec<detail::LeafOut::copies, typename detail::resolve_leaf<T, X>::type>(x);
}

/// The addresses of the leaves inside x (no tensor copied) and the structure;
/// the addresses are valid while x lives and is not modified.
///   auto [ptrs, spec] = yobx::tree_flatten_ptrs(kwargs);   // *ptrs[0] is kwargs["input_ids"]'s tensor
template <class T = void, class X>
auto tree_flatten_ptrs(const X& x) {
    return detail::flatten_with_spec<detail::LeafOut::ptrs, typename detail::resolve_leaf<T, X>::type>(x);
}

/// The structure alone (torch's tree_structure).
template <class T = void, class X>
TreeSpec tree_structure(const X& x) {
    return tree_flatten<T>(x).second;
}

/// The leaves alone, without building a spec.
template <class T = void, class X>
auto tree_leaves(const X& x) {
    using L = typename detail::resolve_leaf<T, X>::type;
    if (const auto* f = detail::flat_tree_of<L>(x)) return f->copy_leaves();
    std::vector<L> leaves;
    detail::FlattenCtx<L, false, false> c;
    c.leaves = &leaves;
    c.reserve(static_num_leaves<X>);
    detail::node<X>::flatten(x, c);
    return leaves;
}

/// The number of leaves of this value.
template <class T = void, class X>
std::size_t num_leaves(const X& x) {
    if constexpr (static_num_leaves<X> >= 0) {
        return static_cast<std::size_t>(static_num_leaves<X>);
    } else {
        using L = typename detail::resolve_leaf<T, X>::type;
        if (const auto* f = detail::flat_tree_of<L>(x)) return f->leaves().size();
        return tree_leaves<T>(x).size();
    }
}

/// Each leaf with its key path, and the structure:
///   auto [pairs, spec] = yobx::tree_flatten_with_path(args);
///   yobx::keystr(pairs[5].first) == "[1]['past_key_values'].key_cache[3]"
template <class T = void, class X>
auto tree_flatten_with_path(const X& x) {
    using L = typename detail::resolve_leaf<T, X>::type;
    std::vector<L> leaves;
    std::vector<KeyPath> paths;
    detail::FlattenCtx<L, true, true> c;
    c.leaves = &leaves;
    c.paths = &paths;
    detail::node<X>::flatten(x, c);
    std::vector<std::pair<KeyPath, L>> out;
    out.reserve(leaves.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) out.emplace_back(std::move(paths[i]), std::move(leaves[i]));
    return std::pair<std::vector<std::pair<KeyPath, L>>, TreeSpec>(std::move(out), c.spec.finish());
}

/// Addresses of the leaves inside x, in a std::array, with no heap allocation
/// and no copy of a tensor; valid while x lives and is not modified.
template <class T = void, class X>
auto tree_leaf_ptrs(const X& x) {
    static_assert(static_num_leaves<X> >= 0,
                  "yobx::tree_leaf_ptrs: the number of leaves of this type is not fixed (it holds a vector, an "
                  "optional, a map or a Value); use tree_leaves");
    if constexpr (static_num_leaves<X> >= 0) {
        using L = typename detail::resolve_leaf<T, X>::type;
        std::array<const L*, static_cast<std::size_t>(static_num_leaves<X>)> out;
        detail::FlattenCtx<L, false, false, detail::LeafOut::ptr_array> c;
        c.fixed = out.data();
        detail::node<X>::flatten(x, c);
        return out;
    }
}

/// Copies of the leaves in a std::array, with no heap allocation, for types
/// whose leaf count is fixed (static_num_leaves<X> >= 0).
template <class T = void, class X>
auto tree_leaves_fixed(const X& x) {
    static_assert(static_num_leaves<X> >= 0,
                  "yobx::tree_leaves_fixed: the number of leaves of this type is not fixed (it holds a vector, an "
                  "optional, a map or a Value); use tree_leaves");
    if constexpr (static_num_leaves<X> >= 0) {
        using L = typename detail::resolve_leaf<T, X>::type;
        constexpr auto N = static_cast<std::size_t>(static_num_leaves<X>);
        // Copy-constructed in place from the addresses: no default construction, no assignment.
        const auto ptrs = tree_leaf_ptrs<T>(x);
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::array<L, N>{*ptrs[I]...};
        }(std::make_index_sequence<N>{});
    }
}

/// Rebuilds an X from leaves and a spec. Throws value_error when the counts
/// differ (both in the message) or when the spec does not match X (what X
/// expects, what the spec has, and where).
///   auto back = yobx::tree_unflatten<std::pair<T, std::vector<T>>>(leaves, spec);
template <class X, class T>
X tree_unflatten(std::vector<T> leaves, const TreeSpec& spec) {
    detail::check_leaf_count(leaves.size(), spec);
    if constexpr (detail::keeps_flat<X, T>) {
        return detail::dynamic_node<X>::from_flat(std::move(leaves), spec);
    } else {
        detail::SpecReader<T> r(spec, leaves.data(), nullptr);
        return detail::node<X>::unflatten(r);
    }
}

/// As above, copying the leaves from a span.
template <class X, class T>
X tree_unflatten(std::span<const T> leaves, const TreeSpec& spec) {
    detail::check_leaf_count(leaves.size(), spec);
    if constexpr (detail::keeps_flat<X, T>) {
        return detail::dynamic_node<X>::from_flat(leaves, spec);
    } else {
        detail::SpecReader<T> r(spec, nullptr, leaves.data());
        return detail::node<X>::unflatten(r);
    }
}

/// The same structure with every leaf replaced by f(leaf). On a static type f
/// must return the same tensor type; on a Value<T> it may return another
/// (see value.hpp).
///   auto copies = yobx::tree_map([](const T& t) { return yobx::clone(t); }, args);
template <class F, class X>
    requires(!detail::dynamic<X>)
X tree_map(F&& f, const X& x) {
    using L = leaf_t<X>;
    static_assert(!std::is_void_v<L>, "yobx::tree_map: this structure holds no tensor");
    static_assert(std::is_same_v<std::remove_cvref_t<std::invoke_result_t<F&, const L&>>, L>,
                  "yobx::tree_map on a static structure: the function must return the same tensor type");
    auto [leaves, spec] = tree_flatten(x);
    for (auto& l : leaves) l = f(std::as_const(l));
    return tree_unflatten<X>(std::move(leaves), spec);
}

}  // namespace yobx
