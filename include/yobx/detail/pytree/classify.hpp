// yobx/detail/pytree/classify.hpp — which node implementation a type gets.
//
// kind_of<X>() picks one, first match wins: a pytree_node<X> specialization
// (custom), a run-time-structured value (dynamic: Value<T>), a tensor (leaf),
// std::optional, a scalar or string (constant), std::vector, tuple/pair/array,
// a map keyed by std::string (dict), a Boost.Hana struct, an aggregate (through
// Boost.PFR), else unsupported (a static_assert listing what a pytree holds).
// Characters are text, int8_t/uint8_t numbers. A structure has one tensor type
// (leaf_of_all), and a leaf count fixed by its type when nothing inside varies
// (fixed_sum: -1 otherwise).
#pragma once

#include <yobx/detail/flat_tree.hpp>
#include <yobx/error.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/pfr/core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

template <class X>
struct pytree_node;

namespace detail {

template <class X>
concept registered_node = !requires { typename pytree_node<X>::yobx_unregistered; };

// Run-time-structured nodes (Value<T>) specialize this in value.hpp.
template <class X>
struct dynamic_node {
    using yobx_not_dynamic = void;
};
template <class X>
concept dynamic = !requires { typename dynamic_node<X>::yobx_not_dynamic; };

// A dynamic node that may hold its value as a FlatTree (Value<T>) gives it
// through `flat_tree(x)` (null when it does not).
template <class X, class L>
concept has_flat_tree = requires(const X& x) {
    { dynamic_node<X>::flat_tree(x) } -> std::same_as<const FlatTree<L>*>;
};
// A dynamic node that keeps what tree_unflatten gives it as a FlatTree:
// leaves moved in, or copied from a span.
template <class X, class L>
concept keeps_flat = requires(std::vector<L> moved, std::span<const L> copied, const TreeSpec& spec) {
    { dynamic_node<X>::from_flat(std::move(moved), spec) } -> std::same_as<X>;
    { dynamic_node<X>::from_flat(copied, spec) } -> std::same_as<X>;
};
template <class L, class X>
const FlatTree<L>* flat_tree_of(const X& x) noexcept {
    if constexpr (has_flat_tree<X, L>) return dynamic_node<X>::flat_tree(x);
    else return nullptr;
}

template <class X> struct is_optional : std::false_type {};
template <class Y> struct is_optional<std::optional<Y>> : std::true_type {};
template <class X> struct is_vector : std::false_type {};
template <class Y, class A> struct is_vector<std::vector<Y, A>> : std::true_type {};
template <class X> struct is_tuple_like : std::false_type {};
template <class... Y> struct is_tuple_like<std::tuple<Y...>> : std::true_type {};
template <class A, class B> struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class Y, std::size_t N> struct is_tuple_like<std::array<Y, N>> : std::true_type {};
template <class X> struct is_std_array : std::false_type {};
template <class Y, std::size_t N> struct is_std_array<std::array<Y, N>> : std::true_type {};
template <class X> struct is_string_map : std::false_type {};
template <class V, class C, class A> struct is_string_map<std::map<std::string, V, C, A>> : std::true_type {};
template <class V, class H, class E, class A> struct is_string_map<std::unordered_map<std::string, V, H, E, A>> : std::true_type {};
template <class V> struct is_string_map<ordered_dict<V>> : std::true_type {};
template <class X> struct is_unordered : std::false_type {};
template <class V, class H, class E, class A> struct is_unordered<std::unordered_map<std::string, V, H, E, A>> : std::true_type {};

// Character types are text, not numbers; int8_t/uint8_t (signed/unsigned char) are numbers.
template <class X>
concept char_like = std::same_as<X, char> || std::same_as<X, wchar_t> || std::same_as<X, char8_t> || std::same_as<X, char16_t> ||
                    std::same_as<X, char32_t>;
template <class X>
concept scalar = std::same_as<X, bool> || (std::integral<X> && !char_like<X>) || std::floating_point<X> ||
                 std::same_as<X, std::string>;

enum class Kind { custom, dynamic, leaf, optional, constant, list, tuple, dict, hana, aggregate, unsupported };

template <class X>
consteval Kind kind_of() {
    if constexpr (registered_node<X>) return Kind::custom;
    else if constexpr (dynamic<X>) return Kind::dynamic;
    else if constexpr (has_tensor_traits<X>) return Kind::leaf;
    else if constexpr (is_optional<X>::value) return Kind::optional;
    else if constexpr (scalar<X>) return Kind::constant;
    else if constexpr (is_vector<X>::value) return Kind::list;
    else if constexpr (is_tuple_like<X>::value) return Kind::tuple;
    else if constexpr (is_string_map<X>::value) return Kind::dict;
    else if constexpr (boost::hana::Struct<X>::value) return Kind::hana;
    else if constexpr (std::is_aggregate_v<X> && std::is_class_v<X>) return Kind::aggregate;
    else return Kind::unsupported;
}

template <class X, Kind K = kind_of<X>()>
struct node;

// The single tensor type of a structure: void when it holds no tensor.
template <class A, class B>
struct common_leaf {
    static_assert(std::is_void_v<A> || std::is_void_v<B> || std::is_same_v<A, B>,
                  "yobx pytree: a structure mixes two tensor types; all leaves must have one type");
    using type = std::conditional_t<std::is_void_v<A>, B, A>;
};
template <class... X>
struct leaf_of_all {
    using type = void;
};
template <class X, class... R>
struct leaf_of_all<X, R...> {
    using type = typename common_leaf<typename node<X>::leaf_type, typename leaf_of_all<R...>::type>::type;
};

// Leaf count fixed by the type (no vector, optional, map or dynamic value inside), or -1.
constexpr long fixed_sum(std::initializer_list<long> counts) {
    long s = 0;
    for (long c : counts) {
        if (c < 0) return -1;
        s += c;
    }
    return s;
}

}  // namespace detail
}  // namespace yobx
