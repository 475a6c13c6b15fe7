// yobx/onnx/ops.hpp — the registry of every operator rule yobx has, by family.
//
// Each family lives in its own header under yobx/onnx/ops/, as ONNX groups its
// schemas under onnx/defs/<family>; this header only puts them together. The
// walk (yobx/adapters/onnx.hpp) looks rules up here and knows no operator.
#pragma once

#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/ops/elementwise.hpp>
#include <yobx/onnx/ops/generator.hpp>
#include <yobx/onnx/ops/math.hpp>
#include <yobx/onnx/ops/microsoft.hpp>
#include <yobx/onnx/ops/nn.hpp>
#include <yobx/onnx/ops/quantization.hpp>
#include <yobx/onnx/ops/tensor.hpp>

namespace yobx::onnx {

/// The newest default-domain opset whose operators yobx knows.
inline constexpr int max_known_opset = 22;
/// The oldest default-domain opset yobx reads.
inline constexpr int min_known_opset = 7;

/// Every rule, built once.
///   const Rule rule = default_registry().find("", "Conv", 17);
inline const OpRegistry& default_registry() {
    static const OpRegistry registry = [] {
        OpRegistry r;
        ops::register_elementwise(r);
        ops::register_tensor(r);
        ops::register_math(r);
        ops::register_nn(r);
        ops::register_generator(r);
        ops::register_quantization(r);
        ops::microsoft::register_microsoft(r);
        return r;
    }();
    return registry;
}

}  // namespace yobx::onnx
