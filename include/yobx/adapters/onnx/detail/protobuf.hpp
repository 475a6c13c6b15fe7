// yobx/adapters/onnx/detail/protobuf.hpp — ONNX's generated protobuf classes, with the macros they need.
//
// ONNX's headers read ONNX_ML and ONNX_NAMESPACE; its CMake targets define them,
// and this header defines them for a build that does not use those targets.
#pragma once

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif

#include <onnx/onnx_pb.h>
