// yobx/onnx/ops/nn.hpp — convolutions, pooling, normalizations, recurrent layers, detection ops.
//
// Convolution and pooling sizes follow ONNX's formulas (pads, strides,
// dilations, auto_pad, ceil_mode) with symbolic inputs: a 3x3 convolution of
// stride 2 and pad 1 on `height` gives `(height - 1)//2 + 1`, which the
// canonical form writes as it is, where onnxruntime's tool writes nested floors.
#pragma once

#include <yobx/onnx/ops/common.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace yobx::onnx::ops {

namespace detail {

/// The ints attribute `name` with `len` values, `fallback` each when it is absent or empty.
inline std::vector<std::int64_t> attr_list(NodeContext& ctx, std::string_view name, std::int64_t fallback, std::size_t len) {
    auto v = ctx.attr_ints(name).value_or(std::vector<std::int64_t>(len, fallback));
    if (v.empty()) v.assign(len, fallback);
    if (v.size() != len) ctx.fail("attribute '" + std::string(name) + "' has " + std::to_string(v.size()) + " values, expected " + std::to_string(len));
    return v;
}

/// dilation*(kernel - 1) + 1, the extent of a dilated kernel; a node error when it does
/// not fit in int64 (the attributes are the model's, any int64).
inline std::int64_t dilated_extent(NodeContext& ctx, std::int64_t kernel, std::int64_t dilation) {
    std::int64_t e = 0;
    if (__builtin_sub_overflow(kernel, 1, &e) || __builtin_mul_overflow(e, dilation, &e) || __builtin_add_overflow(e, 1, &e))
        ctx.fail("the extent of a kernel of " + std::to_string(kernel) + " with dilation " + std::to_string(dilation) + " does not fit in int64");
    return e;
}

/// Spatial output sizes of a convolution or pooling window over `in` (the
/// spatial dims), ONNX's and onnxruntime's formula, ceil_mode's last-window rule included.
inline Shape window_output(NodeContext& ctx, const Shape& in, const std::vector<std::int64_t>& kernel, bool pooling) {
    const std::size_t n = in.size();
    if (kernel.size() != n) ctx.fail("kernel has " + std::to_string(kernel.size()) + " dims for " + std::to_string(n) + " spatial dims");
    const auto strides = attr_list(ctx, "strides", 1, n), dilations = attr_list(ctx, "dilations", 1, n), pads = attr_list(ctx, "pads", 0, 2 * n);
    const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
    const bool ceil_mode = pooling && ctx.attr_int("ceil_mode", 0) != 0;
    Shape out;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t s = strides[i];
        if (s <= 0) ctx.fail("strides must be positive");
        const std::int64_t ek = dilated_extent(ctx, kernel[i], dilations[i]);
        const SymInt& d = in[i];
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            out.push_back(ctx.simplify(ceil_div(d, s)));
        } else if (auto_pad == "VALID") {
            out.push_back(ctx.simplify(floordiv(d - ek, s) + 1));
        } else if (auto_pad == "NOTSET") {
            const SymInt total = d + pads[i] + pads[i + n] - ek;
            SymInt o = ctx.simplify((ceil_mode ? ceil_div(total, s) : floordiv(total, s)) + 1);
            // a window longer than the padded input at every size: onnxruntime's C++ division truncates,
            // ONNX's floors (at a few small sizes only, as (h + 1)//2 - 2 at h <= 2: the Limits say so)
            if (pooling && !ceil_mode && s > 1) {
                const SymInt t = ctx.simplify(total);
                const auto c = t.maybe_constant();
                if (c && *c < 0 && *c % s != 0)
                    ctx.note_divergence(0, "axis " + std::to_string(i + 2) + ", where the padded input (" +
                                               ctx.simplify(d + pads[i] + pads[i + n]).to_string() + ") is shorter than the window (" +
                                               std::to_string(ek) + "): onnxruntime's division truncates, " + std::to_string(s) +
                                               "-strided windows (" + t.to_string() + ")/" + std::to_string(s) +
                                               " + 1 rounded towards zero; ONNX's formula floors it: " + o.to_string());
            }
            // ceil_mode: a last window that starts in the end padding is dropped
            // pads_end + s > ek, as pads_end > ek - s (s > 0: ek - s only overflows below every pad)
            std::int64_t room = 0;
            if (ceil_mode && (__builtin_sub_overflow(ek, s, &room) || pads[i + n] > room)) {
                const SymBool starts_in_pad = (o - 1) * s >= d + pads[i];
                if (ctx.env().statically_known_true(starts_in_pad)) o = ctx.simplify(o - 1);
                // for some sizes only, as the ShapeEnv sees it: with o - 1 = ceil(total / s) and
                // c = ceil((d + pads_begin) / s), the window starts there exactly when o - 1 >= c, and
                // total = d + pads_begin - (ek - pads_end). pads_end > ek: o - 1 >= c for every size,
                // o - 1 windows; else 0 <= ek - pads_end < s puts o - 1 at c - 1 or c: c windows.
                else if (!ctx.env().statically_known_true(!starts_in_pad))
                    o = ctx.simplify(pads[i + n] > ek ? o - 1 : ceil_div(d + pads[i], s));
            }
            out.push_back(o);
        } else {
            ctx.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
        }
    }
    return out;
}

/// The kernel's spatial sizes: attribute kernel_shape, else the weight's dims 2..
inline std::vector<std::int64_t> kernel_of(NodeContext& ctx, std::optional<std::size_t> weight) {
    if (auto k = ctx.attr_ints("kernel_shape")) return *k;
    if (!weight) ctx.fail("attribute 'kernel_shape' is required");
    const Shape& w = ctx.shape(*weight);
    std::vector<std::int64_t> k;
    for (std::size_t i = 2; i < w.size(); ++i) {
        const auto c = w[i].maybe_constant();
        if (!c) throw UnknownInput{"the kernel's size is not known"};
        k.push_back(*c);
    }
    return k;
}

inline const Shape& batch_input(NodeContext& ctx, std::size_t i) {
    const Shape& x = ctx.shape(i);
    if (x.size() < 3) ctx.fail("input must have rank >= 3, got " + format_shape(x));
    return x;
}

}  // namespace detail

/// Conv, ConvInteger, QLinearConv: [N, M, spatial...] with M the weight's first dim.
/// Each spatial output is at least 1 wherever the model runs: onnxruntime refuses a
/// convolution whose output would be empty ("Invalid input shape"), so that is a fact
/// of the ShapeEnv from here on (a 4x4 patch embedding of stride 4 gives `height//4`
/// and the fact `height >= 4`, which later windows and pads rely on).
inline void conv_at(NodeContext& ctx, std::size_t x, std::size_t w, int out_type) {
    const Shape& in = detail::batch_input(ctx, x);
    const Shape& weight = ctx.shape(w);
    if (weight.size() != in.size()) ctx.fail("the weight must have the input's rank, got " + format_shape(weight) + " for " + format_shape(in));
    Shape out{in[0], weight[0]};
    const Shape spatial = detail::window_output(ctx, Shape(in.begin() + 2, in.end()), detail::kernel_of(ctx, w), false);
    for (const SymInt& d : spatial) {
        if (d.maybe_constant() || ctx.env().statically_known_true(d >= 1)) continue;
        try {
            ctx.env().check(d >= 1, "a convolution's output is not empty");
        } catch (const error&) {
            // the hints make it empty: the runtime refuses the call, nothing to learn
        }
    }
    out.insert(out.end(), spatial.begin(), spatial.end());
    ctx.set_output(0, out_type, std::move(out));
}
inline void conv(NodeContext& ctx) { conv_at(ctx, 0, 1, ctx.elem_type(0)); }
inline void conv_integer(NodeContext& ctx) { conv_at(ctx, 0, 1, elem::int32); }
inline void qlinear_conv(NodeContext& ctx) { conv_at(ctx, 0, 3, ctx.has_input(7) ? ctx.elem_type(7) : elem::uint8); }

/// ConvTranspose: output_shape when given, else stride*(in-1) + output_padding + dilated kernel - pads.
inline void conv_transpose(NodeContext& ctx) {
    const Shape& in = detail::batch_input(ctx, 0);
    const Shape& w = ctx.shape(1);
    if (w.size() != in.size()) ctx.fail("the weight must have the input's rank, got " + format_shape(w) + " for " + format_shape(in));
    const std::int64_t group = ctx.attr_int("group", 1);
    Shape out{in[0], ctx.simplify(w[1] * group)};
    const std::size_t n = in.size() - 2;
    if (auto os = ctx.attr_ints("output_shape")) {
        if (os->size() < n) ctx.fail("output_shape has fewer values than spatial dims");
        for (std::size_t i = os->size() - n; i < os->size(); ++i) out.push_back((*os)[i]);
        return ctx.set_output(0, ctx.elem_type(0), std::move(out));
    }
    const auto kernel = detail::kernel_of(ctx, 1);
    if (kernel.size() != n) ctx.fail("kernel has " + std::to_string(kernel.size()) + " dims for " + std::to_string(n) + " spatial dims");
    const auto strides = detail::attr_list(ctx, "strides", 1, n), dilations = detail::attr_list(ctx, "dilations", 1, n),
               pads = detail::attr_list(ctx, "pads", 0, 2 * n), output_padding = detail::attr_list(ctx, "output_padding", 0, n);
    const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
    for (std::size_t i = 0; i < n; ++i) {
        const SymInt& d = in[i + 2];
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            out.push_back(ctx.simplify(d * strides[i]));
            continue;
        }
        SymInt o = strides[i] * (d - 1) + output_padding[i] + detail::dilated_extent(ctx, kernel[i], dilations[i]);
        if (auto_pad != "VALID") o = o - pads[i] - pads[i + n];  // SymInt's checked arithmetic, pads of any int64
        out.push_back(ctx.simplify(o));
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// MaxPool (with its optional Indices), AveragePool, LpPool: [N, C, spatial...].
inline void pool(NodeContext& ctx) {
    const Shape& in = detail::batch_input(ctx, 0);
    Shape out{in[0], in[1]};
    const Shape spatial = detail::window_output(ctx, Shape(in.begin() + 2, in.end()), detail::kernel_of(ctx, std::nullopt), true);
    out.insert(out.end(), spatial.begin(), spatial.end());
    ctx.set_output(1, elem::int64, out);
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: [N, C, 1, ...].
inline void global_pool(NodeContext& ctx) {
    const Shape& in = detail::batch_input(ctx, 0);
    Shape out{in[0], in[1]};
    out.resize(in.size(), SymInt(1));
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// MaxUnpool: output_shape's values when given, else (in-1)*stride + kernel - pads.
inline void max_unpool(NodeContext& ctx) {
    const Shape& in = detail::batch_input(ctx, 0);
    if (ctx.has_input(2)) {
        if (const auto* v = ctx.values(2)) return ctx.set_output(0, ctx.elem_type(0), Shape(**v));
        throw UnknownInput{"the values of output_shape are not known"};
    }
    const auto kernel = detail::kernel_of(ctx, std::nullopt);
    const std::size_t n = in.size() - 2;
    auto strides = ctx.attr_ints("strides").value_or(std::vector<std::int64_t>(n, 1));
    auto pads = ctx.attr_ints("pads").value_or(std::vector<std::int64_t>(2 * n, 0));
    if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n) ctx.fail("kernel_shape, strides and pads do not match the rank");
    Shape out{in[0], in[1]};
    for (std::size_t i = 0; i < n; ++i) out.push_back(ctx.simplify((in[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + n]));
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// BatchNormalization: Y as X; the training outputs (mean, var...) as the scale, [C].
inline void batch_normalization(NodeContext& ctx) {
    ctx.set_output(0, ctx.elem_type(0), ctx.shape(0));
    for (std::size_t i = 1; i < ctx.output_count(); ++i)
        if (const Shape* scale = ctx.known_shape(1)) ctx.set_output(i, ctx.elem_type(1), *scale);
}

/// Y as X, then `statistics` outputs (of type stash_type) with the normalized axes (from `axis`) set to 1.
inline void normalization_with_statistics(NodeContext& ctx, std::size_t statistics) {
    const Shape& in = ctx.shape(0);
    ctx.set_output(0, ctx.elem_type(0), in);
    const std::int64_t ax = ctx.axis(ctx.attr_int("axis", -1), static_cast<std::int64_t>(in.size()));
    Shape stats = in;
    for (std::size_t i = static_cast<std::size_t>(ax); i < stats.size(); ++i) stats[i] = 1;
    const int stash = static_cast<int>(ctx.attr_int("stash_type", elem::float32));
    for (std::size_t k = 1; k <= statistics; ++k) ctx.set_output(k, stash, stats);
}

/// LayerNormalization (opset 17): Y as X; Mean and InvStdDev with the normalized axes set to 1.
inline void layer_normalization(NodeContext& ctx) { normalization_with_statistics(ctx, 2); }

/// RNN, GRU, LSTM: Y [seq, directions, batch, hidden] (layout 0) or [batch, seq, directions, hidden]
/// (layout 1, opset 14); Y_h and LSTM's Y_c [directions, batch, hidden] or [batch, directions, hidden].
inline void recurrent(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.size() != 3) ctx.fail("X must have rank 3, got " + format_shape(x));
    const bool batch_first = ctx.opset() >= 14 && ctx.attr_int("layout", 0) == 1;
    const SymInt seq = batch_first ? x[1] : x[0], batch = batch_first ? x[0] : x[1];
    const std::int64_t directions = ctx.attr_string("direction", "forward") == "bidirectional" ? 2 : 1;
    SymInt hidden;
    if (ctx.attribute("hidden_size")) hidden = ctx.attr_int("hidden_size", 0);
    else if (const Shape* r = ctx.known_shape(2); r && r->size() == 3) hidden = (*r)[2];
    else throw UnknownInput{"hidden_size is not known"};
    const int t = ctx.elem_type(0);
    ctx.set_output(0, t, batch_first ? Shape{batch, seq, directions, hidden} : Shape{seq, directions, batch, hidden});
    const Shape state = batch_first ? Shape{batch, directions, hidden} : Shape{directions, batch, hidden};
    ctx.set_output(1, t, state);
    ctx.set_output(2, t, state);
}

/// RoiAlign: [num_rois, C, output_height, output_width].
inline void roi_align(NodeContext& ctx) {
    const Shape &x = ctx.shape(0), &rois = ctx.shape(1);
    if (x.size() != 4 || rois.size() != 2) ctx.fail("X must have rank 4 and rois rank 2");
    ctx.set_output(0, ctx.elem_type(0), {rois[0], x[1], ctx.attr_int("output_height", 1), ctx.attr_int("output_width", 1)});
}

/// MaxRoiPool: [num_rois, C, pooled_shape...].
inline void max_roi_pool(NodeContext& ctx) {
    const Shape &x = ctx.shape(0), &rois = ctx.shape(1);
    const auto pooled = ctx.attr_ints("pooled_shape");
    if (!pooled || pooled->size() != 2 || x.size() != 4 || rois.size() != 2) ctx.fail("pooled_shape, X or rois do not have the expected ranks");
    ctx.set_output(0, ctx.elem_type(0), {rois[0], x[1], (*pooled)[0], (*pooled)[1]});
}

/// NonMaxSuppression: [u, 3] with u the number of boxes kept, known only at run time.
inline void non_max_suppression(NodeContext& ctx) {
    ctx.set_output(0, elem::int64, {ctx.fresh("NonMaxSuppression: the number of selected boxes depends on the data"), 3});
}

/// GridSample: [N, C, grid's spatial dims...].
inline void grid_sample(NodeContext& ctx) {
    const Shape &x = ctx.shape(0), &grid = ctx.shape(1);
    if (grid.size() != x.size() || x.size() < 3) ctx.fail("X and grid must have the same rank >= 3");
    Shape out{x[0], x[1]};
    out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// The neural-network family in the registry.
inline void register_nn(OpRegistry& r) {
    r.add("", "Conv", 1, conv);
    r.add("", "ConvInteger", 10, conv_integer);
    r.add("", "QLinearConv", 10, qlinear_conv);
    r.add("", "ConvTranspose", 1, conv_transpose);
    r.add_all("", {"MaxPool", "AveragePool", "LpPool"}, 1, pool);
    r.add_all("", {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}, 1, global_pool);
    r.add("", "MaxUnpool", 9, max_unpool);
    r.add("", "BatchNormalization", 1, batch_normalization);
    r.add("", "LayerNormalization", 17, layer_normalization);
    r.add_all("", {"RNN", "GRU", "LSTM"}, 1, recurrent);
    r.add("", "RoiAlign", 10, roi_align);
    r.add("", "MaxRoiPool", 1, max_roi_pool);
    r.add("", "NonMaxSuppression", 10, non_max_suppression);
    r.add("", "GridSample", 16, grid_sample);
}

}  // namespace yobx::onnx::ops
