// yobx/onnx/payload.hpp — which tensor payloads shape inference reads: the rule, once.
//
// yobx's rules read the values of a tensor of rank 0 or 1 with at most SymTensor::max_values
// elements (tensor_info); ONNX's own inference, the walk's fallback, reads the data of an integer
// tensor of rank 0 or 1 whatever its length (a shape input). Every other payload (a weight) is read
// by no one: ModelFile and LightModel leave it in the file, the Python module out of what crosses
// into C++ (`yobx._yobx.payload_unread`, this same function).
//
//   yobx::onnx::payload_unread(yobx::onnx::elem::float32, 2, 9);     // true: rank 2
//   yobx::onnx::payload_unread(yobx::onnx::elem::int64, 1, 5000);    // false: ONNX may read it
#pragma once

#include <yobx/onnx/elem_type.hpp>
#include <yobx/shape/sym_tensor.hpp>

#include <cstddef>
#include <cstdint>

namespace yobx::onnx {

/// Whether yobx's rules read the values of a tensor of `rank` dims and `count` elements.
constexpr bool values_read(std::size_t rank, std::int64_t count) noexcept { return rank <= 1 && count <= SymTensor::max_values; }

/// Whether no inference reads the payload of a tensor of this element type, `rank` dims and
/// `count` elements: neither yobx's rules (values_read) nor ONNX's, which reads an integer
/// tensor of rank 0 or 1 of any length.
constexpr bool payload_unread(int elem_type, std::size_t rank, std::int64_t count) noexcept {
    const bool integer = elem_type == elem::int32 || elem_type == elem::int64;
    return !values_read(rank, count) && !(integer && rank <= 1);
}

}  // namespace yobx::onnx
