// yobx/detail/pytree/value_node.hpp — Value<T> as a pytree node whose kind is read at run time.
//
// tree_flatten of a Value walks its list, tuple, dict or custom node (its leaves in place,
// so tree_flatten_ptrs works); tree_unflatten rebuilds one from a TreeSpec. The Value type
// itself is yobx/value.hpp, which includes this header; the node reads the Value's storage
// (a friend of it) only when instantiated, once Value<T> is complete.
#pragma once

#include <yobx/detail/pytree_impl.hpp>
#include <yobx/error.hpp>
#include <yobx/treespec.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

template <class T>
class Value;

namespace detail {

// Value<T> as a pytree node whose kind is read at run time.
template <class T>
struct dynamic_node<Value<T>> {
    using V = Value<T>;
    using leaf_type = T;
    static constexpr long fixed = -1;
    static constexpr bool leaves_in_place = true;  // the tensors are inside the Value: tree_flatten_ptrs works

    template <class Ctx>
    static void flatten(const V& v, Ctx& c) {
        if (const auto* p = std::get_if<typename V::Packed>(&v.v_)) {
            if (const auto* f = p->flat()) {
                const SpecData& d = f->spec().data();
                std::uint32_t at = f->spec().root();
                replay(d, at, f->leaves().data(), c);
            } else {
                flatten(p->look(), c);
            }
            return;
        }
        switch (v.kind_) {
            case V::Kind::none: c.none(); return;
            case V::Kind::boolean: c.constant(std::get<bool>(v.v_)); return;
            case V::Kind::integer: c.constant(std::get<std::int64_t>(v.v_)); return;
            case V::Kind::floating: c.constant(std::get<double>(v.v_)); return;
            case V::Kind::string: c.constant(std::get<std::string>(v.v_)); return;
            case V::Kind::tensor: c.leaf(std::get<T>(v.v_)); return;
            case V::Kind::list:
            case V::Kind::tuple: {
                const auto& items = std::get<typename V::List>(v.v_);
                const auto at = c.open(v.kind_ == V::Kind::list ? NodeKind::list : NodeKind::tuple, items.size());
                children(items, c, [&](std::size_t i) { c.push_index(i); });
                c.close(at);
                return;
            }
            case V::Kind::dict: {
                const auto& d = std::get<typename V::Dict>(v.v_);
                const auto first = c.next_string();
                for (const auto& kv : d) c.add_string(kv.first);
                const auto at = c.open(NodeKind::dict, d.size(), true, first);
                for (const auto& [k, x] : d) {
                    c.push_key(k);
                    flatten(x, c);
                    c.pop();
                }
                c.close(at);
                return;
            }
            case V::Kind::custom: {
                const auto& n = std::get<typename V::Custom>(v.v_);
                const auto first = c.next_string();
                c.add_string(n.type);
                for (const auto& k : n.keys) c.add_string(k);
                const auto at = c.open(NodeKind::custom, n.children.size(), !n.keys.empty(), first);
                children(n.children, c, [&](std::size_t i) {
                    if (n.keys.empty()) c.push_index(i);
                    else c.push_attr(n.keys[i]);
                });
                c.close(at);
                return;
            }
        }
    }

    // The children of a list, tuple or custom node; push(i) enters child i's key.
    // Consecutive tensors (most children of a model's lists) go as one run
    // when no key path is recorded.
    template <class Ctx, class Push>
    static void children(const std::vector<V>& items, Ctx& c, Push push) {
        for (std::size_t i = 0; i < items.size();) {
            if constexpr (!Ctx::with_paths) {
                std::size_t j = i;
                while (j < items.size() && items[j].kind_ == V::Kind::tensor) ++j;
                if (j > i) {
                    // Through the run's address, not the vector: each copy
                    // stores a reference count that the compiler cannot tell
                    // apart from the vector's own pointer, so it would reload
                    // that pointer for every leaf.
                    const V* run = items.data() + i;
                    c.leaf_run(j - i, [run](std::size_t k) -> const T& { return *std::get_if<T>(&run[k].v_); });
                    i = j;
                    continue;
                }
            }
            push(i);
            flatten(items[i], c);
            c.pop();
            ++i;
        }
    }

    // Flattening a Value kept flat at the top of a flatten: its spec and leaves as they are.
    static const FlatTree<T>* flat_tree(const V& v) noexcept { return v.flat(); }

    // Writes the subtree of `d` at node `at` into c as flatten(V) would,
    // from the spec instead of a tree (a Value kept flat inside a larger
    // structure); moves `at` past the subtree, returns the next leaf.
    template <class Ctx>
    static const T* replay(const SpecData& d, std::uint32_t& at, const T* leaf, Ctx& c) {
        const SpecNode n = d.nodes[at++];
        switch (n.kind) {
            case NodeKind::leaf: c.leaf(*leaf); return leaf + 1;
            case NodeKind::none: c.none(); return leaf;
            case NodeKind::constant:
                std::visit([&c](const auto& x) { c.constant(x); }, d.constants[n.data]);
                return leaf;
            case NodeKind::list:
            case NodeKind::tuple: {
                const auto open = c.open(n.kind, n.num_children);
                leaf = replay_children(d, at, n, leaf, c, [&c](std::uint32_t i) { c.push_index(i); });
                c.close(open);
                return leaf;
            }
            case NodeKind::dict: {
                const auto first = c.next_string();
                for (std::uint32_t i = 0; i < n.num_children; ++i) c.add_string(d.strings[n.key_index(i)]);
                const auto open = c.open(NodeKind::dict, n.num_children, true, first);
                for (std::uint32_t i = 0; i < n.num_children; ++i) {
                    c.push_key(d.strings[n.key_index(i)]);
                    leaf = replay(d, at, leaf, c);
                    c.pop();
                }
                c.close(open);
                return leaf;
            }
            case NodeKind::custom: {
                const auto first = c.next_string();
                c.add_string(d.strings[n.data]);
                if (n.has_keys)
                    for (std::uint32_t i = 0; i < n.num_children; ++i) c.add_string(d.strings[n.key_index(i)]);
                const auto open = c.open(NodeKind::custom, n.num_children, n.has_keys, first);
                leaf = replay_children(d, at, n, leaf, c, [&](std::uint32_t i) {
                    if (n.has_keys) c.push_attr(d.strings[n.key_index(i)]);
                    else c.push_index(i);
                });
                c.close(open);
                return leaf;
            }
        }
        return leaf;
    }

    // The children of a list, tuple or custom node; runs of leaves go at
    // once, as children() does for a tree.
    template <class Ctx, class Push>
    static const T* replay_children(const SpecData& d, std::uint32_t& at, const SpecNode& n, const T* leaf, Ctx& c,
                                    Push push) {
        for (std::uint32_t i = 0; i < n.num_children;) {
            if constexpr (!Ctx::with_paths) {
                std::uint32_t run = 0;
                while (i + run < n.num_children && d.nodes[at + run].kind == NodeKind::leaf) ++run;
                if (run > 0) {
                    c.leaf_run(run, [leaf](std::size_t k) -> const T& { return leaf[k]; });
                    at += run;
                    leaf += run;
                    i += run;
                    continue;
                }
            }
            push(i);
            leaf = replay(d, at, leaf, c);
            c.pop();
            ++i;
        }
        return leaf;
    }

    // tree_unflatten<Value<T>>: a container is kept flat (is_flat), anything
    // else built at once. Leaves moved in keep their vector; copied leaves
    // go into the FlatTree's own allocation.
    static V from_flat(std::vector<T> leaves, const TreeSpec& spec) {
        return kept_flat(spec, leaves.data(), nullptr, [&] { return FlatTree<T>::adopt(spec, std::move(leaves)); });
    }
    static V from_flat(std::span<const T> leaves, const TreeSpec& spec) {
        return kept_flat(spec, nullptr, leaves.data(), [&] { return FlatTree<T>::copy_of(spec, leaves); });
    }

    // `moved` or `copied` (the other is null) are the leaves for a spec that
    // is not a container; `make` gives the FlatTree of one that is.
    // The Value is made with its Packed in place: default-constructing it
    // and then emplacing cleared its 96 bytes and reset the variant through
    // its jump table, about 8 ns of the 20 this unflatten spent beside its
    // leaf copies.
    template <class Make>
    static V kept_flat(const TreeSpec& spec, T* moved, const T* copied, Make make) {
        typename V::Kind kind;
        switch (spec.kind()) {
            case NodeKind::list: kind = V::Kind::list; break;
            case NodeKind::tuple: kind = V::Kind::tuple; break;
            case NodeKind::dict: kind = V::Kind::dict; break;
            case NodeKind::custom: kind = V::Kind::custom; break;
            default: {
                SpecReader<T> r(spec, moved, copied);
                V out;
                build(r, out);
                return out;
            }
        }
        return V(kind, std::in_place_type<typename V::Packed>, make());
    }

    template <class R>
    static V unflatten(R& r) {
        V out;
        build(r, out);
        return out;
    }

    // Builds the node at the reader into `out` (None on entry) in place:
    // containers are filled where they will stay, no Value is moved.
    template <class R>
    static void build(R& r, V& out) {
        const SpecNode n = r.cur();
        const SpecData& d = r.data();
        switch (n.kind) {
            case NodeKind::leaf:
                out.kind_ = V::Kind::tensor;
                out.v_.template emplace<T>(r.take_leaf());
                return;
            case NodeKind::none: r.advance(); return;
            case NodeKind::constant:
                r.advance();
                out = std::visit([](const auto& x) { return V(x); }, d.constants[n.data]);
                return;
            case NodeKind::list:
            case NodeKind::tuple:
                r.advance();
                out.kind_ = n.kind == NodeKind::list ? V::Kind::list : V::Kind::tuple;
                build_children(r, n.num_children, out.v_.template emplace<typename V::List>());
                return;
            case NodeKind::dict: {
                r.advance();
                out.kind_ = V::Kind::dict;
                auto& dict = out.v_.template emplace<typename V::Dict>();
                dict.reserve(n.num_children);
                // Spec keys are unique (checked where specs are built), so no lookup is needed.
                for (std::uint32_t i = 0; i < n.num_children; ++i) build(r, dict.append_unique(d.strings[n.key_index(i)], V()));
                return;
            }
            case NodeKind::custom: {
                r.advance();
                out.kind_ = V::Kind::custom;
                auto& c = out.v_.template emplace<typename V::Custom>();
                c.type = d.strings[n.data];
                if (n.has_keys) c.keys.assign(d.strings.begin() + n.key_index(0), d.strings.begin() + n.key_index(n.num_children));
                build_children(r, n.num_children, c.children);
                return;
            }
        }
        r.mismatch("a valid node");
    }

    // The children of a list, tuple or custom node; leaves (most of them) go
    // straight into their Value.
    template <class R>
    static void build_children(R& r, std::uint32_t count, std::vector<V>& items) {
        items.reserve(count);
        for (std::uint32_t i = 0; i < count; ++i) {
            if (r.cur().kind == NodeKind::leaf) items.emplace_back(r.take_leaf());
            else build(r, items.emplace_back());
        }
    }
};

}  // namespace detail

}  // namespace yobx
