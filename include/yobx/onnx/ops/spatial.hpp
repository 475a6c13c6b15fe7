// yobx/onnx/ops/spatial.hpp — operators that change spatial sizes: Pad, DepthToSpace,
// SpaceToDepth, Resize and Upsample, Col2Im, CenterCropPad.
#pragma once

#include <yobx/onnx/ops/common.hpp>
#include <yobx/onnx/ops/rounding.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yobx::onnx::ops {

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

/// The spatial family in the registry.
inline void register_spatial(OpRegistry& r) {
    r.add("", "Pad", 1, pad);
    r.add("", "DepthToSpace", 1, depth_to_space);
    r.add("", "SpaceToDepth", 1, space_to_depth);
    r.add("", "Resize", 10, resize);
    r.add("", "Col2Im", 18, col2im);
    r.add("", "CenterCropPad", 18, center_crop_pad);
    r.add("", "Upsample", 7, resize);
}

}  // namespace yobx::onnx::ops
