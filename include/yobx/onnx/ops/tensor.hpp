// yobx/onnx/ops/tensor.hpp — operators that move, cut and rebuild tensors, and shape computations.
//
// Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split,
// Slice, Gather*, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Resize,
// Upsample, Col2Im, CenterCropPad, NonZero, Compress, Unique. The ops the proposal names for partial
// data propagation compute the values of 1-D shape tensors, symbolically, so
// that a Reshape after Shape -> Gather -> Concat knows its target.
#pragma once

#include <yobx/onnx/ops/common.hpp>
#include <yobx/onnx/ops/rounding.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

/// The row-major strides of a block of `dims`.
inline std::vector<std::int64_t> block_strides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> strides(dims.size());
    std::int64_t stride = 1;
    for (std::size_t a = dims.size(); a-- > 0;) {
        strides[a] = stride;
        stride *= dims[a];
    }
    return strides;
}

/// The values a block's elements become when output axis a walks the input offsets
/// `steps[a]` (a slice's indices, a permuted axis, each times its input stride): the
/// output in row-major order, each element the sum of one step of each axis.
inline std::vector<SymInt> picked_values(const std::vector<SymInt>& values, const std::vector<std::vector<std::int64_t>>& steps) {
    std::vector<std::int64_t> offsets{0};
    for (const auto& axis : steps) {
        std::vector<std::int64_t> next;
        next.reserve(offsets.size() * axis.size());
        for (std::int64_t o : offsets)
            for (std::int64_t step : axis) next.push_back(o + step);
        offsets = std::move(next);
    }
    std::vector<SymInt> out;
    out.reserve(offsets.size());
    for (std::int64_t o : offsets) out.push_back(values[static_cast<std::size_t>(o)]);
    return out;
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

/// Concat(axis); values concatenated when every input has them.
inline void concat(NodeContext& ctx) {
    const std::vector<Shape> shapes = present_input_shapes(ctx);
    if (shapes.empty()) ctx.fail("no inputs");
    const std::int64_t axis = ctx.attr_int("axis", ctx.opset() < 4 ? 1 : std::numeric_limits<std::int64_t>::min());
    if (axis == std::numeric_limits<std::int64_t>::min()) ctx.fail("attribute 'axis' is required");
    Shape out = guarded(
        ctx, [&] { return shape::concat(ctx.env(), shapes, axis, ctx.where()); },
        [&] {
            Shape o = shapes[0];
            const std::int64_t ax = ctx.axis(axis, static_cast<std::int64_t>(o.size()));
            for (std::size_t k = 1; k < shapes.size(); ++k) o[static_cast<std::size_t>(ax)] += shapes[k][static_cast<std::size_t>(ax)];
            o[static_cast<std::size_t>(ax)] = ctx.simplify(o[static_cast<std::size_t>(ax)]);
            return o;
        });
    std::optional<std::vector<SymInt>> values;
    if (out.size() == 1) {
        values.emplace();
        for (std::size_t i = 0; i < ctx.input_count() && values; ++i) {
            if (!ctx.has_input(i)) continue;
            if (const auto* v = ctx.values(i)) values->insert(values->end(), (*v)->begin(), (*v)->end());
            else values.reset();
        }
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out), std::move(values));
}

/// Split: sizes from `split` (an attribute before opset 13, an input since), or
/// `num_outputs` (opset 18: chunks of ceil(d / n), the last one smaller), or equal parts.
inline void split(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const std::int64_t ax = ctx.axis(ctx.attr_int("axis", 0), static_cast<std::int64_t>(in.size()));
    const SymInt d = in[static_cast<std::size_t>(ax)];
    const auto sizes = ints_from(ctx, "split", 1, 13);
    const std::size_t n = ctx.output_count();
    std::vector<SymInt> parts;
    if (sizes) {
        if (sizes->size() != n)
            ctx.fail("split has " + std::to_string(sizes->size()) + " entries for " + std::to_string(n) + " outputs");
        std::int64_t total = 0;
        for (auto s : *sizes) {
            if (s < 0 || __builtin_add_overflow(total, s, &total)) ctx.fail("split sizes must be >= 0, got " + shape::detail::format_ints(*sizes));
            parts.push_back(s);
        }
        if (const auto c = d.maybe_constant(); c && *c != total)
            ctx.fail("split sizes " + shape::detail::format_ints(*sizes) + " add up to " + std::to_string(total) + ", not the dimension " + std::to_string(*c));
    } else if (ctx.opset() >= 18 && ctx.attribute("num_outputs")) {
        const std::int64_t k = ctx.attr_int("num_outputs", 1);
        if (k < 1 || static_cast<std::size_t>(k) != n) ctx.fail("num_outputs is " + std::to_string(k) + " for " + std::to_string(n) + " outputs");
        const SymInt chunk = ctx.simplify(ceil_div(d, k));
        for (std::size_t i = 0; i + 1 < n; ++i) parts.push_back(chunk);
        parts.push_back(ctx.simplify(d - chunk * static_cast<std::int64_t>(n - 1)));
    } else {
        for (std::size_t i = 0; i < n; ++i) parts.push_back(ctx.simplify(floordiv(d, static_cast<std::int64_t>(n))));
    }
    const auto* v = ctx.values(0);
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Shape out = in;
        out[static_cast<std::size_t>(ax)] = parts[i];
        std::optional<std::vector<SymInt>> values;
        const auto len = parts[i].maybe_constant();
        // a negative part (num_outputs beyond the dimension) is refused by set_output
        if (v && in.size() == 1 && len && *len >= 0 && offset >= 0 && *len <= static_cast<std::int64_t>((*v)->size()) - offset)
            values = std::vector<SymInt>((*v)->begin() + offset, (*v)->begin() + offset + *len);
        offset = len ? offset + *len : -1;
        ctx.set_output(i, ctx.elem_type(0), std::move(out), std::move(values));
    }
}

/// ONNX's Slice of a range of n elements: the indices taken, in order. A negative
/// index counts from the end; then a positive step clamps start and end to [0, n],
/// a negative step clamps the start to [0, n - 1] and the end to [-1, n - 1]; an end
/// of exactly INT32_MAX or INT64_MAX reaches the last element, or the first for a
/// negative step (onnxruntime's reading, shape::slice's).
inline std::vector<std::int64_t> slice_indices(std::int64_t n, std::int64_t start, std::int64_t end, std::int64_t step) {
    // Min(Max(v, lo), hi): an empty range clamps a backward start to -1, nothing taken
    const auto norm = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v < 0 ? v + n : v, lo), hi); };
    std::vector<std::int64_t> out;
    // the distances stay within [0, n + 1], so `distance - step` cannot overflow even for huge steps
    if (step > 0) {
        for (std::int64_t i = norm(start, 0, n), e = norm(end, 0, n); i < e; i += step) {
            out.push_back(i);
            if ((e - i) - step <= 0) break;
        }
    } else {
        for (std::int64_t i = norm(start, 0, n - 1), e = shape::detail::open_end(end) ? -1 : norm(end, -1, n - 1); i > e; i += step) {
            out.push_back(i);
            if ((i - e) + step <= 0) break;
        }
    }
    return out;
}

/// Slice: starts, ends, axes, steps as attributes before opset 10, inputs since.
/// Starts or ends nobody knows give a fresh symbol for each sliced dimension.
inline void slice(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    std::optional<std::vector<SymInt>> starts, ends;
    std::optional<std::vector<std::int64_t>> axes, steps;
    if (ctx.opset() < 10) {
        const auto s = ctx.attr_ints("starts"), e = ctx.attr_ints("ends");
        if (!s || !e) ctx.fail("attributes 'starts' and 'ends' are required");
        starts.emplace(s->begin(), s->end());
        ends.emplace(e->begin(), e->end());
        axes = ctx.attr_ints("axes");
    } else {
        if (const auto* v = ctx.values(1)) starts = **v;
        if (const auto* v = ctx.values(2)) ends = **v;
        axes = ints_from(ctx, "axes", 3, 10);
        steps = ints_from(ctx, "steps", 4, 10);
    }
    const auto count = [&]() -> std::int64_t {
        if (starts) return static_cast<std::int64_t>(starts->size());
        const Shape& s = ctx.shape(1);
        if (s.size() != 1 || !s[0].maybe_constant()) throw UnknownInput{"the number of sliced axes is not known"};
        return *s[0].maybe_constant();
    }();
    const auto axis_of = [&](std::int64_t k) { return ctx.axis(axes ? (*axes)[static_cast<std::size_t>(k)] : k, static_cast<std::int64_t>(in.size())); };
    const auto unknown_bounds = [&] {
        Shape o = in;
        for (std::int64_t k = 0; k < count; ++k) o[static_cast<std::size_t>(axis_of(k))] = ctx.fresh("Slice with bounds that are not known, or that the ShapeEnv could not place");
        return o;
    };
    if (axes && static_cast<std::int64_t>(axes->size()) != count) ctx.fail("axes and starts differ in length");
    Shape out = starts && ends ? guarded(ctx, [&] { return shape::slice(ctx.env(), in, *starts, *ends, axes, steps, ctx.where()); }, unknown_bounds)
                               : unknown_bounds();
    // values of any rank: each axis walks its slice's indices (every index where not sliced)
    std::optional<std::vector<SymInt>> values;
    const auto b = ctx.value_block(0);
    if (b && starts && ends && static_cast<std::int64_t>(ends->size()) == count && (!steps || static_cast<std::int64_t>(steps->size()) == count)) {
        const auto strides = block_strides(b->dims);
        std::vector<std::vector<std::int64_t>> indices(b->dims.size());
        for (std::size_t a = 0; a < b->dims.size(); ++a)
            for (std::int64_t i = 0; i < b->dims[a]; ++i) indices[a].push_back(i);
        bool known = true;
        for (std::int64_t k = 0; k < count && known; ++k) {
            const auto s = (*starts)[static_cast<std::size_t>(k)].maybe_constant(), e = (*ends)[static_cast<std::size_t>(k)].maybe_constant();
            const std::int64_t step = steps ? (*steps)[static_cast<std::size_t>(k)] : 1;
            known = s && e && step != 0;
            if (known) {
                const auto a = static_cast<std::size_t>(axis_of(k));
                indices[a] = slice_indices(b->dims[a], *s, *e, step);
            }
        }
        if (known) {
            for (std::size_t a = 0; a < indices.size(); ++a)
                for (auto& i : indices[a]) i *= strides[a];
            values = picked_values(*b->values, indices);
        }
    }
    ctx.set_output_block(0, TensorInfo::of(ctx.elem_type(0), std::move(out), std::move(values)));
}

/// Gather(axis); the values of a 1-D shape tensor are gathered at constant indices. A constant
/// index past a constant dimension is an error (every runtime refuses it).
inline void gather(NodeContext& ctx) {
    const Shape& data = ctx.shape(0);
    const std::int64_t ax = ctx.axis(ctx.attr_int("axis", 0), static_cast<std::int64_t>(data.size()));
    Shape out = shape::gather(data, ctx.shape(1), ax);
    const auto idx = ctx.constant_values(1);
    if (const auto dim = data[static_cast<std::size_t>(ax)].maybe_constant(); idx && dim)
        for (auto i : *idx)
            if (i < -*dim || i >= *dim)
                ctx.fail("index " + std::to_string(i) + " is out of range for axis " + std::to_string(ax) + " of size " +
                         std::to_string(*dim) + " (data shape " + format_shape(data) + ")");
    std::optional<std::vector<SymInt>> values;
    const auto* v = ctx.values(0);
    if (v && idx && data.size() == 1 && out.size() <= 1) {
        const auto n = static_cast<std::int64_t>((*v)->size());
        values.emplace();
        for (auto i : *idx) values->push_back((**v)[static_cast<std::size_t>(i < 0 ? i + n : i)]);
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out), std::move(values));
}

/// GatherElements: the indices' shape.
inline void gather_elements(NodeContext& ctx) { ctx.set_output(0, ctx.elem_type(0), ctx.shape(1)); }

/// GatherND(batch_dims): indices[:-1] followed by data[batch_dims + indices[-1]:].
inline void gather_nd(NodeContext& ctx) {
    const Shape &data = ctx.shape(0), &idx = ctx.shape(1);
    const std::int64_t b = ctx.attr_int("batch_dims", 0);
    if (idx.empty()) ctx.fail("indices must have rank >= 1");
    const auto last = idx.back().maybe_constant();
    if (!last) throw UnknownInput{"the last dimension of the indices is not known"};
    if (*last < 0) ctx.fail("the last dimension of the indices must be >= 0, got " + std::to_string(*last));
    const auto rank = static_cast<std::int64_t>(data.size());
    if (b < 0 || b > rank || *last > rank - b)  // b + *last > rank, without overflow
        ctx.fail("batch_dims " + std::to_string(b) + " and index length " + std::to_string(*last) + " exceed the data's rank " +
                 std::to_string(data.size()));
    Shape out(idx.begin(), idx.end() - 1);
    out.insert(out.end(), data.begin() + b + *last, data.end());
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
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

/// Pad: pads an attribute before opset 11, an input since; axes (opset 18) an input.
inline void pad(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto r = static_cast<std::int64_t>(in.size());
    std::optional<std::vector<SymInt>> pads;
    if (ctx.opset() < 11) {
        const auto p = ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads");
        if (!p) ctx.fail("attribute 'pads' is required");
        pads.emplace(p->begin(), p->end());
    } else if (const auto* v = ctx.values(1)) {
        pads = **v;
    }
    std::vector<std::int64_t> axes;
    if (auto a = ctx.opset() >= 18 ? ints_from(ctx, "axes", 3, 18) : std::nullopt) {
        for (auto x : *a) axes.push_back(ctx.axis(x, r));
    } else {
        for (std::int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    Shape out = in;
    if (!pads) {
        for (auto a : axes) out[static_cast<std::size_t>(a)] = ctx.fresh("Pad with pads that are not known");
    } else {
        if (pads->size() != 2 * axes.size())
            ctx.fail("pads has " + std::to_string(pads->size()) + " values for " + std::to_string(axes.size()) + " axes");
        for (std::size_t k = 0; k < axes.size(); ++k) {
            auto& d = out[static_cast<std::size_t>(axes[k])];
            d = ctx.simplify(d + (*pads)[k] + (*pads)[k + axes.size()]);
        }
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// DepthToSpace(blocksize): [N, C/(b*b), H*b, W*b].
inline void depth_to_space(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.size() != 4) ctx.fail("input must have rank 4, got " + format_shape(in));
    const std::int64_t b = ctx.attr_int("blocksize", 0);
    if (b <= 0) ctx.fail("blocksize must be positive");
    ctx.set_output(0, ctx.elem_type(0),
                   {in[0], ctx.simplify(floordiv(in[1], SymInt(b) * b)), ctx.simplify(in[2] * b), ctx.simplify(in[3] * b)});
}
/// SpaceToDepth(blocksize): [N, C*b*b, H/b, W/b].
inline void space_to_depth(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.size() != 4) ctx.fail("input must have rank 4, got " + format_shape(in));
    const std::int64_t b = ctx.attr_int("blocksize", 0);
    if (b <= 0) ctx.fail("blocksize must be positive");
    ctx.set_output(0, ctx.elem_type(0),
                   {in[0], ctx.simplify(in[1] * (SymInt(b) * b)), ctx.simplify(floordiv(in[2], b)), ctx.simplify(floordiv(in[3], b))});
}

namespace detail {

/// floor(d * scale) as the runtimes compute it, in float32 (rounding.hpp): exact on a constant
/// d, floor(d*p/q) on a symbolic one, a fresh symbol when no fraction does.
inline SymInt scaled(NodeContext& ctx, const SymInt& d, double scale) {
    const auto f = static_cast<float>(scale);
    if (!std::isfinite(f) || f < 0) ctx.fail("scale " + std::to_string(scale) + " is not a finite number >= 0");
    if (const auto c = d.maybe_constant()) {
        const double r = float_rounded(*c, f, false, Rounding::floor);
        if (!fits_int64(r)) ctx.fail("scale " + std::to_string(scale) + " of " + std::to_string(*c) + " overflows");
        return static_cast<std::int64_t>(r);
    }
    if (auto v = rounded_as(ctx, d, f, false, Rounding::floor, true)) return std::move(*v);
    return ctx.fresh("Resize by a scale whose float32 product yobx cannot write as a fraction");
}

}  // namespace detail

/// Resize (opset 10: scales; 11: roi, scales, sizes; 18: axes, keep_aspect_ratio_policy) and Upsample.
inline void resize(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto r = static_cast<std::int64_t>(in.size());
    std::optional<std::vector<double>> scales;
    const std::optional<std::vector<SymInt>>* sizes = nullptr;
    if (ctx.op_type() == "Upsample" && ctx.opset() < 9) {
        scales = ctx.attr_floats("scales");
    } else if (ctx.opset() < 11) {
        scales = ctx.real_values(1);
    } else {
        if (ctx.has_input(3)) sizes = ctx.values(3);
        if (ctx.has_input(2) && !(ctx.input(2)->shape && !ctx.input(2)->shape->empty() && ctx.input(2)->shape->at(0).maybe_constant() == 0))
            scales = ctx.real_values(2);
        if (scales && scales->empty()) scales.reset();
    }
    std::vector<std::int64_t> axes;
    if (auto a = ctx.opset() >= 18 ? ctx.attr_ints("axes") : std::nullopt) {
        for (auto x : *a) axes.push_back(ctx.axis(x, r));
    } else {
        for (std::int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    Shape out = in;
    const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (sizes && (*sizes)->size() != axes.size())
        ctx.fail("sizes has " + std::to_string((*sizes)->size()) + " values for " + std::to_string(axes.size()) + " axes");
    if (sizes && policy != "stretch") {
        // one scale for every axis: the smallest (not_larger) or largest (not_smaller) ratio
        std::optional<double> s;
        bool constant = true;
        for (std::size_t k = 0; k < axes.size() && constant; ++k) {
            const auto want = (**sizes)[k].maybe_constant();
            const auto have = in[static_cast<std::size_t>(axes[k])].maybe_constant();
            constant = want && have && *have != 0;
            if (!constant) break;
            const double ratio = static_cast<double>(*want) / static_cast<double>(*have);
            s = !s ? ratio : policy == "not_larger" ? std::min(*s, ratio) : std::max(*s, ratio);
        }
        for (auto a : axes) {
            auto& d = out[static_cast<std::size_t>(a)];
            if (!constant) {  // a rounded ratio of symbolic sizes: the resized axes are fresh, the others kept
                d = ctx.fresh("Resize with keep_aspect_ratio_policy on sizes or dims that are not constant");
                continue;
            }
            const double r = std::round(*s * static_cast<double>(*d.maybe_constant()));
            if (!(r >= 0 && fits_int64(r)))  // a negative size, or one past int64 (the cast would be undefined)
                ctx.fail("keep_aspect_ratio_policy scales " + d.to_string() + " to " + std::to_string(r) + ", not a dimension");
            d = static_cast<std::int64_t>(r);
        }
    } else if (sizes) {
        for (std::size_t k = 0; k < axes.size(); ++k) out[static_cast<std::size_t>(axes[k])] = (**sizes)[k];
    } else if (scales) {
        if (scales->size() != axes.size()) ctx.fail("scales has " + std::to_string(scales->size()) + " values for " + std::to_string(axes.size()) + " axes");
        for (std::size_t k = 0; k < axes.size(); ++k) {
            auto& d = out[static_cast<std::size_t>(axes[k])];
            d = detail::scaled(ctx, d, (*scales)[k]);
        }
    } else {
        for (auto a : axes) out[static_cast<std::size_t>(a)] = ctx.fresh("Resize with scales and sizes that are not known");
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// Col2Im (opset 18): [N, C*prod(block_shape), L] gives [N, C, image_shape...].
inline void col2im(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.size() != 3) ctx.fail("input must be [N, C*prod(block_shape), L], got " + format_shape(in));
    Shape out{in[0]};
    if (const auto block = ctx.constant_values(2)) {
        std::int64_t blocks = 1;
        for (const auto b : *block) {
            if (b <= 0 || blocks > (std::int64_t{1} << 40) / b) ctx.fail("block_shape " + shape::detail::format_ints(*block) + " is not a block");
            blocks *= b;
        }
        out.push_back(ctx.simplify(floordiv(in[1], blocks)));
    } else {
        out.push_back(ctx.fresh("Col2Im with a block_shape that is not known"));
    }
    if (const auto* image = ctx.values(1)) {
        out.insert(out.end(), (*image)->begin(), (*image)->end());
    } else {
        const Shape& n = ctx.shape(1);
        const auto count = n.size() == 1 ? n[0].maybe_constant() : std::nullopt;
        if (!count || *count < 0 || *count > 64) throw UnknownInput{"the length of image_shape is not known"};
        for (std::int64_t k = 0; k < *count; ++k) out.push_back(ctx.fresh("Col2Im with an image_shape that is not known"));
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// CenterCropPad (opset 18): each of `axes` (default all) cropped or padded to `shape`'s value.
inline void center_crop_pad(NodeContext& ctx) {
    Shape out = ctx.shape(0);
    const auto r = static_cast<std::int64_t>(out.size());
    std::vector<std::int64_t> axes;
    if (auto a = ctx.attr_ints("axes")) {
        for (auto x : *a) axes.push_back(ctx.axis(x, r));
    } else {
        for (std::int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    const auto* shape = ctx.values(1);
    if (shape && (*shape)->size() != axes.size())
        ctx.fail("shape has " + std::to_string((*shape)->size()) + " values for " + std::to_string(axes.size()) + " axes");
    for (std::size_t k = 0; k < axes.size(); ++k)
        out[static_cast<std::size_t>(axes[k])] = shape ? (**shape)[k] : ctx.fresh("CenterCropPad to a shape that is not known");
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// NonZero: [rank, u] with u the data-dependent count.
inline void nonzero(NodeContext& ctx) {
    ctx.set_output(0, elem::int64, {ctx.rank(0), ctx.fresh("NonZero: the count of non-zero elements depends on the data")});
}

/// Compress(axis): the axis (or the flattened input) becomes data-dependent.
inline void compress(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const SymInt u = ctx.fresh("Compress: the count of selected elements depends on the data");
    if (!ctx.attribute("axis")) return ctx.set_output(0, ctx.elem_type(0), {u});
    Shape out = in;
    out[static_cast<std::size_t>(ctx.axis(ctx.attr_int("axis", 0), static_cast<std::int64_t>(in.size())))] = u;
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// Unique(axis): Y, indices, inverse_indices, counts.
inline void unique(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const SymInt u = ctx.fresh("Unique: the count of distinct values depends on the data");
    if (!ctx.attribute("axis")) {
        ctx.set_output(0, ctx.elem_type(0), {u});
        ctx.set_output(2, elem::int64, {numel(ctx, in)});
    } else {
        const auto ax = static_cast<std::size_t>(ctx.axis(ctx.attr_int("axis", 0), static_cast<std::int64_t>(in.size())));
        Shape out = in;
        out[ax] = u;
        ctx.set_output(0, ctx.elem_type(0), std::move(out));
        ctx.set_output(2, elem::int64, {in[ax]});
    }
    ctx.set_output(1, elem::int64, {u});
    ctx.set_output(3, elem::int64, {u});
}

/// The tensor family in the registry.
inline void register_tensor(OpRegistry& r) {
    r.add("", "Shape", 1, shape_of);
    r.add("", "Size", 1, size_of);
    r.add("", "Reshape", 1, reshape);
    r.add("", "Flatten", 1, flatten);
    r.add("", "Squeeze", 1, squeeze);
    r.add("", "Unsqueeze", 1, unsqueeze);
    r.add("", "Transpose", 1, transpose);
    r.add("", "Concat", 1, concat);
    r.add("", "Split", 1, split);
    r.add("", "Slice", 1, slice);
    r.add("", "Gather", 1, gather);
    r.add("", "GatherElements", 11, gather_elements);
    r.add("", "GatherND", 11, gather_nd);
    r.add("", "Expand", 8, expand);
    r.add("", "Tile", 6, tile);
    r.add("", "Pad", 1, pad);
    r.add("", "DepthToSpace", 1, depth_to_space);
    r.add("", "SpaceToDepth", 1, space_to_depth);
    r.add("", "Resize", 10, resize);
    r.add("", "Col2Im", 18, col2im);
    r.add("", "CenterCropPad", 18, center_crop_pad);
    r.add("", "Upsample", 7, resize);
    r.add("", "NonZero", 9, nonzero);
    r.add("", "Compress", 9, compress);
    r.add("", "Unique", 11, unique);
}

}  // namespace yobx::onnx::ops
