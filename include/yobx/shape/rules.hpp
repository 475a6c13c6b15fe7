// yobx/shape/rules.hpp — shape rules over SymInt, and the broadcast hooks.
//
// Each rule computes the output shape of one ONNX operator from its input
// shapes (`std::vector<SymInt>`), keeping symbolic dimensions as expressions:
// Concat of [M] and [N] is [M + N]. Rules that must decide something about
// symbols (is this dimension 1?) ask the ShapeEnv, so a strict env stops on an
// undecidable guard and a draft env assumes and reports. Requirements of the
// operator itself (Concat's other dimensions are equal) are recorded with
// ShapeEnv::check, like torch._check. Broadcasting goes through `shape_hooks`,
// a table of function pointers the patch layer swaps.
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

/// Concat along `axis` (negative counts from the end): the axis dimensions add
/// up, the others must be equal (proven, or recorded with ShapeEnv::check).
///   concat(env, {{M}, {N}}, 0)  is [M + N]
template <class = void>
Shape concat(ShapeEnv& env, std::span<const Shape> inputs, std::int64_t axis,
             source_location where = source_location::current()) {
    if (inputs.empty()) detail::fail("Concat", "no inputs");
    const std::int64_t rank = detail::rank_of(inputs[0]);
    for (const auto& s : inputs)
        if (detail::rank_of(s) != rank)
            detail::fail("Concat", "inputs must have the same rank: " + format_shape(inputs[0]) + " has rank " +
                                       std::to_string(rank) + ", " + format_shape(s) + " has rank " +
                                       std::to_string(s.size()));
    const std::int64_t ax = detail::normalize_axis("Concat", axis, rank, inputs);
    Shape out = inputs[0];
    for (std::size_t k = 1; k < inputs.size(); ++k) {
        for (std::int64_t i = 0; i < rank; ++i) {
            const auto idx = static_cast<std::size_t>(i);
            if (i == ax) {
                out[idx] += inputs[k][idx];
                continue;
            }
            detail::require_equal(
                env, out[idx], inputs[k][idx], "Concat",
                [&] {
                    return "dimension " + std::to_string(i) + " differs between " + format_shape(inputs[0]) + " and " +
                           format_shape(inputs[k]) + ": " + out[idx].to_string() + " vs " + inputs[k][idx].to_string();
                },
                where);
            // equal now: keep a constant where a side has one (ONNX's merge of `u0` and 1 is 1)
            if (!out[idx].maybe_constant() && inputs[k][idx].maybe_constant()) out[idx] = inputs[k][idx];
        }
    }
    return out;
}
template <class = void>
Shape concat(ShapeEnv& env, std::initializer_list<Shape> inputs, std::int64_t axis,
             source_location where = source_location::current()) {
    return concat(env, std::span<const Shape>(inputs.begin(), inputs.size()), axis, where);
}

namespace detail {

/// Whether `t == 0` implies `d == 0`, proven without a guard: d is 0, or t is
/// d times a factor that is never 0 (`2*u0` and `u0`). Reshape's "0 copies
/// the input dimension" then gives t whatever t is (size-oblivious reasoning).
template <class = void>
bool zero_forces_zero(ShapeEnv& env, const SymInt& t, const SymInt& d) {
    if (env.statically_known_true(d == 0)) return true;
    if (d.maybe_constant()) return false;  // a nonzero constant: t == 0 would change the result
    // Not tried for a d with a symbol that t lacks: q*d - t would be 0 only if q cancelled that
    // symbol out of d, which the simplified d keeps (the proof held in no such case of the test
    // suites, 5,400 random graphs and the benchmark's 19 models). The proof multiplies q by d: on
    // Swin-T, the batch against the batch times the windows' count, expressions of 2,000
    // characters: 30% of the instructions.
    const auto t_symbols = t.free_symbols(), d_symbols = env.simplify(d).free_symbols();
    if (!std::includes(t_symbols.begin(), t_symbols.end(), d_symbols.begin(), d_symbols.end(), yobx::detail::sym::NameLess{}))
        return false;
    const SymInt q = env.simplify(floordiv(t, d));
    return env.simplify(q * d - t).maybe_constant() == 0 && env.statically_known_true(q != 0);
}

}  // namespace detail

/// Reshape to `target`: -1 (at most one) is inferred from the element count, 0
/// copies the input's dimension at that position unless `allowzero`, where it
/// is a real 0. A symbolic entry that may be 0 is decided by the ShapeEnv
/// (unless `allowzero`); in a draft ShapeEnv, a data-dependent entry (no hint)
/// it cannot settle gives a fresh symbol, as ONNX leaves it unknown. The
/// element counts must match (proven, or recorded with ShapeEnv::check).
///   reshape(env, {a, b, c}, {a, -1})      is [a, b*c]
///   reshape(env, {a, b, c}, {0, 0, 2, -1}) is [a, b, 2, c//2]  (checked: c is even)
template <class = void>
Shape reshape(ShapeEnv& env, const Shape& input, const Shape& target, bool allowzero = false,
              source_location where = source_location::current()) {
    const auto context = [&] { return "target shape " + format_shape(target) + " for input shape " + format_shape(input); };
    Shape out = target;
    std::optional<std::size_t> inferred;
    bool unknown = false;
    for (std::size_t i = 0; i < target.size(); ++i) {
        const SymInt& t = target[i];
        if (i < input.size() && t.identical(input[i])) continue;  // 0 or not, the result is input[i]: no question
        // A data-dependent entry (no hint, as from NonZero) that may be 0 or -1: a strict env asks (and
        // throws); a draft env has no hint to answer from, and the dimension is unknown, a fresh
        // symbol (ONNX leaves it unknown).
        const auto settled = [&](const SymBool& c) { return env.statically_known_true(c) || env.statically_known_true(!c); };
        const bool copy_settled =
            allowzero || settled(t == 0) || (i < input.size() && detail::zero_forces_zero(env, t, input[i]));
        if (env.mode() == ShapeEnvMode::draft && !env.size_hint(t) && !(copy_settled && settled(t == -1) && settled(t < 0))) {
            out[i] = env.fresh_symbol("u");
            unknown = true;
            continue;
        }
        // evaluate answers constants and proven facts itself, and guards only on the rest
        if (env.evaluate(t == -1, where)) {
            if (inferred) detail::fail("Reshape", "more than one -1 in the " + context());
            inferred = i;
            continue;
        }
        if (env.evaluate(t < 0, where))
            detail::fail("Reshape", "invalid value " + t.to_string() + " at position " + std::to_string(i) + " of the " +
                                        context() + "; only -1 (inferred) and 0 (copy) are special");
        if (allowzero) continue;  // 0 is a size like any other
        // Size-oblivious: when t == 0 forces input[i] == 0, copying gives t either way; no question.
        if (i < input.size() && detail::zero_forces_zero(env, t, input[i])) continue;
        if (!env.evaluate(t == 0, where)) continue;
        if (i >= input.size())
            detail::fail("Reshape", "0 at position " + std::to_string(i) + " copies dimension " + std::to_string(i) +
                                        " of the input, but the input has rank " + std::to_string(input.size()) + " (" +
                                        context() + ")");
        out[i] = input[i];
    }
    if (unknown) {  // nothing to check or infer from an unknown entry
        if (inferred) out[*inferred] = env.fresh_symbol("u");
        return out;
    }
    if (allowzero && inferred)
        for (std::size_t i = 0; i < target.size(); ++i)
            if (i != *inferred && env.evaluate(target[i] == 0, where))
                detail::fail("Reshape", "with allowzero, the " + context() + " cannot hold both 0 and -1");
    // Dimensions found on both sides cancel (a multiset: [a, b, c] and [a, b, 2, -1] leave [c] and [2])
    const auto uncommon = [](Shape a, Shape b) {
        std::erase_if(b, [&](const SymInt& k) {
            const auto it = std::find_if(a.begin(), a.end(), [&](const SymInt& d) { return d.identical(k); });
            if (it == a.end()) return false;
            a.erase(it);
            return true;
        });
        return std::pair{std::move(a), std::move(b)};
    };
    if (!inferred) {
        // What is left multiplying to one count proves the counts equal without the products of every
        // dim (on Swin-T, the windows' long sizes times the batch: 17% of the instructions). Where it
        // does not, the whole counts are compared: a 0 on both sides makes them equal where what is
        // left is not.
        const auto [in_left, out_left] = uncommon(input, out);
        if (env.statically_known_true(detail::product(in_left) == detail::product(out_left))) return out;
        const SymInt total = detail::product(input), count = detail::product(out);
        detail::require_equal(
            env, total, count, "Reshape",
            [&] {
                return "cannot reshape " + format_shape(input) + " (" + total.to_string() + " elements) into " +
                       format_shape(out) + " (" + count.to_string() + " elements)";
            },
            where);
        return out;
    }
    const SymInt total = detail::product(input);
    Shape known = out;
    known.erase(known.begin() + static_cast<std::ptrdiff_t>(*inferred));
    const SymInt rest = env.simplify(detail::product(known));
    const auto impossible = [&] {
        return "cannot reshape " + format_shape(input) + " (" + total.to_string() + " elements) into " +
               format_shape(target) + ": " + total.to_string() + " is not a multiple of " + rest.to_string();
    };
    if (env.statically_known_true(rest == 0)) {
        if (!env.statically_known_true(total == 0)) detail::fail("Reshape", impossible());
        detail::fail("Reshape", "the -1 in the " + context() + " is ambiguous: the other dimensions multiply to 0");
    }
    // so [a, b, c] -> [a, b, 2, -1] asks for Mod(c, 2) == 0 (which a ShapeEnv keeps as
    // divisibility) and gives c//2
    const auto [remaining, known_left] = uncommon(input, std::move(known));
    const SymInt num = detail::product(remaining), den = detail::product(known_left);
    detail::require_equal(env, env.simplify(mod(num, den)), SymInt(0), "Reshape", impossible, where);
    out[*inferred] = env.simplify(floordiv(num, den));
    return out;
}

/// Slice along `axes` (default: 0, 1, ...) with `steps` (default 1), ONNX's
/// rules: a negative index counts from the end, then indices are clamped to
/// the dimension, [0, d] for a positive step; for a negative step, which walks
/// backwards, the start to [0, d - 1] and the end to [-1, d - 1] (numpy differs:
/// a backward start before the first element takes nothing, ONNX takes that
/// element). An index of magnitude 2^62 or more (INT64_MAX, INT64_MIN, -INT64_MAX)
/// means "to the end": no dimension reaches it (detail::past_every_dim). An end of
/// exactly INT32_MAX or INT64_MAX is numpy's None, as onnxruntime runs it: the slice
/// goes through the last element, or for a negative step through the first (ONNX's
/// reference clamps that end to d - 1 and takes nothing). Starts and ends
/// may be symbolic; a symbolic index whose sign ranges cannot tell is decided
/// by the ShapeEnv. Steps are constants.
///   slice(env, {a, b}, {1}, {INT64_MAX}, {{1}})  is [a, b - 1]  (b >= 1)
///   slice(env, {a}, {-1}, {INT64_MAX}, nullopt, {{-1}})  is [a]
template <class = void>
Shape slice(ShapeEnv& env, const Shape& input, const Shape& starts, const Shape& ends,
            std::optional<std::vector<std::int64_t>> axes = std::nullopt,
            std::optional<std::vector<std::int64_t>> steps = std::nullopt,
            source_location where = source_location::current()) {
    const std::size_t n = starts.size();
    if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n))
        detail::fail("Slice", "starts, ends, axes and steps must have the same length, got " + std::to_string(n) + ", " +
                                  std::to_string(ends.size()) + ", " + (axes ? std::to_string(axes->size()) : "-") +
                                  ", " + (steps ? std::to_string(steps->size()) : "-") + " for input shape " +
                                  format_shape(input));
    const std::int64_t rank = detail::rank_of(input);
    Shape out = input;
    std::vector<bool> seen(input.size(), false);
    for (std::size_t k = 0; k < n; ++k) {
        const std::int64_t ax = detail::normalize_axis("Slice", axes ? (*axes)[k] : static_cast<std::int64_t>(k), rank, input);
        const auto idx = static_cast<std::size_t>(ax);
        if (seen[idx]) detail::fail("Slice", "axis " + std::to_string(ax) + " appears twice in axes " + detail::format_ints(*axes) +
                                                 " for input shape " + format_shape(input));
        seen[idx] = true;
        const std::int64_t step = steps ? (*steps)[k] : 1;
        if (step == 0) detail::fail("Slice", "step 0 at axis " + std::to_string(ax) + " for input shape " + format_shape(input));
        const SymInt& d = input[idx];
        const auto normalized = [&](const SymInt& v) {
            if (detail::beyond_every_dim(v)) return v;  // clamp() maps it to an end
            return env.evaluate(v < 0, where) ? env.simplify(v + d) : v;
        };
        SymInt start = normalized(starts[k]), end = normalized(ends[k]);
        // ceil(distance / |step|) written as (distance - 1)//|step| + 1, which cannot
        // overflow; |INT64_MIN| is read as INT64_MAX (either takes one element at most)
        const std::int64_t magnitude = step == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max()
                                                                                        : (step < 0 ? -step : step);
        SymInt distance;
        const bool open = detail::open_end(ends[k]);
        if (step > 0) {
            start = detail::clamp(env, start, 0, d);
            end = open ? d : detail::clamp(env, end, 0, d);
            distance = end - start;
        } else {
            // ONNX clamps a backward start to [0, d - 1] (numpy takes nothing from a start before
            // the first element); an empty dimension gives -1, so nothing is taken
            start = detail::clamp(env, start, 0, d - 1);
            end = open ? SymInt(-1) : detail::clamp(env, end, -1, d - 1);  // -1: up to the first element included
            distance = start - end;
        }
        // a step past every dimension takes the first element, if any: Min(distance, 1), which the
        // division by it would write with constants no evaluation in int64 survives
        const SymInt length = magnitude >= detail::past_every_dim ? sym_min(distance, 1) : floordiv(distance - 1, magnitude) + 1;
        out[idx] = detail::at_least_zero(env, env.simplify(length));
    }
    return out;
}

/// Gather along `axis`: the data's axis is replaced by the indices' shape.
///   gather({a, b, c}, {}, 1)    is [a, c]
///   gather({a, b}, {n, 2}, 0)   is [n, 2, b]
template <class = void>
Shape gather(const Shape& data, const Shape& indices, std::int64_t axis) {
    const std::int64_t ax = detail::normalize_axis("Gather", axis, detail::rank_of(data), data);
    Shape out(data.begin(), data.begin() + ax);
    out.insert(out.end(), indices.begin(), indices.end());
    out.insert(out.end(), data.begin() + ax + 1, data.end());
    return out;
}

/// Squeeze `axes` (each must be 1: proven, or recorded with ShapeEnv::check), or
/// without axes every dimension equal to 1 (a symbolic one is decided by the ShapeEnv).
///   squeeze(env, {a, 1, b}, {{1}})  is [a, b]
template <class = void>
Shape squeeze(ShapeEnv& env, const Shape& input, std::optional<std::vector<std::int64_t>> axes = std::nullopt,
              source_location where = source_location::current()) {
    const std::int64_t rank = detail::rank_of(input);
    std::vector<bool> drop(input.size(), false);
    if (!axes) {
        for (std::size_t i = 0; i < input.size(); ++i)
            drop[i] = env.evaluate(input[i] == 1, where);
    } else {
        for (std::int64_t a : *axes) {
            const auto i = static_cast<std::size_t>(detail::normalize_axis("Squeeze", a, rank, input));
            if (drop[i])
                detail::fail("Squeeze", "axis " + std::to_string(a) + " appears twice in axes " + detail::format_ints(*axes) +
                                            " for input shape " + format_shape(input));
            drop[i] = true;
            detail::require_equal(
                env, input[i], SymInt(1), "Squeeze",
                [&] {
                    return "dimension " + std::to_string(i) + " of " + format_shape(input) + " is " + input[i].to_string() +
                           ", not 1";
                },
                where);
        }
    }
    Shape out;
    for (std::size_t i = 0; i < input.size(); ++i)
        if (!drop[i]) out.push_back(input[i]);
    return out;
}

/// Insert dimensions of size 1 at `axes`, positions in the output (negative count from its end).
///   unsqueeze({a, b}, {0, -1})  is [1, a, b, 1]
template <class = void>
Shape unsqueeze(const Shape& input, const std::vector<std::int64_t>& axes) {
    const std::int64_t out_rank = detail::rank_of(input) + static_cast<std::int64_t>(axes.size());
    std::vector<bool> one(static_cast<std::size_t>(out_rank), false);
    for (std::int64_t a : axes) {
        const auto i = static_cast<std::size_t>(detail::normalize_axis("Unsqueeze", a, out_rank, input, "output rank"));
        if (one[i])
            detail::fail("Unsqueeze", "axis " + std::to_string(a) + " appears twice in axes " + detail::format_ints(axes) +
                                          " for input shape " + format_shape(input));
        one[i] = true;
    }
    Shape out;
    out.reserve(one.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < one.size(); ++i) out.push_back(one[i] ? SymInt(1) : input[next++]);
    return out;
}

/// Permute the dimensions: output dimension i is input dimension perm[i]
/// (default: reversed). perm must be a permutation of 0..rank-1.
///   transpose({a, b, c}, {{0, 2, 1}})  is [a, c, b]
template <class = void>
Shape transpose(const Shape& input, std::optional<std::vector<std::int64_t>> perm = std::nullopt) {
    const std::size_t rank = input.size();
    if (!perm) return Shape(input.rbegin(), input.rend());
    std::vector<bool> used(rank, false);
    bool ok = perm->size() == rank;
    for (std::size_t i = 0; ok && i < rank; ++i) {
        const std::int64_t p = (*perm)[i];
        ok = p >= 0 && p < static_cast<std::int64_t>(rank) && !used[static_cast<std::size_t>(p)];
        if (ok) used[static_cast<std::size_t>(p)] = true;
    }
    if (!ok)
        detail::fail("Transpose", "perm " + detail::format_ints(*perm) + " is not a permutation of the " +
                                      std::to_string(rank) + " axes of input shape " + format_shape(input));
    Shape out;
    out.reserve(perm->size());
    for (std::int64_t p : *perm) out.push_back(input[static_cast<std::size_t>(p)]);
    return out;
}

/// numpy's matmul: a 1-D left operand is a row, a 1-D right operand a column (the
/// added dimension is removed from the result); leading dimensions broadcast
/// through `shape_hooks.infer_size`; the contracted dimensions must be equal
/// (proven, or recorded with ShapeEnv::check).
///   matmul(env, {n, a, k}, {k, m})  is [n, a, m]
///   matmul(env, {k}, {k})           is []
template <class = void>
Shape matmul(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy = BroadcastPolicy::strict,
             source_location where = source_location::current()) {
    if (a.empty() || b.empty())
        detail::fail("MatMul", "operands must have rank >= 1, got shapes " + format_shape(a) + " and " + format_shape(b));
    // a 1-D operand as a matrix; a larger one as it is (not copied)
    const Shape a1 = a.size() == 1 ? Shape{1, a[0]} : Shape{}, b1 = b.size() == 1 ? Shape{b[0], 1} : Shape{};
    const Shape& a2 = a.size() == 1 ? a1 : a;
    const Shape& b2 = b.size() == 1 ? b1 : b;
    const SymInt& ka = a2[a2.size() - 1];
    const SymInt& kb = b2[b2.size() - 2];
    detail::require_equal(
        env, ka, kb, "MatMul",
        [&] {
            return "contracted dimensions differ: " + format_shape(a) + " @ " + format_shape(b) + " contracts " +
                   ka.to_string() + " with " + kb.to_string();
        },
        where);
    Shape out = infer_size(env, Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2), policy, "MatMul", where);
    out.reserve(out.size() + 2);
    if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
    if (b.size() > 1) out.push_back(b2[b2.size() - 1]);
    return out;
}

/// Expand: the input broadcast with `target` in both directions (ONNX's Expand),
/// through `shape_hooks.infer_size`. A negative constant in `target` is an error.
///   expand(env, {a, 1}, {1, b})  is [a, b]
template <class = void>
Shape expand(ShapeEnv& env, const Shape& input, const Shape& target, BroadcastPolicy policy = BroadcastPolicy::strict,
             source_location where = source_location::current()) {
    for (std::size_t i = 0; i < target.size(); ++i)
        if (const auto c = target[i].maybe_constant(); c && *c < 0)
            detail::fail("Expand", "invalid value " + std::to_string(*c) + " at position " + std::to_string(i) +
                                       " of the target shape " + format_shape(target) + "; dimensions cannot be negative");
    return infer_size(env, input, target, policy, "Expand", where);
}

/// The output of Shape(start, end): the input's dimensions input[start:end], with
/// negative positions counted from the end and clamped to [0, rank] (ONNX opset 15);
/// the default end, INT64_MAX, is the rank. The Shape tensor itself has shape `{result.size()}`.
///   shape_values({a, b, c}, 1)  is [b, c]
template <class = void>
Shape shape_values(const Shape& input, std::int64_t start = 0,
                   std::int64_t end = std::numeric_limits<std::int64_t>::max()) {
    const std::int64_t rank = detail::rank_of(input);
    const auto norm = [&](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
    const std::int64_t s = norm(start), e = norm(end);
    return s >= e ? Shape{} : Shape(input.begin() + s, input.begin() + e);
}

/// The output shape of Shape(start, end): one dimension, the number of values.
///   shape({a, b, c})  is [3]
template <class = void>
Shape shape(const Shape& input, std::int64_t start = 0, std::int64_t end = std::numeric_limits<std::int64_t>::max()) {
    return {static_cast<std::int64_t>(shape_values(input, start, end).size())};
}

/// The number of elements (Size's value): the product of the dimensions.
///   numel({a, b, 2})  is 2*a*b
template <class = void>
SymInt numel(const Shape& input) { return detail::product(input); }

/// The output shape of Size: a scalar, `[]`.
template <class = void>
Shape size(const Shape&) { return {}; }

/// NonZero: `[rank, u]` where u is a fresh symbol (no hint): the count of
/// non-zero elements depends on the data.
///   nonzero(env, {a, b})  is [2, u0]
template <class = void>
Shape nonzero(ShapeEnv& env, const Shape& input) {
    return {static_cast<std::int64_t>(input.size()), env.fresh_symbol("u")};
}

}  // namespace shape

}  // namespace yobx
