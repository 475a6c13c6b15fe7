// yobx/onnx/ops/reshaping.hpp — operators that rearrange a tensor's dims: Shape, Size, Reshape,
// Flatten, Squeeze, Unsqueeze, Transpose, Expand, Tile.
//
// Each operator's dims (`yobx::shape::reshape`, `squeeze`, `unsqueeze`, `transpose`,
// `expand`, `shape_values`: Shape -> Shape, the ShapeEnv deciding what it must) sit beside
// its rule (`yobx::onnx::ops::reshape`...), which adds the opset's attributes and inputs, the
// data propagation of shape tensors (the values of Shape are its input's dims, a Reshape
// carries them) and the fallbacks outside strict mode.
#pragma once

#include <yobx/onnx/ops/common.hpp>
#include <yobx/shape/rules.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace yobx::shape {

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

}  // namespace yobx::shape

namespace yobx::onnx::ops {

/// Shape (start and end since opset 15): the input's dimensions as values.
inline void shape_of(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const std::int64_t start = ctx.opset() >= 15 ? ctx.attr_int("start", 0) : 0;
    const std::int64_t end = ctx.opset() >= 15 ? ctx.attr_int("end", std::numeric_limits<std::int64_t>::max())
                                               : std::numeric_limits<std::int64_t>::max();
    Shape v = shape::shape_values(in, start, end);
    const auto n = static_cast<std::int64_t>(v.size());
    ctx.set_output(0, elem::int64, {n}, std::vector<SymInt>(v.begin(), v.end()));
}

/// Size: the element count as a scalar value.
inline void size_of(NodeContext& ctx) {
    ctx.set_output(0, elem::int64, {}, std::vector<SymInt>{numel(ctx, ctx.shape(0))});
}

/// The input's values, of any rank, carried in their row-major order to an output of
/// the same element count (Reshape, Flatten, Squeeze, Unsqueeze): set_output_block
/// keeps them when the output's dims are constants.
inline std::optional<std::vector<SymInt>> carried_values(const NodeContext& ctx, std::size_t i) {
    const auto b = ctx.value_block(i);
    if (!b) return std::nullopt;
    return *b->values;
}

/// Writes output 0 as input 0 reshaped to `out`, its values carried.
inline void set_reshaped(NodeContext& ctx, Shape out) {
    ctx.set_output_block(0, TensorInfo::of(ctx.elem_type(0), std::move(out), carried_values(ctx, 0)));
}

/// Whether a Reshape entry `e` the ShapeEnv cannot prove >= 1 is the output's dim all
/// the same. An entry 0 copies the input's dim `d` (allowzero off): if the ShapeEnv
/// proves d <= K*e for a constant K >= 1, then e == 0 forces d == 0 (sizes are >= 0),
/// so the output is e in every case, and e >= 0. That is torch's window partition
/// after a pad to a multiple of 7: the entry `(h + Mod(6*h, 7))//7` with d its
/// `h + Mod(6*h, 7)`, where K = 7. K is read off one value of the symbols (the ratio
/// d / e there), then proven for all of them by the ShapeEnv.
inline bool entry_is_dim(NodeContext& ctx, const SymInt& e, const SymInt& d) {
    std::vector<std::string> names = e.free_symbols();
    for (auto& n : d.free_symbols()) names.push_back(std::move(n));
    SymbolValues at;
    for (const std::string& n : names) {
        // a large value inside the symbol's range, different for each symbol
        std::int64_t v = 1000003 + 7919 * static_cast<std::int64_t>(at.size());
        if (ctx.env().has_symbol(n)) v = std::clamp(v, ctx.env().range(n).lower, ctx.env().range(n).upper);
        at.emplace(n, v);
    }
    try {
        const std::int64_t ev = e.evaluate_with(at), dv = d.evaluate_with(at);
        if (ev <= 0 || dv < 0 || dv % ev != 0) return false;
        return ctx.env().statically_known_true(d <= e * std::max<std::int64_t>(dv / ev, 1));
    } catch (const error&) {
        return false;  // a value that overflows, a division by zero: no K
    }
}

/// One output dim of a Reshape left unsettled, the others known and at least 1: the
/// element count decides it, as it decides a -1 (onnxruntime refuses a Reshape that
/// changes the count). It is the target's entry when the ShapeEnv proves that entry
/// times the rest to be the count (a window partition's `[batch*nh*nw, 49, 96]` from
/// `[batch, nh, nw, 7, 7, 96]`), else the quotient when proven exact.
inline void element_count_fills(NodeContext& ctx, const Shape& in, const Shape& target, std::vector<std::optional<SymInt>>& o) {
    std::size_t unsettled = o.size();
    SymInt rest = 1;
    for (std::size_t i = 0; i < o.size(); ++i) {
        if (o[i]) rest = rest * *o[i];
        else if (unsettled != o.size()) return;  // two unsettled entries
        else unsettled = i;
    }
    if (unsettled == o.size()) return;
    try {
        rest = ctx.simplify(rest);
        if (!ctx.env().statically_known_true(rest >= 1)) return;
        const SymInt total = numel(ctx, in);
        if (unsettled < target.size() && ctx.env().statically_known_true(target[unsettled] * rest == total)) {
            o[unsettled] = target[unsettled];
            return;
        }
        const SymInt q = ctx.simplify(floordiv(total, rest));
        if (ctx.env().statically_known_true(q * rest == total)) o[unsettled] = q;
    } catch (const error&) {
        // a product that overflows: the entry stays unsettled
    }
}

/// Reshape (allowzero since opset 14); the target from data propagation. An entry
/// the ShapeEnv cannot settle, or a target nobody knows, gives fresh symbols.
inline void reshape(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
    Shape out;
    if (ctx.opset() < 5) {
        const auto s = ctx.attr_ints("shape");
        if (!s) ctx.fail("attribute 'shape' is required");
        out = shape::reshape(ctx.env(), in, Shape(s->begin(), s->end()), false, ctx.where());
    } else {
        const Shape& target = ctx.shape(1);
        if (target.size() != 1 || !target[0].maybe_constant()) throw UnknownInput{"the length of the target shape is not known"};
        const std::int64_t n = ctx.output_rank(*target[0].maybe_constant());
        if (const auto* v = ctx.values(1)) {
            const Shape t(**v);
            // each entry proven its dim, or decided by the element count; nullopt where neither
            const auto settled = [&] {
                std::vector<std::optional<SymInt>> o;
                for (std::size_t i = 0; i < t.size(); ++i) {
                    const auto c = t[i].maybe_constant();
                    if (c == 0 && !allowzero && i < in.size()) o.emplace_back(in[i]);
                    else if (c && *c > 0) o.emplace_back(t[i]);
                    else if (!c && ctx.env().statically_known_true(t[i] > 0)) o.emplace_back(t[i]);
                    else if (!c && !allowzero && i < in.size() && entry_is_dim(ctx, t[i], in[i])) o.emplace_back(t[i]);
                    else o.emplace_back();
                }
                element_count_fills(ctx, in, t, o);
                return o;
            };
            out = guarded(
                ctx,
                [&] {
                    try {
                        return shape::reshape(ctx.env(), in, t, allowzero, ctx.where());
                    } catch (const GuardOnDataDependentSymNode&) {
                        // a question the entries answer without it: strict mode too takes the proof
                        Shape proven;
                        for (auto& d : settled()) {
                            if (!d) throw;
                            proven.push_back(std::move(*d));
                        }
                        return proven;
                    }
                },
                [&] {
                    Shape o;
                    for (auto& d : settled()) o.push_back(d ? std::move(*d) : ctx.fresh("Reshape entry the ShapeEnv could not settle"));
                    return o;
                });
        } else if (n == 1) {
            out.push_back(numel(ctx, in));
        } else {
            for (std::int64_t i = 0; i < n; ++i) out.push_back(ctx.fresh("Reshape to a target whose values are not known"));
        }
    }
    set_reshaped(ctx, std::move(out));
}

/// Flatten(axis): [product of the dims before axis, product of the rest].
inline void flatten(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto r = static_cast<std::int64_t>(in.size());
    std::int64_t axis = ctx.attr_int("axis", 1);
    if (axis < -r || axis > r) ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    const Shape a(in.begin(), in.begin() + axis), b(in.begin() + axis, in.end());
    set_reshaped(ctx, {numel(ctx, a), numel(ctx, b)});
}

/// Squeeze (axes an input since opset 13); without axes every dimension proven 1.
inline void squeeze(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto axes = ints_from(ctx, "axes", 1, 13);
    Shape out = guarded(
        ctx, [&] { return shape::squeeze(ctx.env(), in, axes, ctx.where()); },
        [&]() -> Shape { throw UnknownInput{"which dimensions are 1 is not known"}; });
    set_reshaped(ctx, std::move(out));
}

/// Unsqueeze (axes an input since opset 13).
inline void unsqueeze(NodeContext& ctx) {
    const auto axes = ints_from(ctx, "axes", 1, 13);
    if (!axes) ctx.fail("axes are required");
    set_reshaped(ctx, shape::unsqueeze(ctx.shape(0), *axes));
}

/// Transpose(perm), reversed by default; values of any rank permuted.
inline void transpose(NodeContext& ctx) {
    const auto perm = ctx.attr_ints("perm");
    Shape out = shape::transpose(ctx.shape(0), perm);
    std::optional<std::vector<SymInt>> values;
    if (const auto b = ctx.value_block(0)) {
        const auto strides = block_strides(b->dims);
        const std::size_t r = b->dims.size();
        std::vector<std::vector<std::int64_t>> steps(r);
        for (std::size_t a = 0; a < r; ++a) {
            const auto from = static_cast<std::size_t>(perm ? (*perm)[a] : static_cast<std::int64_t>(r - 1 - a));
            for (std::int64_t i = 0; i < b->dims[from]; ++i) steps[a].push_back(i * strides[from]);
        }
        values = picked_values(*b->values, steps);
    }
    ctx.set_output_block(0, TensorInfo::of(ctx.elem_type(0), std::move(out), std::move(values)));
}

/// Expand to the values of input 1; unknown values give fresh symbols for the dimensions they decide.
inline void expand(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const Shape& ts = ctx.shape(1);
    if (ts.size() != 1 || !ts[0].maybe_constant()) throw UnknownInput{"the length of the target shape is not known"};
    const std::int64_t n = ctx.output_rank(*ts[0].maybe_constant());
    const auto unknown = [&] {
        Shape o = in;
        if (n > static_cast<std::int64_t>(o.size())) o.insert(o.begin(), static_cast<std::size_t>(n - static_cast<std::int64_t>(o.size())), SymInt(1));
        // a dimension of the input other than 1 stays (the target is 1 or equal there); the rest is unknown
        for (std::size_t i = o.size() - static_cast<std::size_t>(n); i < o.size(); ++i)
            if (!o[i].maybe_constant() || o[i].maybe_constant() == 1) o[i] = ctx.fresh("Expand to a shape whose values are not known");
        return o;
    };
    Shape out;
    if (const auto* v = ctx.values(1)) {
        const Shape target(**v);
        out = guarded(ctx, [&] { return shape::expand(ctx.env(), in, target, ctx.policy(), ctx.where()); }, unknown);
    } else {
        out = unknown();
    }
    std::optional<std::vector<SymInt>> values;
    if (const auto* v = ctx.values(0); v && out.size() <= 1) {
        const auto len = out.empty() ? std::optional<std::int64_t>(1) : out[0].maybe_constant();
        if (len && *len <= SymTensor::max_values && (((*v)->size() == 1) || static_cast<std::int64_t>((*v)->size()) == *len)) {
            values.emplace();
            for (std::int64_t i = 0; i < *len; ++i) values->push_back((**v)[(*v)->size() == 1 ? 0 : static_cast<std::size_t>(i)]);
        }
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out), std::move(values));
}

/// Tile(repeats): each dimension times its repeat.
inline void tile(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    Shape out = in;
    const auto* r = ctx.values(1);
    if (r != nullptr && (*r)->size() != in.size())
        ctx.fail("repeats has " + std::to_string((*r)->size()) + " values for rank " + std::to_string(in.size()));
    for (std::size_t i = 0; i < in.size(); ++i)
        out[i] = r ? ctx.simplify(in[i] * (**r)[i]) : ctx.fresh("Tile with repeats that are not known");
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// The reshaping family in the registry.
inline void register_reshaping(OpRegistry& r) {
    r.add("", "Shape", 1, shape_of);
    r.add("", "Size", 1, size_of);
    r.add("", "Reshape", 1, reshape);
    r.add("", "Flatten", 1, flatten);
    r.add("", "Squeeze", 1, squeeze);
    r.add("", "Unsqueeze", 1, unsqueeze);
    r.add("", "Transpose", 1, transpose);
    r.add("", "Expand", 8, expand);
    r.add("", "Tile", 6, tile);
}

}  // namespace yobx::onnx::ops
