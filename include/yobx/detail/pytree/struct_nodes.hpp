// yobx/detail/pytree/struct_nodes.hpp — the nodes of user types: Boost.Hana
// structs (named fields, flattened like a dict keyed by the field names),
// aggregates through Boost.PFR (positional fields, like a tuple), classes with a
// pytree_node<X> specialization (custom: a KV cache flattens its tensors and
// keeps its context), and dynamic values (Value<T>, c10::IValue through a
// conversion) whose structure is known only at run time.
#pragma once

#include <yobx/detail/pytree/std_nodes.hpp>

namespace yobx {
namespace detail {

// Boost.Hana structs: named fields, flattened like a dict whose keys are the field names.
template <class X>
struct node<X, Kind::hana> {
    template <class Acc>
    using field_t = std::remove_cvref_t<decltype(boost::hana::second(std::declval<Acc>())(std::declval<X&>()))>;
    using accessors = decltype(boost::hana::accessors<X>());
    template <class... Acc>
    static constexpr std::size_t count(boost::hana::tuple<Acc...>) { return sizeof...(Acc); }
    static constexpr std::size_t N = count(accessors{});

    template <class... Acc>
    static auto leaf_helper(boost::hana::tuple<Acc...>) -> typename leaf_of_all<field_t<Acc>...>::type;
    template <class... Acc>
    static constexpr long fixed_helper(boost::hana::tuple<Acc...>) { return fixed_sum({node<field_t<Acc>>::fixed...}); }
    using leaf_type = decltype(leaf_helper(std::declval<accessors>()));
    static constexpr long fixed = fixed_helper(accessors{});

    template <class Acc>
    static std::string_view name_of(const Acc& acc) {
        return boost::hana::to<char const*>(boost::hana::first(acc));
    }

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto d = c.next_string();
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) { c.add_string(name_of(acc)); });
        const auto at = c.open(NodeKind::dict, N, true, d);
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
            c.push_key(name_of(acc));
            node<field_t<decltype(acc)>>::flatten(boost::hana::second(acc)(x), c);
            c.pop();
        });
        c.close(at);
    }

    // Fields are matched by name, so a dict built elsewhere (keyword arguments
    // in another order, optional fields left out) converts back.
    template <class R>
    static X unflatten(R& r) {
        static_assert(std::is_default_constructible_v<X>,
                      "yobx pytree: a Boost.Hana struct must be default constructible to be unflattened");
        r.expect(NodeKind::dict, "a dict with the struct's field names");
        const SpecNode n = r.cur();
        r.advance();
        X out{};
        std::array<bool, N> seen{};
        for (std::uint32_t i = 0; i < n.num_children; ++i) {
            const std::string& key = r.data().strings[n.key_index(i)];
            bool found = false;
            std::size_t index = 0;
            boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
                if (!found && name_of(acc) == key) {
                    found = true;
                    seen[index] = true;
                    boost::hana::second(acc)(out) = node<field_t<decltype(acc)>>::unflatten(r);
                }
                if (!found) ++index;
            });
            if (!found)
                throw value_error("tree_unflatten: the dict key " + detail::repr_string(key) +
                                  " is not a field of the requested struct (fields: " + field_list() + ")");
        }
        std::size_t index = 0;
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
            if (!seen[index] && !is_optional<field_t<decltype(acc)>>::value)
                throw value_error("tree_unflatten: the dict has no key '" + std::string(name_of(acc)) +
                                  "' for a required field of the requested struct (fields: " + field_list() + ")");
            ++index;
        });
        return out;
    }

    static std::string field_list() {
        std::string s;
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
            if (!s.empty()) s += ", ";
            s += name_of(acc);
        });
        return s;
    }
};

// Aggregates through Boost.PFR: positional fields, flattened like a tuple.
template <class X>
struct node<X, Kind::aggregate> {
    static constexpr std::size_t N = boost::pfr::tuple_size_v<X>;
    template <std::size_t... I>
    static auto leaf_helper(std::index_sequence<I...>) -> typename leaf_of_all<boost::pfr::tuple_element_t<I, X>...>::type;
    template <std::size_t... I>
    static constexpr long fixed_helper(std::index_sequence<I...>) {
        return fixed_sum({node<boost::pfr::tuple_element_t<I, X>>::fixed...});
    }
    using leaf_type = decltype(leaf_helper(std::make_index_sequence<N>{}));
    static constexpr long fixed = fixed_helper(std::make_index_sequence<N>{});

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto at = c.open(NodeKind::tuple, N);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((c.push_index(I), node<boost::pfr::tuple_element_t<I, X>>::flatten(boost::pfr::get<I>(x), c), c.pop()), ...);
        }(std::make_index_sequence<N>{});
        c.close(at);
    }
    template <class R>
    static X unflatten(R& r) {
        if (!r.at_container(NodeKind::tuple, N)) r.mismatch("a tuple of " + std::to_string(N) + " (the aggregate's fields)");
        r.advance();
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return X{node<boost::pfr::tuple_element_t<I, X>>::unflatten(r)...};
        }(std::make_index_sequence<N>{});
    }
};

template <class X>
struct node<X, Kind::custom> {
    using P = pytree_node<X>;
    static_assert(requires { std::string_view(P::type_name); },
                  "yobx::pytree_node<X> must define `static constexpr std::string_view type_name`");
    static_assert(requires(const X& x) { P::flatten(x); },
                  "yobx::pytree_node<X> must define `static auto flatten(const X&)` returning a std::tuple of children");
    using children_t = std::remove_cvref_t<decltype(P::flatten(std::declval<const X&>()))>;
    static constexpr std::size_t N = std::tuple_size_v<children_t>;
    template <std::size_t I>
    using child_t = std::remove_cvref_t<std::tuple_element_t<I, children_t>>;
    static constexpr bool with_keys = requires(const X& x) { P::flatten_with_keys(x); };
    static constexpr bool refs_only = []<std::size_t... I>(std::index_sequence<I...>) {
        return (std::is_lvalue_reference_v<std::tuple_element_t<I, children_t>> && ...);
    }(std::make_index_sequence<N>{});

    template <std::size_t... I>
    static auto leaf_helper(std::index_sequence<I...>) -> typename leaf_of_all<child_t<I>...>::type;
    template <std::size_t... I>
    static constexpr long fixed_helper(std::index_sequence<I...>) { return fixed_sum({node<child_t<I>>::fixed...}); }
    using leaf_type = decltype(leaf_helper(std::make_index_sequence<N>{}));
    static constexpr long fixed = fixed_helper(std::make_index_sequence<N>{});

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto d = c.next_string();
        c.add_string(P::type_name);
        if constexpr (with_keys) {
            const auto named = P::flatten_with_keys(x);
            static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(named)>> == N,
                          "yobx::pytree_node<X>::flatten_with_keys must return as many children as flatten");
            std::apply([&](const auto&... nc) { (c.add_string(nc.name), ...); }, named);
            const auto at = c.open(NodeKind::custom, N, true, d);
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((c.push_attr(std::get<I>(named).name), node<child_t<I>>::flatten(std::get<I>(named).child, c), c.pop()), ...);
            }(std::make_index_sequence<N>{});
            c.close(at);
        } else {
            if constexpr (Ctx::ptr)
                static_assert(refs_only, "yobx::tree_flatten_ptrs, tree_leaf_ptrs and tree_leaves_fixed need "
                                         "pytree_node<X>::flatten to return references to the children (std::tie), "
                                         "not copies");
            const auto children = P::flatten(x);
            const auto at = c.open(NodeKind::custom, N, false, d);
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((c.push_index(I), node<child_t<I>>::flatten(std::get<I>(children), c), c.pop()), ...);
            }(std::make_index_sequence<N>{});
            c.close(at);
        }
    }

    template <class R>
    static X unflatten(R& r) {
        if (!r.at_container(NodeKind::custom, N) || r.data().strings[r.cur().data] != P::type_name)
            r.mismatch("a " + std::string(P::type_name) + " node with " + std::to_string(N) + " children");
        r.advance();
        // Children in spec order (braced init), then handed to the user's unflatten.
        auto children = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<child_t<I>...>{node<child_t<I>>::unflatten(r)...};
        }(std::make_index_sequence<N>{});
        return std::apply([](auto&&... ch) { return P::unflatten(std::move(ch)...); }, std::move(children));
    }
};

// A dynamic node that converts its value before flattening it (c10::IValue
// to a Value) hands out leaves of a temporary: tree_flatten_ptrs needs nodes
// that declare `leaves_in_place = true` (Value<T> does).
template <class X>
concept leaves_in_place = requires {
    requires dynamic_node<X>::leaves_in_place;
};

template <class X>
struct node<X, Kind::dynamic> : dynamic_node<X> {
    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        static_assert(!Ctx::ptr || leaves_in_place<X>,
                      "yobx::tree_flatten_ptrs: this dynamic node flattens a converted copy of its value, so "
                      "the addresses of its leaves would dangle; use tree_flatten");
        dynamic_node<X>::flatten(x, c);
    }
};

template <class = void>
[[noreturn, gnu::cold, gnu::noinline]] void leaf_count_error(std::size_t given, const TreeSpec& spec) {
    throw value_error("tree_unflatten: the spec has " + std::to_string(spec.num_leaves()) + " leaves but " +
                      std::to_string(given) + " leaves were given");
}

}  // namespace detail
}  // namespace yobx
