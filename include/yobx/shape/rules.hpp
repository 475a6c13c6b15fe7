// yobx/shape/rules.hpp — broadcasting over SymInt, its policies, and the broadcast hooks.
//
// Broadcasting computes a shape from shapes (`std::vector<SymInt>`), keeping symbolic
// dimensions as expressions. What it must decide about symbols (is this dimension 1?) it
// asks the ShapeEnv, so a strict env stops on an undecidable guard and a draft env assumes
// and reports; requirements are recorded with ShapeEnv::check, like torch._check. It goes
// through `shape_hooks`, a table of function pointers the patch layer swaps. The helpers
// below (axes, clamps, equalities, element counts) are what the operators' dims share:
// each operator's own dims sit beside its rule in yobx/onnx/ops/<family>.hpp
// (`shape::reshape` in reshaping.hpp, `shape::slice` in indexing.hpp, `shape::matmul` in math.hpp).
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/error.hpp>
#include <yobx/patch_source.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// `[a, b + 1, 3]` (the same as to_string(shape); Shape is declared in sym/symint.hpp).
template <class = void>
std::string format_shape(const Shape& shape) { return to_string(shape); }

/// `[a, b]`, `[a, b] and [c]`, `[a], [b] and [c]`: the shapes an error is about.
template <class = void>
std::string format_shapes(std::span<const Shape> shapes) {
    std::string s;
    for (std::size_t i = 0; i < shapes.size(); ++i)
        s += (i == 0 ? "" : i + 1 == shapes.size() ? " and " : ", ") + format_shape(shapes[i]);
    return s;
}

/// What broadcasting does with two dimensions that can be proven neither equal
/// nor 1 (nor incompatible). A constant other than 1 against a symbol decides
/// the dimension under every policy, as in ONNX: `N` with 6 is 6, and
/// `N == 1 or N == 6` is recorded (ShapeEnv::assume_requirement). The policy
/// decides the rest, two symbolic sides such as unrelated symbols `a` and `c`:
/// - strict: ask the ShapeEnv (a strict env throws GuardOnDataDependentSymNode,
///   a draft env takes the hints' answer and reports it), torch.export's behaviour;
/// - sym_max: the result is `Max(a, c)`, the behaviour of the shipped patches.
///   Like torch, whose backed sizes are at least 2, it assumes a side that may
///   be 0 is not 0 where the other is 1: there the broadcast is 0, not Max;
/// - new_symbol: the result is a fresh symbol, ONNX's rule for two symbols, unless
///   both are at least 1 and Max(a, c) is provably one of them (`n` with
///   `Min(64, n)` is `n`): every valid graph broadcasts to that side;
/// - merge: onnxruntime's `auto_merge`: where new_symbol would give a fresh symbol,
///   the two are taken equal (`ShapeEnv::check`, an assumption the graph needs) and
///   the result is their common value: a fresh symbol is replaced by a named one,
///   a symbol by an expression, so `n` with `unk__0` gives `n` from there on.
enum class BroadcastPolicy { strict, sym_max, new_symbol, merge };

/// "strict", "sym_max", "new_symbol".
inline std::string_view to_string(BroadcastPolicy p) {
    switch (p) {
        case BroadcastPolicy::strict: return "strict";
        case BroadcastPolicy::sym_max: return "sym_max";
        case BroadcastPolicy::new_symbol: return "new_symbol";
        case BroadcastPolicy::merge: return "merge";
    }
    return "?";
}

/// Multidirectional broadcast of any number of shapes (the `broadcast_shapes` hook).
/// `op` names the operator in errors; `where` is reported for guards.
using BroadcastShapesFn = Shape (*)(ShapeEnv& env, std::span<const Shape> shapes, BroadcastPolicy policy,
                                    std::string_view op, source_location where);
/// Broadcast of two shapes (the `infer_size` hook), used by Expand and MatMul's batch dimensions.
using InferSizeFn = Shape (*)(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy,
                              std::string_view op, source_location where);

namespace shape {

namespace detail {

[[noreturn]] inline void fail(std::string_view op, const std::string& what) {
    throw value_error(std::string(op) + ": " + what);
}

template <class = void>
std::string format_ints(std::span<const std::int64_t> v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

inline std::int64_t rank_of(const Shape& s) { return static_cast<std::int64_t>(s.size()); }

/// axis in [-rank, rank - 1], returned in [0, rank - 1].
template <class = void>
std::int64_t normalize_axis(std::string_view op, std::int64_t axis, std::int64_t rank, std::span<const Shape> shapes,
                            std::string_view rank_name = "rank") {
    if (axis < -rank || axis >= rank)
        fail(op, "axis " + std::to_string(axis) + " is out of range for " + std::string(rank_name) + " " + std::to_string(rank) + " (shape" +
                     (shapes.size() > 1 ? "s " : " ") + format_shapes(shapes) + "); valid axes are " +
                     (rank == 0 ? std::string("none") : std::to_string(-rank) + " to " + std::to_string(rank - 1)));
    return axis < 0 ? axis + rank : axis;
}

template <class = void>
std::int64_t normalize_axis(std::string_view op, std::int64_t axis, std::int64_t rank, const Shape& shape,
                            std::string_view rank_name = "rank") {
    return normalize_axis(op, axis, rank, std::span<const Shape>(&shape, 1), rank_name);
}

/// The operator requires a == b: proven, refuted (value_error with `what`), or
/// recorded with ShapeEnv::check (which throws if the hints contradict it).
template <class What>
void require_equal(ShapeEnv& env, const SymInt& a, const SymInt& b, std::string_view op, What&& what, source_location where) {
    if (env.statically_known_true(a == b)) return;
    if (env.statically_known_true(a != b)) fail(op, what());
    env.check(a == b, std::string(op) + ": " + what(), where);
}

/// An index of this magnitude or more is past every dimension: a tensor of 2^62 elements would
/// take 4 EiB. Exporters write INT64_MAX, INT64_MIN and -INT64_MAX (torch.onnx's flip) for "to
/// the end"; compared with a dimension that has no upper bound, they would stay in the dims as
/// Max(9223372036854775806, d), which no evaluation in int64 survives.
inline constexpr std::int64_t past_every_dim = std::int64_t{1} << 62;

/// Whether `v` is a constant index at or past either end of every dimension.
inline bool beyond_every_dim(const SymInt& v) {
    const auto c = v.maybe_constant();
    return c && (*c >= past_every_dim || *c <= -past_every_dim);
}

/// Whether a Slice's end is numpy's None, as onnxruntime reads exactly INT32_MAX and
/// INT64_MAX: through the last element for a positive step, through the first for a
/// negative one. ONNX's reference clamps a backward INT64_MAX to d - 1 and takes nothing.
inline bool open_end(std::int64_t end) {
    return end == std::numeric_limits<std::int32_t>::max() || end == std::numeric_limits<std::int64_t>::max();
}
inline bool open_end(const SymInt& end) {
    const auto c = end.maybe_constant();
    return c && open_end(*c);
}

/// Two value lists broadcast against each other (lengths equal or 1; an empty one against one
/// element gives an empty list), each pair by `f`, which returns a std::optional: nullopt for
/// the whole when the lengths do not broadcast or `f` gives nullopt for a pair.
template <class A, class B, class F>
auto broadcast_pairs(const std::vector<A>& a, const std::vector<B>& b, F f)
    -> std::optional<std::vector<typename decltype(f(a[0], b[0]))::value_type>> {
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
    const std::size_t n = a.empty() || b.empty() ? 0 : std::max(a.size(), b.size());
    std::vector<typename decltype(f(a[0], b[0]))::value_type> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        auto v = f(a[a.size() == 1 ? 0 : i], b[b.size() == 1 ? 0 : i]);
        if (!v) return std::nullopt;
        out.push_back(std::move(*v));
    }
    return out;
}

/// Min(Max(v, lo), hi), without Max/Min where the ShapeEnv proves them useless.
/// When hi < lo (an empty dimension's [0, -1]) the result is hi.
template <class = void>
SymInt clamp(const ShapeEnv& env, const SymInt& v, const SymInt& lo, const SymInt& hi) {
    // an index past every dimension (beyond_every_dim) is one of its ends, compared with nothing
    const auto c = v.maybe_constant();
    const bool lowest = c && *c <= -past_every_dim;
    if ((c && *c >= past_every_dim) || (!lowest && env.statically_known_true(v >= hi))) return hi;
    const bool at_lo = lowest || env.statically_known_true(v <= lo), above_lo = !at_lo && env.statically_known_true(v >= lo);
    SymInt x = at_lo ? lo : above_lo ? v : sym_max(v, lo);
    // Max(v, lo) <= hi when both are: asked term by term, which the ShapeEnv decides more often
    const bool below_hi = at_lo      ? env.statically_known_true(lo <= hi)
                          : above_lo ? env.statically_known_true(v <= hi)
                                     : env.statically_known_true(v <= hi) && env.statically_known_true(lo <= hi);
    if (!below_hi) x = env.statically_known_true(x >= hi) ? hi : sym_min(x, hi);
    return env.simplify(x);
}

/// max(v, 0) without Max where the ShapeEnv proves the sign.
template <class = void>
SymInt at_least_zero(const ShapeEnv& env, const SymInt& v) {
    if (env.statically_known_true(v >= 0)) return env.simplify(v);
    if (env.statically_known_true(v <= 0)) return 0;
    return env.simplify(sym_max(v, 0));
}

/// a == b in the form a ShapeEnv narrows ranges with: where one side is a Min (Max) with
/// the other among its arguments, the other at most (at least) each remaining argument,
/// so that `n == Min(64, n)` is `n <= 64` and Min(64, n) is n from then on.
template <class = void>
SymBool equality(const SymInt& a, const SymInt& b) {
    const auto parts = [](const SymInt& x, const SymInt& e) -> std::optional<SymBool> {
        return e.with_poly([&](const yobx::detail::sym::Poly& p) -> std::optional<SymBool> {
            std::int64_t coef = 0;
            const auto* atom = yobx::detail::sym::lone_atom(p, coef);
            if (atom == nullptr || coef != 1 || (atom->kind != yobx::detail::sym::AtomKind::min && atom->kind != yobx::detail::sym::AtomKind::max))
                return std::nullopt;
            bool found = false;
            std::optional<SymBool> all;
            for (const auto& arg : atom->args) {
                const SymInt y(arg);
                if (!found && y.identical(x)) {
                    found = true;
                    continue;
                }
                const SymBool c = atom->kind == yobx::detail::sym::AtomKind::min ? x <= y : x >= y;
                all = all ? (*all && c) : c;
            }
            return found ? all : std::nullopt;
        });
    };
    if (auto c = parts(a, b)) return *c;
    if (auto c = parts(b, a)) return *c;
    return a == b;
}

template <class = void>
SymInt product(const Shape& s) {
    SymInt p = 1;
    for (const auto& d : s) p *= d;
    return p;
}

}  // namespace detail

/// The side a broadcast of `a` and `b` must give in every valid graph, when the ShapeEnv proves
/// both at least 1 and Max(a, b) one of them (they are equal, or one is 1): `n` with `Min(64, n)`
/// (a position table sliced to the sequence) is `n`. Nothing otherwise, also when a question is
/// undefined (a division by a size that may be 0). broadcast_dim's new_symbol and merge policies
/// and the ONNX layer's fallback for a broadcast the ShapeEnv could not decide use it.
template <class = void>
std::optional<SymInt> dominating_side(ShapeEnv& env, const SymInt& a, const SymInt& b) {
    const auto known = [&](const SymBool& c) {
        try {
            return env.statically_known_true(c);
        } catch (const error&) {
            return false;
        }
    };
    if (!known(a >= 1) || !known(b >= 1)) return std::nullopt;
    const SymInt m = sym_max(a, b);
    if (known(m == a)) return a;
    if (known(m == b)) return b;
    return std::nullopt;
}

/// The broadcast of two dimensions, or nullopt when they cannot broadcast
/// (provably, or for a strict policy, by the ShapeEnv's answers).
///   broadcast_dim(env, a, 1, policy)  is a
///   broadcast_dim(env, a, c, BroadcastPolicy::sym_max)  is Max(a, c)
template <class = void>
std::optional<SymInt> broadcast_dim(ShapeEnv& env, const SymInt& a0, const SymInt& b0, BroadcastPolicy policy,
                                    source_location where = source_location::current()) {
    // a side that is 1, or two sides alike: the other side, simplified, as below, without asking
    if (a0.maybe_constant() == 1 || a0.identical(b0)) return env.simplify(b0);
    if (b0.maybe_constant() == 1) return env.simplify(a0);
    // with the ShapeEnv's replacements applied: a K that a check made 6 decides like 6
    const SymInt a = env.simplify(a0), b = env.simplify(b0);
    if (const auto ca = a.maybe_constant(), cb = b.maybe_constant(); ca && cb) {  // concrete: numpy's rule, no env
        if (*ca == *cb || *cb == 1) return a;
        if (*ca == 1) return b;
        return std::nullopt;
    }
    if (a.identical(b) || env.statically_known_true(a == b)) return a;
    if (env.statically_known_true(a == 1)) return b;
    if (env.statically_known_true(b == 1)) return a;
    if (env.statically_known_true(a != b) && env.statically_known_true(a != 1) && env.statically_known_true(b != 1))
        return std::nullopt;
    // ONNX's rule, under every policy: a constant other than 1 decides the dimension, and
    // the graph is valid only if the symbolic side is 1 or that constant (an assumption,
    // recorded; in the draft report of a draft env).
    // The same for a data-dependent size (no hint, as from NonZero) against a size with a hint:
    // the hinted side decides, as ONNX takes the known dimension.
    const auto ha = env.size_hint(a), hb = env.size_hint(b);
    if (a.maybe_constant() || b.maybe_constant() || ha.has_value() != hb.has_value()) {
        const bool a_decides = a.maybe_constant() || (!b.maybe_constant() && ha);
        const SymInt& c = a_decides ? a : b;
        const SymInt& s = a_decides ? b : a;
        const auto& hs = a_decides ? hb : ha;
        if (hs && *hs != 1 && *hs != (a_decides ? ha : hb)) return std::nullopt;  // the hints refute it
        // what ranges rule out is left out, so that `a == 4` becomes a replacement
        const SymBool requirement = env.statically_known_true(s != 1) ? s == c
                                    : env.statically_known_true(s != c) ? s == 1
                                                                        : (s == 1 || s == c);
        env.assume_requirement(requirement, "broadcasting " + s.to_string() + " with " + c.to_string(), where);
        return c;
    }
    // Two data-dependent sizes under strict: a strict env asks (and throws), a draft env, which
    // has no hint to answer from, gives a fresh data-dependent symbol (ONNX's unknown).
    if (!ha && !hb && policy == BroadcastPolicy::strict && env.mode() == ShapeEnvMode::draft) return env.fresh_symbol("u");
    switch (policy) {
        case BroadcastPolicy::strict:
            if (env.evaluate(a == b, where)) return a;
            if (env.evaluate(b == 1, where)) return a;
            if (env.evaluate(a == 1, where)) return b;
            return std::nullopt;
        case BroadcastPolicy::sym_max: return env.simplify(sym_max(a, b));
        case BroadcastPolicy::new_symbol:
        case BroadcastPolicy::merge: {
            // merge: the two taken equal, as onnxruntime's auto_merge takes them; false when an
            // earlier constraint or the hints refute it
            const auto merged = [&] {
                if (policy != BroadcastPolicy::merge) return false;
                try {
                    env.assume_requirement(detail::equality(a, b), "auto_merge: broadcasting " + a.to_string() + " with " + b.to_string(),
                                           where);
                    return true;
                } catch (const runtime_error&) {
                    return false;
                }
            };
            // Both sides at least 1 and Max(a, b) provably one of them: that side is exact.
            if (const auto side = dominating_side(env, a, b)) return merged() ? env.simplify(*side) : *side;
            if (merged()) return env.simplify(a);
            // The fresh symbol gets the hints' broadcast as its hint, when there is one.
            std::optional<std::int64_t> hint;
            if (ha && hb && (*ha == *hb || *hb == 1)) hint = ha;
            else if (ha && hb && *ha == 1) hint = hb;
            return env.fresh_symbol("s", hint);
        }
    }
    return std::nullopt;
}

/// The default `broadcast_shapes` hook: numpy's multidirectional broadcast, shapes
/// aligned on the right, each dimension resolved by broadcast_dim with `policy`.
///   broadcast_shapes(env, {{a, b}, {b}}) is [a, b]
YOBX_DETAIL_PATCH_SOURCE_DEFERRED(default_broadcast_shapes,
template <class = void>
Shape default_broadcast_shapes(ShapeEnv& env, std::span<const Shape> shapes, BroadcastPolicy policy,
                               std::string_view op, source_location where) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    Shape out(rank, SymInt(1));
    for (std::size_t i = 0; i < rank; ++i) {  // i counts from the right
        SymInt acc = 1;
        for (const auto& s : shapes) {
            if (i >= s.size()) continue;
            const SymInt& d = s[s.size() - 1 - i];
            auto r = broadcast_dim(env, acc, d, policy, where);
            if (!r)
                detail::fail(op, "shapes " + format_shapes(shapes) + " cannot be broadcast: at output dimension " +
                                     std::to_string(rank - 1 - i) + ", " + acc.to_string() + " and " + d.to_string() +
                                     " are not equal and neither is 1");
            acc = std::move(*r);
        }
        out[rank - 1 - i] = std::move(acc);
    }
    return out;
}) YOBX_PATCH_SOURCE_END

/// The default `infer_size` hook: default_broadcast_shapes of two shapes.
YOBX_DETAIL_PATCH_SOURCE_DEFERRED(default_infer_size,
template <class = void>
Shape default_infer_size(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy, std::string_view op,
                         source_location where) {
    const std::array<Shape, 2> shapes{a, b};
    return default_broadcast_shapes(env, shapes, policy, op, where);
}) YOBX_PATCH_SOURCE_END

}  // namespace shape

/// One entry of the hook table: a function pointer, used as one. It converts
/// to and from `Fn`, compares with one and calls through. Empty, it stands for
/// the default rule, which it names only when asked (converted, compared or
/// called): a constant address of the default in the table would make every
/// file that includes this header compile the default rule and the ShapeEnv
/// under it.
template <class Fn, class Default>
class ShapeHook {
public:
    using pointer = Fn;

    constexpr ShapeHook() noexcept = default;
    constexpr ShapeHook(Fn f) noexcept : f_(f) {}  // NOLINT: implicit, as the pointer it replaces

    /// The function the entry calls: the one assigned, or the default rule.
    Fn get() const noexcept { return f_ != nullptr ? f_ : Default::template get<>(); }
    operator Fn() const noexcept { return get(); }  // NOLINT: implicit, as the pointer it replaces

    // the return type is written out: a deduced one would make GCC 14 compile the
    // body, and so the default rule, wherever a template names the call
    template <class... Args>
    auto operator()(Args&&... args) const -> decltype(std::declval<Fn>()(std::forward<Args>(args)...)) {
        return get()(std::forward<Args>(args)...);
    }

    friend bool operator==(const ShapeHook& a, const ShapeHook& b) noexcept { return a.get() == b.get(); }
    friend bool operator==(const ShapeHook& a, Fn b) noexcept { return a.get() == b; }

private:
    Fn f_ = nullptr;
};

namespace shape::detail {
struct DefaultBroadcastShapes {
    template <class = void>
    static BroadcastShapesFn get() noexcept { return &default_broadcast_shapes<>; }
};
struct DefaultInferSize {
    template <class = void>
    static InferSizeFn get() noexcept { return &default_infer_size<>; }
};
}  // namespace shape::detail

/// The hook table the broadcasting rules are reached through. Each entry is
/// used as a plain function pointer (a ShapeHook), so swapping one is a single
/// assignment that the patch layer undoes by assigning the old value back:
///   auto old = std::exchange(yobx::shape_hooks.broadcast_shapes, &my_broadcast);
///   ...
///   yobx::shape_hooks.broadcast_shapes = old;
/// The table is global, like the torch functions the patches replace: swap
/// entries while no other thread runs shape inference.
struct ShapeHooks {
    ShapeHook<BroadcastShapesFn, shape::detail::DefaultBroadcastShapes> broadcast_shapes;
    ShapeHook<InferSizeFn, shape::detail::DefaultInferSize> infer_size;
};

/// The hooks every rule uses.
inline constinit ShapeHooks shape_hooks{};

namespace shape {

/// Multidirectional broadcast (Add, Sub, Mul, Div, Where...), through `shape_hooks.broadcast_shapes`.
///   broadcast(env, {{a, b}, {c, b}}, BroadcastPolicy::sym_max)  is [Max(a, c), b]
template <class = void>
Shape broadcast(ShapeEnv& env, std::span<const Shape> shapes, BroadcastPolicy policy = BroadcastPolicy::strict,
                std::string_view op = "broadcast", source_location where = source_location::current()) {
    return shape_hooks.broadcast_shapes(env, shapes, policy, op, where);
}
template <class = void>
Shape broadcast(ShapeEnv& env, std::initializer_list<Shape> shapes, BroadcastPolicy policy = BroadcastPolicy::strict,
                std::string_view op = "broadcast", source_location where = source_location::current()) {
    return broadcast(env, std::span<const Shape>(shapes.begin(), shapes.size()), policy, op, where);
}

/// Broadcast of two shapes, through `shape_hooks.infer_size`.
template <class = void>
Shape infer_size(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy = BroadcastPolicy::strict,
                 std::string_view op = "infer_size", source_location where = source_location::current()) {
    return shape_hooks.infer_size(env, a, b, policy, op, where);
}

/// The number of elements (Size's value): the product of the dimensions.
///   numel({a, b, 2})  is 2*a*b
template <class = void>
SymInt numel(const Shape& input) { return detail::product(input); }

}  // namespace shape

}  // namespace yobx
