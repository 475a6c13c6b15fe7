// yobx/detail/pytree/std_nodes.hpp — the nodes of the standard types: a leaf
// (a tensor), std::optional (None when empty), a constant (scalars and strings,
// kept in the spec, not among the leaves), std::vector and std::array (a list:
// a run of leaves when the elements are tensors), tuple and pair (a tuple), and
// string-keyed maps (a dict, keys sorted for unordered maps). Each flattens
// itself into a context and rebuilds itself from a SpecReader.
#pragma once

#include <yobx/detail/pytree/spec_reader.hpp>

namespace yobx {
namespace detail {

template <class X>
struct node<X, Kind::unsupported> {
    static_assert(sizeof(X) == 0,
                  "yobx pytree: this type is not a pytree node. A pytree holds tensors (types with a "
                  "yobx::tensor_traits specialization), std::optional, std::vector, std::array, std::tuple, "
                  "std::pair, string-keyed std::map/std::unordered_map/yobx::ordered_dict, bool/integer/"
                  "floating/std::string scalars, aggregates, Boost.Hana structs, and classes registered by "
                  "specializing yobx::pytree_node<X>.");
    using leaf_type = void;
    static constexpr long fixed = -1;
};

template <class X>
struct node<X, Kind::leaf> {
    static_assert(check_tensor<X>());
    using leaf_type = X;
    static constexpr long fixed = 1;
    template <class Ctx>
    static void flatten(const X& x, Ctx& c) { c.leaf(x); }
    template <class R>
    static X unflatten(R& r) {
        r.expect(NodeKind::leaf, "a leaf (tensor)");
        return r.take_leaf();
    }
};

template <class Y>
struct node<std::optional<Y>, Kind::optional> {
    using leaf_type = typename node<Y>::leaf_type;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const std::optional<Y>& x, Ctx& c) {
        if (x) node<Y>::flatten(*x, c);
        else c.none();
    }
    template <class R>
    static std::optional<Y> unflatten(R& r) {
        if (r.cur().kind == NodeKind::none) {
            r.advance();
            return std::nullopt;
        }
        return node<Y>::unflatten(r);
    }
};

template <class X>
struct node<X, Kind::constant> {
    using leaf_type = void;
    static constexpr long fixed = 0;
    template <class Ctx>
    static void flatten(const X& x, Ctx& c) { c.constant(x); }

    static std::string_view expected() {
        if constexpr (std::same_as<X, bool>) return "a bool constant";
        else if constexpr (std::same_as<X, std::string>) return "a str constant";
        else if constexpr (std::floating_point<X>) return "a float constant";
        else return "an int constant";
    }
    template <class R>
    static X unflatten(R& r) {
        r.expect(NodeKind::constant, expected());
        const Constant& v = r.data().constants[r.cur().data];
        X out{};
        if constexpr (std::same_as<X, bool>) {
            if (!std::holds_alternative<bool>(v)) r.mismatch(expected());
            out = std::get<bool>(v);
        } else if constexpr (std::same_as<X, std::string>) {
            if (!std::holds_alternative<std::string>(v)) r.mismatch(expected());
            out = std::get<std::string>(v);
        } else if constexpr (std::floating_point<X>) {
            if (!std::holds_alternative<double>(v)) r.mismatch(expected());
            out = static_cast<X>(std::get<double>(v));
        } else {
            if (!std::holds_alternative<std::int64_t>(v)) r.mismatch(expected());
            const std::int64_t i = std::get<std::int64_t>(v);
            if (!std::in_range<X>(i))
                throw value_error("tree_unflatten: the constant " + std::to_string(i) + " at " + r.where() +
                                  " does not fit in the requested integer type");
            out = static_cast<X>(i);
        }
        r.advance();
        return out;
    }
};

// The elements of a std::vector or std::array, whose type is one: a run of
// leaves when they are tensors and no key path is recorded, else one by one.
template <class X, class Ctx>
void flatten_elements(const X& x, Ctx& c) {
    using Y = typename X::value_type;
    if constexpr (kind_of<Y>() == Kind::leaf && !Ctx::with_paths) {
        // Through the elements' address, not the container (see dynamic_node<Value>::children).
        c.leaf_run(x.size(), [run = x.data()](std::size_t i) -> const Y& { return run[i]; });
    } else {
        for (std::size_t i = 0; i < x.size(); ++i) {
            c.push_index(i);
            node<Y>::flatten(x[i], c);
            c.pop();
        }
    }
}

template <class Y, class A>
struct node<std::vector<Y, A>, Kind::list> {
    using leaf_type = typename node<Y>::leaf_type;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const std::vector<Y, A>& x, Ctx& c) {
        const auto at = c.open(NodeKind::list, x.size());
        flatten_elements(x, c);
        c.close(at);
    }
    template <class R>
    static std::vector<Y, A> unflatten(R& r) {
        r.expect(NodeKind::list, "a list (std::vector)");
        if constexpr (kind_of<Y>() == Kind::leaf)
            if (r.children_are_leaves()) return r.template take_children_leaves<std::vector<Y, A>>();
        const std::size_t n = r.cur().num_children;
        r.advance();
        std::vector<Y, A> out;
        out.reserve(n);
        for (std::size_t i = 0; i < n; ++i) out.push_back(node<Y>::unflatten(r));
        return out;
    }
};

template <class X>
struct node<X, Kind::tuple> {
    static constexpr std::size_t N = std::tuple_size_v<X>;
    template <std::size_t... I>
    static auto leaf_helper(std::index_sequence<I...>) -> typename leaf_of_all<std::tuple_element_t<I, X>...>::type;
    template <std::size_t... I>
    static constexpr long fixed_helper(std::index_sequence<I...>) {
        return fixed_sum({node<std::tuple_element_t<I, X>>::fixed...});
    }
    using leaf_type = decltype(leaf_helper(std::make_index_sequence<N>{}));
    static constexpr long fixed = fixed_helper(std::make_index_sequence<N>{});

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto at = c.open(NodeKind::tuple, N);
        if constexpr (is_std_array<X>::value) {
            flatten_elements(x, c);  // one element type: a loop, not N copies of the element's code
        } else {
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((c.push_index(I), node<std::tuple_element_t<I, X>>::flatten(std::get<I>(x), c), c.pop()), ...);
            }(std::make_index_sequence<N>{});
        }
        c.close(at);
    }
    template <class R>
    static X unflatten(R& r) {
        if (!r.at_container(NodeKind::tuple, N)) r.mismatch("a tuple of " + std::to_string(N));
        r.advance();
        // Braced initialization evaluates the children left to right, in spec order.
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return X{node<std::tuple_element_t<I, X>>::unflatten(r)...};
        }(std::make_index_sequence<N>{});
    }
};

template <class X>
struct node<X, Kind::dict> {
    using V = typename X::mapped_type;
    using leaf_type = typename node<V>::leaf_type;
    static constexpr long fixed = -1;

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        if constexpr (is_unordered<X>::value) {
            // No order to follow: sorted keys make the spec reproducible.
            std::vector<const typename X::value_type*> items;
            items.reserve(x.size());
            for (const auto& kv : x) items.push_back(&kv);
            std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
            emit(items, c, [](auto* p) -> const auto& { return *p; });
        } else {
            emit(x, c, [](const auto& kv) -> const auto& { return kv; });
        }
    }
    template <class Items, class Ctx, class Get>
    static void emit(const Items& items, Ctx& c, Get get) {
        const auto d = c.next_string();
        for (const auto& it : items) c.add_string(get(it).first);
        const auto at = c.open(NodeKind::dict, items.size(), true, d);
        for (const auto& it : items) {
            const auto& [k, v] = get(it);
            c.push_key(k);
            node<V>::flatten(v, c);
            c.pop();
        }
        c.close(at);
    }
    template <class R>
    static X unflatten(R& r) {
        r.expect(NodeKind::dict, "a dict (string-keyed map)");
        const SpecNode n = r.cur();
        r.advance();
        X out;
        for (std::uint32_t i = 0; i < n.num_children; ++i) {
            const std::string& key = r.data().strings[n.key_index(i)];
            out.insert_or_assign(key, node<V>::unflatten(r));
        }
        return out;
    }
};

}  // namespace detail
}  // namespace yobx
