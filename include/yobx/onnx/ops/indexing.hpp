// yobx/onnx/ops/indexing.hpp — operators that select or join parts of tensors: Concat, Split,
// Slice, Gather, GatherElements, GatherND, and the data-dependent NonZero, Compress, Unique.
//
// Concat's, Slice's and Gather's dims (`yobx::shape::concat`, `slice`, `gather`) sit beside
// their rules, which add the opset's attributes and inputs and the data propagation of
// shape tensors (a Slice of Shape's values, a Gather of one).
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

}  // namespace yobx::shape

namespace yobx::onnx::ops {

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

namespace detail {

/// A backward Slice whose end is exactly INT32_MAX or INT64_MAX: onnxruntime reads it as numpy's
/// None (through the first element), which yobx writes, and ONNX's reference clamps it to the
/// last index (nothing taken from there): each such axis noted with both readings.
inline void note_open_backward_ends(NodeContext& ctx, const Shape& in, const std::vector<SymInt>& starts, const std::vector<SymInt>& ends,
                                    const std::optional<std::vector<std::int64_t>>& axes, const std::vector<std::int64_t>& steps,
                                    const Shape& out) {
    if (steps.size() != ends.size()) return;
    for (std::size_t k = 0; k < ends.size(); ++k) {
        const auto e = ends[k].maybe_constant();
        if (steps[k] >= 0 || !e || !shape::detail::open_end(*e)) continue;
        const auto a = static_cast<std::size_t>(ctx.axis(axes && k < axes->size() ? (*axes)[k] : static_cast<std::int64_t>(k),
                                                          static_cast<std::int64_t>(in.size())));
        std::string reference = "not known";
        try {
            const Shape r = shape::slice(ctx.env(), in, {starts[k]}, {ctx.simplify(in[a] - 1)}, std::vector<std::int64_t>{static_cast<std::int64_t>(a)},
                                         std::vector<std::int64_t>{steps[k]}, ctx.where());
            reference = r[a].to_string();
        } catch (const GuardOnDataDependentSymNode&) {
        } catch (const yobx::error&) {
        }
        ctx.note_divergence(0, "axis " + std::to_string(a) + ", end " + std::to_string(*e) + " with step " + std::to_string(steps[k]) +
                                   ": onnxruntime reads the end as numpy's None (through the first element): " + out[a].to_string() +
                                   "; ONNX's reference clamps it to the last index: " + reference);
    }
}

}  // namespace detail

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
    if (starts && ends && steps) detail::note_open_backward_ends(ctx, in, *starts, *ends, axes, *steps, out);
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

/// The indexing family in the registry.
inline void register_indexing(OpRegistry& r) {
    r.add("", "Concat", 1, concat);
    r.add("", "Split", 1, split);
    r.add("", "Slice", 1, slice);
    r.add("", "Gather", 1, gather);
    r.add("", "GatherElements", 11, gather_elements);
    r.add("", "GatherND", 11, gather_nd);
    r.add("", "NonZero", 9, nonzero);
    r.add("", "Compress", 9, compress);
    r.add("", "Unique", 11, unique);
}

}  // namespace yobx::onnx::ops
