// yobx/onnx/ops/common.hpp — helpers the operator families share.
//
// Broadcasting of shapes and of propagated values, guarded questions that fall
// back to fresh symbols outside strict mode, ceil and floor division of sizes.
#pragma once

#include <yobx/onnx/node_context.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/shape/sym_tensor.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yobx::onnx::ops {

/// Runs f; outside strict mode a guard the ShapeEnv cannot decide makes `fallback` run
/// instead (ONNX's rule: a fresh symbol where it cannot decide, never a throw).
template <class F, class G>
auto guarded(NodeContext& ctx, F f, G fallback) -> decltype(f()) {
    if (ctx.policy() == BroadcastPolicy::strict && ctx.env().mode() == ShapeEnvMode::strict) return f();
    try {
        return f();
    } catch (const GuardOnDataDependentSymNode&) {
        if (ctx.env().mode() == ShapeEnvMode::draft) throw;  // a draft env answers from hints: not reached
        return fallback();
    }
}

/// One dimension of a broadcast the ShapeEnv could not decide: the side every valid graph gives
/// (shape::dominating_side: both at least 1, Max(a, b) provably one of them), or a fresh symbol,
/// ONNX's rule for two symbols it cannot relate.
inline SymInt undecided_broadcast(NodeContext& ctx, const SymInt& a, const SymInt& b, const char* why) {
    if (const auto side = shape::dominating_side(ctx.env(), a, b)) return *side;
    return ctx.fresh(why);
}

/// The broadcast of shapes axis by axis, each dimension decided on its own: only those the
/// ShapeEnv cannot decide are fresh symbols, `why` in the report (broadcast_shapes' fallback and
/// MatMul's batch axes).
inline Shape broadcast_each_axis(NodeContext& ctx, const std::vector<Shape>& shapes, const char* why) {
    std::size_t r = 0;
    for (const auto& s : shapes) r = std::max(r, s.size());
    Shape out;
    for (std::size_t i = 0; i < r; ++i) {
        std::optional<SymInt> d;
        for (const auto& s : shapes) {
            if (i + s.size() < r) continue;  // this input has no such axis
            const SymInt& e = s[i + s.size() - r];
            if (!d) {
                d = e;
                continue;
            }
            const SymInt prev = *d;
            d = guarded(
                ctx,
                [&] {
                    const auto one = shape::broadcast_dim(ctx.env(), prev, e, ctx.policy(), ctx.where());
                    return one ? *one : ctx.fresh(why);
                },
                [&] { return undecided_broadcast(ctx, prev, e, why); });
        }
        out.push_back(*d);
    }
    return out;
}

/// The broadcast of shapes, dimension by dimension when the whole cannot be decided: only
/// the dimensions the ShapeEnv cannot decide are fresh (a [batch, n, 32] against
/// [1, m, 32] keeps batch and 32).
inline Shape broadcast_shapes(NodeContext& ctx, const std::vector<Shape>& shapes) {
    if (shapes.empty()) ctx.fail("no input");
    const auto run = [&] { return shape::broadcast(ctx.env(), shapes, ctx.policy(), ctx.op_type(), ctx.where()); };
    return guarded(ctx, run, [&] { return broadcast_each_axis(ctx, shapes, "broadcast the ShapeEnv could not decide"); });
}

/// The shapes of the node's present inputs, in order (an absent optional input left out).
inline std::vector<Shape> present_input_shapes(const NodeContext& ctx) {
    std::vector<Shape> shapes;
    shapes.reserve(ctx.input_count());
    for (std::size_t i = 0; i < ctx.input_count(); ++i)
        if (ctx.has_input(i)) shapes.push_back(ctx.shape(i));
    return shapes;
}

/// The multidirectional broadcast of the given inputs' shapes (ONNX's Add, Where, Max...).
inline Shape broadcast_inputs(NodeContext& ctx, std::initializer_list<std::size_t> which) {
    std::vector<Shape> shapes;
    shapes.reserve(which.size());
    for (std::size_t i : which)
        if (ctx.has_input(i)) shapes.push_back(ctx.shape(i));
    return broadcast_shapes(ctx, shapes);
}

/// The element count of a shape.
inline SymInt numel(const NodeContext& ctx, const Shape& s) { return ctx.simplify(shape::numel(s)); }

/// ceil(a / b) for sizes, b > 0.
inline SymInt ceil_div(const SymInt& a, const SymInt& b) { return floordiv(a + b - 1, b); }

/// Whether a double converts to int64 without undefined behaviour (within +-9.2e18, a
/// margin below 2^63; NaN does not).
inline bool fits_int64(double v) { return v > -9.2e18 && v < 9.2e18; }

/// Elementwise values of a binary op of two value lists (shape::detail::broadcast_pairs), each simplified.
template <class F>
std::optional<std::vector<SymInt>> combine_values(const NodeContext& ctx, const std::vector<SymInt>& a, const std::vector<SymInt>& b,
                                                  F f) {
    return shape::detail::broadcast_pairs(a, b, [&](const SymInt& x, const SymInt& y) -> std::optional<SymInt> {
        auto v = f(x, y);
        if (!v) return std::nullopt;
        return ctx.simplify(*v);
    });
}

/// Elementwise values of a binary op of inputs `ia` and `ib`: none unless both have values.
template <class F>
std::optional<std::vector<SymInt>> combine_values(const NodeContext& ctx, std::size_t ia, std::size_t ib, F f) {
    const auto* a = ctx.values(ia);
    const auto* b = ctx.values(ib);
    if (a == nullptr || b == nullptr) return std::nullopt;
    return combine_values(ctx, **a, **b, f);
}

/// The ints of attribute `name`, or of input `input` when the opset moved them there
/// (Squeeze's axes, Split's split, Pad's pads...): nullopt when absent, UnknownInput when
/// the input is there but its values are not known.
inline std::optional<std::vector<std::int64_t>> ints_from(const NodeContext& ctx, std::string_view name, std::size_t input,
                                                          int input_since) {
    if (ctx.opset() < input_since) return ctx.attr_ints(name);
    if (!ctx.has_input(input)) return std::nullopt;
    auto v = ctx.constant_values(input);
    if (!v) throw UnknownInput{"the values of input '" + std::string(name) + "' are not known"};
    return v;
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

}  // namespace yobx::onnx::ops
