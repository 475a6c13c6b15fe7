// yobx/shape_inference.hpp — symbolic shape inference: rules, broadcast hooks, SymTensor.
//
// Broadcasting, its policies and the `shape_hooks` table are in yobx/shape/rules.hpp;
// SymTensor (a Tensor known by its symbolic shape, with values for shape tensors) in
// yobx/shape/sym_tensor.hpp; ShapeInference, which runs the ONNX operators' rules
// (yobx/onnx/ops/) on SymTensors with data propagation, in yobx/onnx/sym_tensor_ops.hpp.
// docs/shape_inference.md is the guide.
#pragma once

#include <yobx/onnx/sym_tensor_ops.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/shape/sym_tensor.hpp>
