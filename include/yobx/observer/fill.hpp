// yobx/observer/fill.hpp — what an absent input means, sized per call.
//
// The exported program always takes every input, so a call that did not pass
// one is replayed with a fill. Which fill reproduces the call depends on the
// model: zeros are an empty past for a KV cache and "token type 0" for
// token_type_ids, but "mask everything" for a Hugging Face attention_mask,
// whose absence means ones. The user says it per input:
//   yobx::InputObserver<T> observer({.fill_if_missing = {{"attention_mask", yobx::Fill<T>::ones()},
//                                                        {"token_type_ids", yobx::Fill<T>::zeros()}}});
// Each fill is sized from the call it fills (see InputObserverInfo::fill_absent):
// an axis a label ties to a tensor the call has takes that tensor's size.
#pragma once

#include <yobx/error.hpp>
#include <yobx/observer/discrepancy.hpp>
#include <yobx/observer/options.hpp>
#include <yobx/tensor.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

namespace detail {

// Optional member of tensor_traits<T>: a tensor of `shape` filled with `value`, dtype and device of `like`.
template <class T>
concept has_full = requires(const T& t, const std::vector<std::int64_t>& shape, double value) {
    { tensor_traits<T>::full(shape, value, t) } -> std::same_as<T>;
};

template <class = void>
inline std::string number_text(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

}  // namespace detail

/// What an absent tensor is in a call. The kinds:
/// - automatic (the default): zeros of the call's shape when every dynamic axis is tied to the
///   call by a label or a relation, else empty along its largest untied dynamic axis (a KV cache
///   absent from the prefill call holds no token);
/// - zeros, ones, constant(v): the call's shape, every element 0, 1 or v (false, true for bool);
/// - empty: the call's shape with no element: 0 along its largest untied dynamic axis, or, when
///   every dynamic axis is tied, its largest dynamic axis, or its first axis when none is dynamic;
/// - empty_largest_dynamic: the seed's rule (torch.onnx.InputObserver): the last recorded tensor's
///   shape, 0 along its largest dynamic axis, whatever the call's sizes (zeros when no axis is
///   dynamic; a recorded tensor with no element is reused);
/// - function(f): f(shape, like), shape as for zeros, like the last recorded tensor of that input;
///   its result must have that rank and like's dtype.
/// ones and constant need the optional tensor_traits<T>::full(shape, value, like).
template <class T>
class Fill {
public:
    enum class Kind { automatic, zeros, ones, empty, constant, empty_largest_dynamic, function };
    using Function = std::function<T(const std::vector<std::int64_t>& shape, const T& like)>;

    Fill() = default;
    static Fill automatic() { return Fill(Kind::automatic); }
    static Fill zeros() { return Fill(Kind::zeros); }
    static Fill ones() { return Fill(Kind::ones); }
    static Fill empty() { return Fill(Kind::empty); }
    static Fill empty_largest_dynamic() { return Fill(Kind::empty_largest_dynamic); }
    static Fill constant(double value) {
        Fill f(Kind::constant);
        f.value_ = value;
        return f;
    }
    /// `name` is how reports print it.
    static Fill function(Function f, std::string name = "function") {
        if (!f) throw value_error("Fill::function: the function is empty");
        Fill out(Kind::function);
        out.function_ = std::move(f);
        out.name_ = std::move(name);
        return out;
    }

    Kind kind() const noexcept { return kind_; }
    double value() const noexcept { return value_; }
    const Function& fn() const noexcept { return function_; }

    /// "automatic", "zeros", "ones", "empty", "constant(0.5)", "empty_largest_dynamic", or the function's name.
    std::string to_string() const {
        switch (kind_) {
            case Kind::automatic: return "automatic";
            case Kind::zeros: return "zeros";
            case Kind::ones: return "ones";
            case Kind::empty: return "empty";
            case Kind::constant: return "constant(" + detail::number_text(value_) + ")";
            case Kind::empty_largest_dynamic: return "empty_largest_dynamic";
            case Kind::function: return name_;
        }
        return {};
    }

    /// Same kind and value (two functions are the same when their names are).
    friend std::ostream& operator<<(std::ostream& os, const Fill& f) { return os << f.to_string(); }
    bool operator==(const Fill& b) const { return kind_ == b.kind_ && value_ == b.value_ && name_ == b.name_; }

private:
    explicit Fill(Kind kind) : kind_(kind) {}
    Kind kind_ = Kind::automatic;
    double value_ = 0;
    Function function_;
    std::string name_;
};

/// Fills by input name or position; see Fill. Takes precedence over value_if_missing for a call
/// that did not pass the input.
template <class T>
using FillIfMissing = std::vector<std::pair<ArgRef, Fill<T>>>;

namespace detail {

// A tensor of `shape` whose elements are all `value`, as `like`'s dtype and device; `what` names the
// input for errors.
template <class T>
T full_like(const std::vector<std::int64_t>& shape, double value, const T& like, const std::string& what) {
    if constexpr (has_full<T>) {
        T t = tensor_traits<T>::full(shape, value, like);
        if constexpr (TensorWithValues<T>) {
            if (value != 0) {
                const T one = tensor_traits<T>::full(std::vector<std::int64_t>{1}, value, like);
                const std::vector<double> got = tensor_traits<T>::to_doubles(one);
                if (got.size() != 1 || got[0] != value) {
                    std::ostringstream os;
                    os << tensor_traits<T>::dtype(like);
                    throw value_error("fill_if_missing: " + what + " is " + os.str() + ", which cannot hold " +
                                      number_text(value) + " (it becomes " +
                                      (got.empty() ? std::string("nothing") : number_text(got[0])) + ")");
                }
            }
        }
        return t;
    } else {
        (void)shape;
        (void)like;
        throw type_error("fill_if_missing: " + what + " is filled with " + number_text(value) +
                         ", which needs tensor_traits<T>::full(const std::vector<int64_t>& shape, double value, "
                         "const T& like); this tensor type does not define it");
    }
}

// The tensor `fill` gives for one call: `shape` is the call's shape (tied axes sized from the call),
// `largest_untied` its largest dynamic axis no label ties, `largest_dynamic` its largest dynamic axis
// (-1: none), `recorded` the last recorded tensor of the input.
template <class T>
T make_fill(const Fill<T>& fill, std::vector<std::int64_t> shape, std::int64_t largest_untied,
            std::int64_t largest_dynamic, const T& recorded, const std::string& what) {
    using K = typename Fill<T>::Kind;
    switch (fill.kind()) {
        case K::automatic:
            if (largest_untied >= 0) {
                shape[static_cast<std::size_t>(largest_untied)] = 0;
                return tensor_traits<T>::empty(shape, recorded);
            }
            return tensor_traits<T>::zeros(shape, recorded);
        case K::zeros: return tensor_traits<T>::zeros(shape, recorded);
        case K::ones: return full_like(shape, 1.0, recorded, what);
        case K::constant: return full_like(shape, fill.value(), recorded, what);
        case K::empty: {
            const std::int64_t axis = largest_untied >= 0 ? largest_untied : largest_dynamic >= 0 ? largest_dynamic : 0;
            if (shape.empty())
                throw value_error("fill_if_missing: " + what + " has rank 0, it cannot be empty; give zeros or a constant");
            shape[static_cast<std::size_t>(axis)] = 0;
            return tensor_traits<T>::empty(shape, recorded);
        }
        case K::empty_largest_dynamic: {
            std::vector<std::int64_t> seen = shape_of(recorded);
            std::int64_t n = 1;
            for (auto d : seen) n *= d;
            if (n == 0) return recorded;
            if (largest_dynamic < 0) return tensor_traits<T>::zeros(seen, recorded);
            seen[static_cast<std::size_t>(largest_dynamic)] = 0;
            return tensor_traits<T>::empty(seen, recorded);
        }
        case K::function: {
            T t = fill.fn()(shape, recorded);
            const std::vector<std::int64_t> got = shape_of(t);
            if (got.size() != shape.size())
                throw value_error("fill_if_missing: " + fill.to_string() + " returned a tensor of rank " +
                                  std::to_string(got.size()) + " for " + what + ", which has rank " +
                                  std::to_string(shape.size()));
            if (!(tensor_traits<T>::dtype(t) == tensor_traits<T>::dtype(recorded))) {
                std::ostringstream a, b;
                a << tensor_traits<T>::dtype(t);
                b << tensor_traits<T>::dtype(recorded);
                throw value_error("fill_if_missing: " + fill.to_string() + " returned a tensor of dtype " + a.str() +
                                  " for " + what + ", which is " + b.str());
            }
            return t;
        }
    }
    throw value_error("fill_if_missing: unknown fill kind");
}

}  // namespace detail

}  // namespace yobx
