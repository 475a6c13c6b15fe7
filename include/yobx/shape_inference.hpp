// yobx/shape_inference.hpp — symbolic shape inference: rules, broadcast hooks, SymTensor.
//
// The shape rules over SymInt and the `shape_hooks` table are in
// yobx/shape/rules.hpp; SymTensor (a Tensor known by its symbolic shape, with
// values for shape tensors) in yobx/shape/sym_tensor.hpp; ShapeInference,
// which runs ONNX operators on SymTensors with data propagation, in
// yobx/shape/inference.hpp. docs/shape_inference.md is the guide.
#pragma once

#include <yobx/shape/inference.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/shape/sym_tensor.hpp>
