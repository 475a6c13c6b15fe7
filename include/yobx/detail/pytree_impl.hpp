// yobx/detail/pytree_impl.hpp — the machinery behind yobx/pytree.hpp.
//
// Every C++ type that can appear in a pytree maps to one node implementation
// (node<X>) chosen at compile time. A node writes itself into a flatten
// context (leaves, spec builder, key path) and reads itself back from a spec
// reader. The contexts switch off what a call does not need, so tree_leaves
// builds no spec and tree_flatten records no key path.
//
// The machinery is read in this order, one step a header under detail/pytree/:
//   classify.hpp      which node implementation a type gets
//   flatten_ctx.hpp   where flatten writes: leaves, spec, key paths
//   spec_reader.hpp   what unflatten reads
//   std_nodes.hpp     the nodes of the standard types
//   struct_nodes.hpp  the nodes of user types (Hana, PFR, custom, dynamic)
// and below, the entry points pytree.hpp calls.
#pragma once

#include <yobx/detail/pytree/struct_nodes.hpp>

namespace yobx {
namespace detail {

// The comparison inline (it shares its reads of the spec with what follows), the message out of line.
template <class = void>
inline void check_leaf_count(std::size_t given, const TreeSpec& spec) {
    if (given != spec.num_leaves()) [[unlikely]]
        leaf_count_error(given, spec);
}

// The tensor type of X, or T when given explicitly.
template <class T, class X>
struct resolve_leaf {
    using type = T;
};
template <class X>
struct resolve_leaf<void, X> {
    using type = typename node<X>::leaf_type;
    static_assert(!std::is_void_v<type>,
                  "yobx pytree: this structure holds no tensor type to deduce; name it: tree_flatten<MyTensor>(x)");
};

// The leaves (copies or addresses, as Out says) and the interned spec of x:
// tree_flatten and tree_flatten_ptrs.
template <LeafOut Out, class L, class X>
auto flatten_with_spec(const X& x) {
    using C = FlattenCtx<L, true, false, Out>;
    std::vector<typename C::leaf_out> leaves;
    if (const FlatTree<L>* f = flat_tree_of<L>(x)) {
        if constexpr (C::ptr) {
            leaves.reserve(f->leaves().size());
            for (const L& l : f->leaves()) leaves.push_back(&l);
        } else {
            leaves = f->copy_leaves();
        }
        return std::pair<std::vector<typename C::leaf_out>, TreeSpec>(std::move(leaves), f->spec());
    }
    C c;
    c.leaves = &leaves;
    c.reserve(node<X>::fixed);
    node<X>::flatten(x, c);
    return std::pair<std::vector<typename C::leaf_out>, TreeSpec>(std::move(leaves), c.spec.finish());
}

}  // namespace detail
}  // namespace yobx
