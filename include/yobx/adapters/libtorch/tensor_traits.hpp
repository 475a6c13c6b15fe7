// yobx/adapters/libtorch/tensor_traits.hpp — at::Tensor as a yobx tensor, and its dtype.
//
// libtorch::DType prints a tensor's dtype as Python does (`float32`); tensor_traits<at::Tensor>
// makes at::Tensor a yobx tensor (shape, dtype, detached clone, empty, zeros, full, to_doubles).
#pragma once

#include <yobx/tensor.hpp>

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace yobx {

namespace libtorch {

/// A tensor's dtype as yobx prints it: `float32`, `int64`, ... (Python's names
/// without `torch.`). It converts to c10::ScalarType.
struct DType {
    c10::ScalarType scalar_type = c10::ScalarType::Undefined;

    operator c10::ScalarType() const noexcept { return scalar_type; }
    friend bool operator==(const DType&, const DType&) = default;
    /// Python's name: DType{at::kFloat}.name() == "float32".
    std::string name() const {
        switch (scalar_type) {
            case c10::ScalarType::Float: return "float32";
            case c10::ScalarType::Double: return "float64";
            case c10::ScalarType::Half: return "float16";
            case c10::ScalarType::BFloat16: return "bfloat16";
            case c10::ScalarType::Long: return "int64";
            case c10::ScalarType::Int: return "int32";
            case c10::ScalarType::Short: return "int16";
            case c10::ScalarType::Char: return "int8";
            case c10::ScalarType::Byte: return "uint8";
            case c10::ScalarType::Bool: return "bool";
            case c10::ScalarType::ComplexFloat: return "complex64";
            case c10::ScalarType::ComplexDouble: return "complex128";
            default: return c10::toString(scalar_type);
        }
    }
    friend std::ostream& operator<<(std::ostream& os, const DType& d) { return os << d.name(); }
};

}  // namespace libtorch

/// at::Tensor as a yobx tensor. clone() is detached (the copy records no
/// autograd history); empty() and zeros() have the dtype and device of `like`.
template <>
struct tensor_traits<at::Tensor> {
    static std::vector<std::int64_t> shape(const at::Tensor& t) { return t.sizes().vec(); }
    static libtorch::DType dtype(const at::Tensor& t) { return {t.scalar_type()}; }
    static at::Tensor clone(const at::Tensor& t) { return t.detach().clone(); }
    static at::Tensor empty(const std::vector<std::int64_t>& shape, const at::Tensor& like) {
        return at::empty(shape, like.options().requires_grad(false));
    }
    static at::Tensor zeros(const std::vector<std::int64_t>& shape, const at::Tensor& like) {
        return at::zeros(shape, like.options().requires_grad(false));
    }
    /// `value` everywhere (the observer's ones and constant fills).
    static at::Tensor full(const std::vector<std::int64_t>& shape, double value, const at::Tensor& like) {
        return at::full(shape, value, like.options().requires_grad(false));
    }
    /// The elements as doubles (row-major), for InputObserver::check_discrepancies.
    static std::vector<double> to_doubles(const at::Tensor& t) {
        const at::Tensor d = t.detach().to(at::kCPU, at::kDouble).contiguous();
        const double* p = d.data_ptr<double>();
        return std::vector<double>(p, p + d.numel());
    }
};

}  // namespace yobx
