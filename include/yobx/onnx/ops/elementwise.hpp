// yobx/onnx/ops/elementwise.hpp — elementwise operators: unary, binary with broadcasting, Where, Cast.
//
// The output of a unary operator has its input's shape; binary and variadic
// operators broadcast multidirectionally. Data propagation follows the ops of
// shape computations (Add, Sub, Mul, Div, Mod, Max, Min, Neg, Equal, Where,
// Cast...): `Where(Equal(shape, -1), ones, shape)` keeps its values.
#pragma once

#include <yobx/onnx/ops/common.hpp>
#include <yobx/onnx/ops/rounding.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace yobx::onnx::ops {

namespace detail {

/// The boolean value of a comparison when the ShapeEnv decides it.
inline std::optional<SymInt> decided(const NodeContext& ctx, const SymBool& c) {
    if (ctx.env().statically_known_true(c)) return SymInt(1);
    if (ctx.env().statically_known_true(!c)) return SymInt(0);
    return std::nullopt;
}

/// ONNX's integer Div truncates toward zero: a symbolic quotient is x//y when x >= 0 and
/// y > 0, or when y divides x exactly (a batch recovered from `batch*windows`).
inline std::optional<SymInt> truncated_div(const NodeContext& ctx, const SymInt& x, const SymInt& y) {
    const auto cx = x.maybe_constant(), cy = y.maybe_constant();
    if (cy == 0) return std::nullopt;
    if (cx && cy) {
        if (*cx == std::numeric_limits<std::int64_t>::min() && *cy == -1) return std::nullopt;
        return SymInt(*cx / *cy);
    }
    if (ctx.env().statically_known_true(x >= 0) && ctx.env().statically_known_true(y > 0)) return floordiv(x, y);
    // an exact quotient is the same truncated or floored, whatever the signs
    try {
        const SymInt q = ctx.simplify(floordiv(x, y));
        if (ctx.env().statically_known_true(q * y == x)) return q;
    } catch (const error&) {
        // a product that overflows: no value
    }
    return std::nullopt;
}

/// Mod with fmod = 0: the sign of the divisor, Python's; yobx's Mod for a positive divisor.
inline std::optional<SymInt> python_mod(const NodeContext& ctx, const SymInt& x, const SymInt& y) {
    if (y.maybe_constant() == 0) return std::nullopt;
    if (ctx.env().statically_known_true(y > 0)) return mod(x, y);
    if (const auto cx = x.maybe_constant(), cy = y.maybe_constant(); cx && cy) {
        const std::int64_t r = *cx % *cy;
        return SymInt((r != 0 && ((r < 0) != (*cy < 0))) ? r + *cy : r);
    }
    return std::nullopt;
}

}  // namespace detail

/// Same shape and element type as input 0 (activations, Abs, Exp, Softmax, Clip...).
inline void same_as_input(NodeContext& ctx) { ctx.set_output(0, ctx.elem_type(0), ctx.shape(0)); }

/// Identity: the same tensor, values included.
inline void identity(NodeContext& ctx) {
    if (const TensorInfo* t = ctx.input(0)) ctx.set_output_block(0, *t);
}

/// Neg keeps the values, negated.
inline void neg(NodeContext& ctx) {
    std::optional<std::vector<SymInt>> v;
    if (const auto* in = ctx.values(0)) {
        v.emplace();
        for (const auto& x : **in) v->push_back(ctx.simplify(-x));
    }
    ctx.set_output(0, ctx.elem_type(0), ctx.shape(0), std::move(v));
}

/// Not: bool, its values flipped when constant.
inline void logical_not(NodeContext& ctx) {
    std::optional<std::vector<SymInt>> v;
    if (auto c = ctx.constant_values(0)) {
        v.emplace();
        for (auto x : *c) v->push_back(x == 0 ? 1 : 0);
    }
    ctx.set_output(0, elem::bool_, ctx.shape(0), std::move(v));
}

/// IsNaN, IsInf: a bool tensor of the input's shape.
inline void bool_of_input(NodeContext& ctx) { ctx.set_output(0, elem::bool_, ctx.shape(0)); }

/// Dropout: output 0 as the input, the optional mask a bool tensor of the same shape.
inline void dropout(NodeContext& ctx) {
    identity(ctx);
    ctx.set_output(1, elem::bool_, ctx.shape(0));
}

/// Cast to attribute `to`; integer values survive a cast to an integer type that holds them, to
/// bool, or to float32 or float64 (as the float's integer: a constant past 2^24 rounds to float32's);
/// a float's integer values come back, and a scaled float (`h * 0.5`) is truncated (`h//2`) or kept
/// by a cast to its own type.
inline void cast_to(NodeContext& ctx, int to) {
    const TensorInfo* in = ctx.input(0);
    if (in == nullptr) return;
    TensorInfo out{to, in->shape, std::nullopt, std::nullopt, std::nullopt};
    if (in->scaled && elem::holds_shape_values(to) && to != elem::bool_) {
        out.values = rounded(ctx, in->elem_type, *in->scaled, Rounding::trunc);
    } else if (in->scaled && to == in->elem_type) {  // torch's interpolate casts its float32 product to float32
        out.scaled = in->scaled;
    } else if (in->values && elem::carries_values(to)) {
        out.values.emplace();
        for (const auto& v : *in->values) {
            const auto c = v.maybe_constant();
            if (to == elem::bool_) {
                if (!c) {
                    out.values.reset();
                    break;
                }
                out.values->push_back(*c != 0 ? 1 : 0);
            } else if (to == elem::int32 && c &&
                       (*c < std::numeric_limits<std::int32_t>::min() || *c > std::numeric_limits<std::int32_t>::max())) {
                out.values.reset();
                break;
            } else if (elem::holds_integer_floats(to) && c) {
                const double f = to == elem::float32 ? static_cast<double>(static_cast<float>(*c)) : static_cast<double>(*c);
                if (!fits_int64(f)) {  // INT64_MAX rounds to 2^63
                    out.values.reset();
                    break;
                }
                out.values->push_back(static_cast<std::int64_t>(f));
            } else {
                out.values->push_back(v);
            }
        }
    } else if (in->reals && elem::holds_shape_values(to) && to != elem::bool_) {
        out.values.emplace();
        for (double d : *in->reals) {
            if (!fits_int64(d)) {
                out.values.reset();
                break;
            }
            out.values->push_back(static_cast<std::int64_t>(d));
        }
    }
    if ((ctx.values(0) || in->reals) && !elem::holds_shape_values(to) && to != elem::string) {
        if (auto r = ctx.real_values(0)) out.reals = std::move(r);
    }
    ctx.set_output_block(0, std::move(out));
}

/// The element type of attribute `to` (Cast, BitCast), which the node must have.
inline int to_type(const NodeContext& ctx) {
    const auto to = ctx.attr_int("to", elem::undefined);
    if (to == elem::undefined) ctx.fail("attribute 'to' is required");
    return static_cast<int>(to);
}

inline void cast(NodeContext& ctx) { cast_to(ctx, to_type(ctx)); }
inline void cast_like(NodeContext& ctx) { cast_to(ctx, ctx.elem_type(1)); }

/// Arithmetic with broadcasting; the element type is input 0's.
template <class F>
void arithmetic(NodeContext& ctx, F f) {
    Shape out = broadcast_inputs(ctx, {0, 1});
    auto v = out.size() <= 1 ? combine_values(ctx, 0, 1, f) : std::nullopt;
    ctx.set_output(0, ctx.elem_type(0), std::move(out), std::move(v));
}

namespace detail {

/// The integer values of a float input of rank 0 or 1: its values, or its constants when each is an integer.
inline std::optional<std::vector<SymInt>> integer_values(const NodeContext& ctx, std::size_t i) {
    if (const auto* v = ctx.values(i)) return **v;
    const TensorInfo* t = ctx.input(i);
    if (t == nullptr || !t->reals || !t->shape || t->shape->size() > 1) return std::nullopt;
    std::vector<SymInt> out;
    for (const double r : *t->reals) {
        if (!(std::floor(r) == r && std::fabs(r) <= 9007199254740992.0)) return std::nullopt;  // 2^53
        out.push_back(SymInt(static_cast<std::int64_t>(r)));
    }
    return out;
}

/// Add, Sub, Mul, Div of float32 or float64 tensors holding integers: exact integers (Add,
/// Sub, Mul of two), or integers times or over float constants, kept as ScaledValues for the
/// Floor, Ceil or Cast that follows (`h * 0.5`, `h / 3.0`); any other division, no values.
inline void float_arithmetic(NodeContext& ctx, char op) {
    TensorInfo out = TensorInfo::of(ctx.elem_type(0), broadcast_inputs(ctx, {0, 1}));
    if (out.shape->size() <= 1 && elem::holds_integer_floats(out.elem_type)) {
        const auto a = integer_values(ctx, 0), b = integer_values(ctx, 1);
        const auto ra = ctx.real_values(0), rb = ctx.real_values(1);
        if (a && b && op != '/') {
            out.values = combine_values(ctx, *a, *b, [op](const SymInt& x, const SymInt& y) {
                return std::optional<SymInt>(op == '+' ? x + y : op == '-' ? x - y : x * y);
            });
        } else if ((op == '*' || op == '/') && ((a && rb) || (op == '*' && b && ra))) {
            const bool left = a && rb;  // the integers on the left: x * c, x / c; else c * x
            const auto pairs =
                shape::detail::broadcast_pairs(left ? *a : *b, left ? *rb : *ra, [](const SymInt& x, double c) { return std::optional(std::pair(x, c)); });
            if (pairs) {
                out.scaled = ScaledValues{{}, {}, op == '/'};
                for (const auto& [x, c] : *pairs) {
                    out.scaled->values.push_back(x);
                    out.scaled->factors.push_back(c);
                }
            }
        }
    }
    ctx.set_output(0, std::move(out));
}

}  // namespace detail

inline void add(NodeContext& ctx) {
    if (elem::holds_integer_floats(ctx.elem_type(0))) return detail::float_arithmetic(ctx, '+');
    arithmetic(ctx, [](const SymInt& a, const SymInt& b) { return std::optional<SymInt>(a + b); });
}
inline void sub(NodeContext& ctx) {
    if (elem::holds_integer_floats(ctx.elem_type(0))) return detail::float_arithmetic(ctx, '-');
    arithmetic(ctx, [](const SymInt& a, const SymInt& b) { return std::optional<SymInt>(a - b); });
}
inline void mul(NodeContext& ctx) {
    if (elem::holds_integer_floats(ctx.elem_type(0))) return detail::float_arithmetic(ctx, '*');
    arithmetic(ctx, [](const SymInt& a, const SymInt& b) { return std::optional<SymInt>(a * b); });
}
inline void div(NodeContext& ctx) {
    if (elem::holds_integer_floats(ctx.elem_type(0))) return detail::float_arithmetic(ctx, '/');
    arithmetic(ctx, [&](const SymInt& a, const SymInt& b) { return detail::truncated_div(ctx, a, b); });
}
/// Floor, Ceil and Round: a float's integer values kept; a scaled float's (`h * 0.5`) rounded
/// (`h//2`) by Floor and Ceil (`r`); Round's ties go to even, not followed (no `r`: no values).
inline void round_to_integer(NodeContext& ctx, std::optional<Rounding> r) {
    TensorInfo out = TensorInfo::of(ctx.elem_type(0), ctx.shape(0));
    const TensorInfo* in = ctx.input(0);
    if (in->values) out.values = in->values;
    else if (in->scaled && r) out.values = rounded(ctx, in->elem_type, *in->scaled, *r);
    ctx.set_output(0, std::move(out));
}
inline void floor(NodeContext& ctx) { round_to_integer(ctx, Rounding::floor); }
inline void ceil(NodeContext& ctx) { round_to_integer(ctx, Rounding::ceil); }
inline void round(NodeContext& ctx) { round_to_integer(ctx, std::nullopt); }
inline void mod(NodeContext& ctx) {
    const bool fmod = ctx.attr_int("fmod", 0) != 0;
    arithmetic(ctx, [&](const SymInt& a, const SymInt& b) -> std::optional<SymInt> {
        if (!fmod) return detail::python_mod(ctx, a, b);
        const auto ca = a.maybe_constant(), cb = b.maybe_constant();
        if (ca && cb && *cb != 0) return SymInt(*ca % *cb);
        return std::nullopt;
    });
}
/// Pow, BitShift, BitwiseAnd... : broadcast, no values.
inline void broadcast_no_values(NodeContext& ctx) { ctx.set_output(0, ctx.elem_type(0), broadcast_inputs(ctx, {0, 1})); }

/// And, Or, Xor: bool.
inline void logical(NodeContext& ctx) { ctx.set_output(0, elem::bool_, broadcast_inputs(ctx, {0, 1})); }

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: bool, values when the ShapeEnv decides each.
template <class F>
void comparison(NodeContext& ctx, F f) {
    Shape out = broadcast_inputs(ctx, {0, 1});
    auto v = out.size() <= 1 ? combine_values(ctx, 0, 1, [&](const SymInt& a, const SymInt& b) { return detail::decided(ctx, f(a, b)); })
                             : std::nullopt;
    ctx.set_output(0, elem::bool_, std::move(out), std::move(v));
}
inline void equal(NodeContext& ctx) {
    comparison(ctx, [](const SymInt& a, const SymInt& b) { return a == b; });
}
inline void less(NodeContext& ctx) {
    comparison(ctx, [](const SymInt& a, const SymInt& b) { return a < b; });
}
inline void less_or_equal(NodeContext& ctx) {
    comparison(ctx, [](const SymInt& a, const SymInt& b) { return a <= b; });
}
inline void greater(NodeContext& ctx) {
    comparison(ctx, [](const SymInt& a, const SymInt& b) { return a > b; });
}
inline void greater_or_equal(NodeContext& ctx) {
    comparison(ctx, [](const SymInt& a, const SymInt& b) { return a >= b; });
}

/// Max, Min, Sum, Mean: the broadcast of every input; Max, Min and Sum keep values.
template <class F>
void variadic(NodeContext& ctx, F f) {
    Shape out = broadcast_shapes(ctx, present_input_shapes(ctx));
    std::optional<std::vector<SymInt>> v;
    if (out.size() <= 1 && ctx.values(0)) {
        v = **ctx.values(0);
        for (std::size_t i = 1; i < ctx.input_count() && v; ++i) {
            const auto* next = ctx.values(i);
            v = next == nullptr ? std::nullopt : combine_values(ctx, *v, **next, f);
        }
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out), std::move(v));
}
inline void max(NodeContext& ctx) {
    variadic(ctx, [](const SymInt& a, const SymInt& b) { return std::optional<SymInt>(sym_max(a, b)); });
}
inline void min(NodeContext& ctx) {
    variadic(ctx, [](const SymInt& a, const SymInt& b) { return std::optional<SymInt>(sym_min(a, b)); });
}
inline void sum(NodeContext& ctx) {
    variadic(ctx, [](const SymInt& a, const SymInt& b) { return std::optional<SymInt>(a + b); });
}
inline void mean(NodeContext& ctx) {
    variadic(ctx, [](const SymInt&, const SymInt&) { return std::optional<SymInt>(); });
}

/// Where(cond, x, y): the broadcast of the three; the values chosen where cond's are constant.
inline void where(NodeContext& ctx) {
    Shape out = broadcast_inputs(ctx, {0, 1, 2});
    std::optional<std::vector<SymInt>> v;
    const auto cond = ctx.constant_values(0);
    const auto *x = ctx.values(1), *y = ctx.values(2);
    if (out.size() <= 1 && cond && x && y) {
        const auto n = out.empty() ? std::optional<std::int64_t>(1) : out[0].maybe_constant();
        const auto fits = [&](std::size_t len) { return n && ((len == 1 && *n > 0) || static_cast<std::int64_t>(len) == *n); };
        if (n && fits(cond->size()) && fits((*x)->size()) && fits((*y)->size())) {
            v.emplace();
            for (std::int64_t i = 0; i < *n; ++i) {
                const auto at = [&](std::size_t len) { return len == 1 ? std::size_t{0} : static_cast<std::size_t>(i); };
                v->push_back((*cond)[at(cond->size())] != 0 ? (**x)[at((*x)->size())] : (**y)[at((*y)->size())]);
            }
        }
    }
    ctx.set_output(0, ctx.elem_type(1), std::move(out), std::move(v));
}

/// CumSum (11) and CumProd (26): x's shape; the running sums or products of a vector's values
/// (exclusive: starting from the neutral element; reverse: from the end), for the axis 0 of
/// rank 1 (its only axis).
template <bool Product>
void cumulative(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    std::optional<std::vector<SymInt>> v;
    const auto axis = ctx.constant_values(1);
    if (axis && axis->size() == 1) ctx.axis((*axis)[0], static_cast<std::int64_t>(x.size()));
    if (const auto* in = ctx.values(0); in && x.size() == 1 && axis && axis->size() == 1) {
        const std::vector<SymInt>& a = **in;
        const bool exclusive = ctx.attr_int("exclusive", 0) != 0, reverse = ctx.attr_int("reverse", 0) != 0;
        v.emplace(a.size());
        SymInt acc(Product ? 1 : 0);
        for (std::size_t j = 0; j < a.size(); ++j) {
            const std::size_t i = reverse ? a.size() - 1 - j : j;
            if (exclusive) (*v)[i] = acc;
            acc = ctx.simplify(Product ? acc * a[i] : acc + a[i]);
            if (!exclusive) (*v)[i] = acc;
        }
    }
    ctx.set_output(0, ctx.elem_type(0), x, std::move(v));
}

/// SwiGLU (28): A and B of one shape (no broadcasting), that shape.
inline void swiglu(NodeContext& ctx) {
    const Shape& a = ctx.shape(0);
    const Shape& b = ctx.shape(1);
    const auto differ = [&] {
        ctx.fail("A " + format_shape(a) + " and B " + format_shape(b) + " must have the same shape");
    };
    if (a.size() != b.size()) differ();
    Shape out = a;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ctx.env().statically_known_true(a[i] != b[i])) differ();
        if (!a[i].maybe_constant() && b[i].maybe_constant()) out[i] = b[i];  // the one a constant
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// BitCast (26): the input's shape in type `to`, of the same bit width; integer values kept
/// where both types hold them alike (int64 to int64, int32 to int32).
inline void bit_cast(NodeContext& ctx) {
    const int to = to_type(ctx);
    const TensorInfo* in = ctx.input(0);
    if (in == nullptr) return;
    const std::int64_t from_bits = elem_bits(in->elem_type), to_bits = elem_bits(to);
    if (in->elem_type != elem::undefined && (to_bits == 0 || from_bits == 0 || from_bits != to_bits))
        ctx.fail(elem_name(in->elem_type) + " (" + std::to_string(from_bits) + " bits) cannot be bitcast to " + elem_name(to) + " (" +
                 std::to_string(to_bits) + " bits)");
    TensorInfo out{to, in->shape, std::nullopt, std::nullopt, std::nullopt};
    if (to == in->elem_type) out = *in;
    ctx.set_output(0, std::move(out));
}

/// The elementwise family in the registry.
inline void register_elementwise(OpRegistry& r) {
    r.add_all("", {"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cos", "Cosh", "Elu", "Erf", "Exp",
                   "HardSigmoid", "HardSwish", "LeakyRelu", "Log", "Reciprocal", "Relu", "Selu", "Shrink", "Sigmoid", "Sign",
                   "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Celu", "Gelu", "Mish", "Clip",
                   "BitwiseNot", "Softmax", "LogSoftmax", "Hardmax", "LRN", "MeanVarianceNormalization", "LpNormalization",
                   "InstanceNormalization", "Trilu", "ReverseSequence", "GroupNormalization", "Scatter", "ScatterElements",
                   "ScatterND"},
              1, same_as_input);
    r.add("", "Swish", 24, same_as_input);
    r.add("", "CumSum", 11, cumulative<false>);
    r.add("", "CumProd", 26, cumulative<true>);
    r.add("", "SwiGLU", 28, swiglu);
    r.add("", "BitCast", 26, bit_cast);
    r.add("", "Floor", 1, floor);
    r.add("", "Ceil", 1, ceil);
    r.add("", "Round", 1, round);
    r.add("", "Identity", 1, identity);
    r.add("", "Neg", 1, neg);
    r.add("", "Not", 1, logical_not);
    r.add_all("", {"IsNaN", "IsInf"}, 1, bool_of_input);
    r.add("", "Dropout", 1, dropout);
    r.add("", "Cast", 1, cast);
    r.add("", "CastLike", 15, cast_like);
    r.add("", "Add", 1, add);
    r.add("", "Sub", 1, sub);
    r.add("", "Mul", 1, mul);
    r.add("", "Div", 1, div);
    r.add("", "Mod", 10, mod);
    r.add_all("", {"Pow", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu"}, 1, broadcast_no_values);
    r.add_all("", {"And", "Or", "Xor"}, 1, logical);
    r.add("", "Equal", 1, equal);
    r.add("", "Less", 1, less);
    r.add("", "LessOrEqual", 12, less_or_equal);
    r.add("", "Greater", 1, greater);
    r.add("", "GreaterOrEqual", 12, greater_or_equal);
    r.add("", "Max", 1, max);
    r.add("", "Min", 1, min);
    r.add("", "Sum", 1, sum);
    r.add("", "Mean", 1, mean);
    r.add("", "Where", 9, where);
}

}  // namespace yobx::onnx::ops
