// yobx/onnx.hpp — everything yobx does with ONNX models, in one include.
//
// Shapes (yobx/adapters/onnx/shapes.hpp: load_model, infer_shapes, save_model, ModelFile,
// evaluate_shapes), memory (yobx/adapters/onnx/model_memory.hpp: memory_of, plan_memory's
// report; yobx/onnx/memory_plot.hpp: its SVG plot) and the calls that take and return bytes
// (yobx/adapters/onnx/serialized.hpp, what the Python module binds). Like the adapter, it needs
// Debian's libonnx-dev (docs/onnx.md: link onnx_proto, onnx and protobuf::libprotobuf, define
// ONNX_ML=1); yobx/yobx.hpp, the core, includes none of it.
//
//   #include <yobx/onnx.hpp>
//   yobx::onnx::ModelFile file("model.onnx");
//   const yobx::onnx::ShapeReport report = yobx::onnx::infer_shapes(file.model());
//   const yobx::onnx::MemoryReport memory = yobx::onnx::memory_of(file.model(), report);
#pragma once

#include <yobx/adapters/onnx/shapes.hpp>
#include <yobx/adapters/onnx/model_memory.hpp>
#include <yobx/adapters/onnx/serialized.hpp>
#include <yobx/onnx/memory_plot.hpp>
