// yobx/shape/sym_tensor.hpp — SymTensor: a tensor known only by its symbolic shape and dtype.
//
// Shape inference runs on SymTensors. A shape tensor (an integer tensor of rank
// 0 or 1, such as the output of Shape) may also carry its values, possibly
// symbolic, so that Shape -> Gather -> Concat -> Reshape keeps `a` and `b*c`.
// SymTensor satisfies the Tensor concept: pytree, Value and the observer take it.
#pragma once

#include <yobx/dtype.hpp>
#include <yobx/error.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/sym.hpp>
#include <yobx/tensor.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

/// A tensor with a symbolic shape, a dtype and, for shape tensors, optional known values.
///   SymTensor x({SymInt::symbol("a"), 4}, DType::float32);           // SymTensor(float32, [a, 4])
///   SymTensor s = SymTensor::from_values({SymInt::symbol("a"), -1});   // SymTensor(int64, [2], values=[a, -1])
/// Values (row-major) are allowed for integer tensors of rank 0 or 1 with a constant length.
class SymTensor {
public:
    /// The longest shape tensor whose values the operators compute: a longer result
    /// (an Expand of one value to a length taken from the data) drops its values.
    static constexpr std::int64_t max_values = 4096;
    /// The largest rank yobx gives a tensor: an operator whose output rank comes from the data
    /// (a Reshape or Expand to a target of length 2^62) refuses more, rather than allocate a
    /// dimension for each (ShapeInference's shape inputs, the ONNX walker's output ranks).
    static constexpr std::int64_t max_rank = 1024;

    /// A float32 scalar.
    SymTensor() = default;
    /// A tensor of this shape and dtype; `values` as described above, else a value_error.
    SymTensor(Shape shape, DType dtype, std::optional<std::vector<SymInt>> values = std::nullopt)
        : shape_(std::move(shape)), dtype_(dtype), values_(std::move(values)) {
        for (std::size_t i = 0; i < shape_.size(); ++i)
            if (auto c = shape_[i].maybe_constant(); c && *c < 0)
                throw value_error("SymTensor: dimension " + std::to_string(i) + " of " + format_shape(shape_) + " is negative");
        if (!values_) return;
        const auto fail = [&](const std::string& why) {
            throw value_error("SymTensor: values " + format_shape(*values_) + " for a tensor " + format_shape(shape_) +
                              " of " + std::string(yobx::to_string(dtype_)) + ": " + why);
        };
        if (!is_integer(dtype_)) fail("only integer tensors carry values");
        if (shape_.size() > 1) fail("only tensors of rank 0 or 1 carry values");
        const std::optional<std::int64_t> n = shape_.empty() ? std::optional<std::int64_t>(1) : shape_[0].maybe_constant();
        if (!n) fail("the length must be a constant");
        if (*n != static_cast<std::int64_t>(values_->size())) fail("the length is " + std::to_string(*n));
    }

    /// A 1-D int64 shape tensor holding `values`.
    template <class = void>
    static SymTensor from_values(std::vector<SymInt> values, DType dtype = DType::int64) {
        Shape shape{static_cast<std::int64_t>(values.size())};
        return SymTensor(std::move(shape), dtype, std::move(values));
    }
    /// A 0-D int64 tensor holding `value`.
    template <class = void>
    static SymTensor scalar(SymInt value, DType dtype = DType::int64) {
        return SymTensor({}, dtype, std::vector<SymInt>{std::move(value)});
    }

    const Shape& shape() const noexcept { return shape_; }
    DType dtype() const noexcept { return dtype_; }
    std::int64_t rank() const noexcept { return static_cast<std::int64_t>(shape_.size()); }
    /// The known values of a shape tensor, if any.
    const std::optional<std::vector<SymInt>>& values() const noexcept { return values_; }

    /// `SymTensor(float32, [a, 4])`, `SymTensor(int64, [2], values=[a, -1])`.
    template <class = void>
    std::string to_string() const {
        std::string s = "SymTensor(" + std::string(yobx::to_string(dtype_)) + ", " + format_shape(shape_);
        if (values_) s += ", values=" + format_shape(*values_);
        return s + ")";
    }
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const SymTensor& t) { return os << t.to_string(); }

    /// Same dtype, structurally identical shape and values.
    template <class = void>
    bool identical(const SymTensor& other) const noexcept {
        const auto same = [](const Shape& x, const Shape& y) {
            if (x.size() != y.size()) return false;
            for (std::size_t i = 0; i < x.size(); ++i)
                if (!x[i].identical(y[i])) return false;
            return true;
        };
        if (dtype_ != other.dtype_ || !same(shape_, other.shape_) || values_.has_value() != other.values_.has_value()) return false;
        return !values_ || same(*values_, *other.values_);
    }

private:
    Shape shape_;
    DType dtype_ = DType::float32;
    std::optional<std::vector<SymInt>> values_;
};

/// SymTensor as a yobx Tensor: its shape is a range of SymInt. It holds no
/// data that could change, so clone is a copy; zeros knows its values when
/// they are allowed (an integer tensor of rank 0 or 1 and constant length).
template <>
struct tensor_traits<SymTensor> {
    static const Shape& shape(const SymTensor& t) noexcept { return t.shape(); }
    static DType dtype(const SymTensor& t) noexcept { return t.dtype(); }
    template <class = void>
    static SymTensor clone(const SymTensor& t) { return t; }
    template <class = void>
    static SymTensor empty(const Shape& shape, const SymTensor& like) { return SymTensor(shape, like.dtype()); }
    template <class = void>
    static SymTensor zeros(const Shape& shape, const SymTensor& like) {
        if (!is_integer(like.dtype()) || shape.size() > 1) return SymTensor(shape, like.dtype());
        const auto n = shape.empty() ? std::optional<std::int64_t>(1) : shape[0].maybe_constant();
        if (!n || *n < 0 || *n > SymTensor::max_values) return SymTensor(shape, like.dtype());
        return SymTensor(shape, like.dtype(), std::vector<SymInt>(static_cast<std::size_t>(*n), SymInt(0)));
    }
};

}  // namespace yobx
