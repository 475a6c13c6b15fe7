// yobx/onnx/ops/quantization.hpp — the default domain's quantization operators.
//
// QuantizeLinear and DequantizeLinear keep the shape; the element type comes
// from the zero point, the scale or the output_dtype attribute (QuantizeLinear 21,
// DequantizeLinear 23).
// ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul are with their
// float counterparts (nn.hpp, math.hpp).
#pragma once

#include <yobx/onnx/ops/common.hpp>

namespace yobx::onnx::ops {

/// QuantizeLinear: x's shape, the zero point's type (uint8 by default, output_dtype since opset 21).
inline void quantize_linear(NodeContext& ctx) {
    int type = ctx.has_input(2) ? ctx.elem_type(2) : elem::uint8;
    if (ctx.opset() >= 21 && ctx.attr_int("output_dtype", 0) != 0) type = static_cast<int>(ctx.attr_int("output_dtype", 0));
    ctx.set_output(0, type, ctx.shape(0));
}
/// DequantizeLinear: x's shape, the scale's type (output_dtype since opset 23).
inline void dequantize_linear(NodeContext& ctx) {
    int type = ctx.elem_type(1);
    if (ctx.opset() >= 23 && ctx.attr_int("output_dtype", 0) != 0) type = static_cast<int>(ctx.attr_int("output_dtype", 0));
    ctx.set_output(0, type, ctx.shape(0));
}
/// DynamicQuantizeLinear: y (uint8) of x's shape, a float scale and a uint8 zero point, both scalars.
inline void dynamic_quantize_linear(NodeContext& ctx) {
    ctx.set_output(0, elem::uint8, ctx.shape(0));
    ctx.set_output(1, elem::float32, {});
    ctx.set_output(2, elem::uint8, {});
}

/// The quantization family in the registry.
inline void register_quantization(OpRegistry& r) {
    r.add("", "QuantizeLinear", 10, quantize_linear);
    r.add("", "DequantizeLinear", 10, dequantize_linear);
    r.add("", "DynamicQuantizeLinear", 11, dynamic_quantize_linear);
}

}  // namespace yobx::onnx::ops
