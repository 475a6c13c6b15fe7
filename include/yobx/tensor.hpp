// yobx/tensor.hpp — the tensor customization point.
//
// yobx never assumes a tensor library. A user makes a type usable as a tensor
// by specializing yobx::tensor_traits<T> (the way fmt::formatter<T> is
// specialized); the concept yobx::Tensor<T> checks the specialization, and
// yobx::check_tensor<T>() names the missing member when it is incomplete.
#pragma once

#include <concepts>
#include <cstdint>
#include <ostream>
#include <ranges>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx {

/// The customization point. Specialize it for your tensor type:
///
///   template <> struct yobx::tensor_traits<MyTensor> {
///       static std::vector<int64_t> shape(const MyTensor& t);   // a range of int64_t (or SymInt)
///       static MyDType dtype(const MyTensor& t);                // == comparable, printable with <<
///       static MyTensor clone(const MyTensor& t);               // deep copy: later writes to t do not reach it
///       static MyTensor empty(const std::vector<int64_t>& shape, const MyTensor& like);  // same dtype/device as like
///       static MyTensor zeros(const std::vector<int64_t>& shape, const MyTensor& like);
///   };
///
/// The primary template is deliberately empty: a type without a specialization
/// is not a tensor.
template <class T>
struct tensor_traits {
    using yobx_unspecialized = void;  // marks the primary template; never define it yourself
};

namespace detail {

template <class T>
concept has_tensor_traits = !requires { typename tensor_traits<T>::yobx_unspecialized; };

template <class T>
concept has_shape = requires(const T& t) {
    { tensor_traits<T>::shape(t) } -> std::ranges::input_range;
};

template <class T>
struct dim_type {
    using type = void;
};
template <has_shape T>
struct dim_type<T> {
    using type = std::remove_cvref_t<std::ranges::range_value_t<decltype(tensor_traits<T>::shape(std::declval<const T&>()))>>;
};

template <class T>
concept has_dtype = requires(const T& t, std::ostream& os) {
    { tensor_traits<T>::dtype(t) == tensor_traits<T>::dtype(t) } -> std::convertible_to<bool>;
    { os << tensor_traits<T>::dtype(t) } -> std::convertible_to<std::ostream&>;
};

template <class T>
concept has_clone = requires(const T& t) {
    { tensor_traits<T>::clone(t) } -> std::same_as<T>;
};

template <class T>
concept has_empty = has_shape<T> && requires(const T& t, const std::vector<typename dim_type<T>::type>& shape) {
    { tensor_traits<T>::empty(shape, t) } -> std::same_as<T>;
};

template <class T>
concept has_zeros = has_shape<T> && requires(const T& t, const std::vector<typename dim_type<T>::type>& shape) {
    { tensor_traits<T>::zeros(shape, t) } -> std::same_as<T>;
};

}  // namespace detail

/// A type whose tensor_traits specialization provides shape, dtype, clone,
/// empty and zeros. Use check_tensor<T>() in a static_assert for a message
/// naming what is missing.
template <class T>
concept Tensor = std::copy_constructible<T> && detail::has_tensor_traits<T> && detail::has_shape<T> &&
                 detail::has_dtype<T> && detail::has_clone<T> && detail::has_empty<T> && detail::has_zeros<T>;

/// The element type of T's shape: std::int64_t for concrete tensors, SymInt for symbolic ones.
template <class T>
using dim_t = typename detail::dim_type<T>::type;

/// Names the first missing piece of tensor_traits<T> in a compile error.
///   static_assert(yobx::check_tensor<MyTensor>());
template <class T>
consteval bool check_tensor() {
    static_assert(detail::has_tensor_traits<T>,
                  "yobx: this type has no yobx::tensor_traits<T> specialization; specialize it "
                  "(shape, dtype, clone, empty, zeros) to use the type as a tensor");
    if constexpr (detail::has_tensor_traits<T>) {
        static_assert(std::copy_constructible<T>, "yobx: a tensor type must be copy constructible");
        static_assert(detail::has_shape<T>,
                      "yobx::tensor_traits<T>::shape(const T&) is missing or does not return a range "
                      "(of int64_t, or of SymInt for symbolic tensors)");
        static_assert(detail::has_dtype<T>,
                      "yobx::tensor_traits<T>::dtype(const T&) is missing, or its result is not "
                      "equality-comparable and printable with operator<<");
        static_assert(detail::has_clone<T>,
                      "yobx::tensor_traits<T>::clone(const T&) is missing or does not return T");
        static_assert(detail::has_empty<T>,
                      "yobx::tensor_traits<T>::empty(const std::vector<dim_t<T>>& shape, const T& like) "
                      "is missing or does not return T");
        static_assert(detail::has_zeros<T>,
                      "yobx::tensor_traits<T>::zeros(const std::vector<dim_t<T>>& shape, const T& like) "
                      "is missing or does not return T");
    }
    return true;
}

/// The shape of t as a vector: yobx::shape_of(t) == std::vector<int64_t>{2, 3}.
template <Tensor T>
std::vector<dim_t<T>> shape_of(const T& t) {
    auto&& s = tensor_traits<T>::shape(t);
    return std::vector<dim_t<T>>(std::ranges::begin(s), std::ranges::end(s));
}

/// The dtype of t, as the traits report it.
template <Tensor T>
auto dtype_of(const T& t) {
    return tensor_traits<T>::dtype(t);
}

/// A deep copy of t: later in-place changes to t do not reach the copy.
template <Tensor T>
T clone(const T& t) {
    return tensor_traits<T>::clone(t);
}

}  // namespace yobx
