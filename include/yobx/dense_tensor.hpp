// yobx/dense_tensor.hpp — a small dense CPU tensor for tests, examples and benchmarks.
//
// It is what yobx's own tests instantiate the templates with, and a worked
// example of specializing tensor_traits. Copies share storage (like
// at::Tensor); clone() copies the data. It is not a numerical library.
#pragma once

#include <yobx/dtype.hpp>
#include <yobx/error.hpp>
#include <yobx/tensor.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace yobx {

/// A dense, row-major CPU tensor. Copies share the storage (one reference
/// count, like at::Tensor); clone() does not.
///   auto t = yobx::DenseTensor::zeros({2, 3}, yobx::DType::float32);
///   t.values<float>()[4] = 1.5f;
class DenseTensor {
    // bool is stored as uint8_t: std::vector<bool> has no contiguous storage.
    template <class E>
    using storage_t = std::conditional_t<std::is_same_v<std::remove_cv_t<E>, bool>, std::uint8_t, std::remove_cv_t<E>>;
    using Storage = std::variant<std::vector<float>, std::vector<double>, std::vector<std::int32_t>,
                                 std::vector<std::int64_t>, std::vector<std::uint8_t>>;
    struct Impl {
        DType dtype;
        std::vector<std::int64_t> shape;
        std::int64_t numel;
        Storage data;
    };

public:
    /// An empty float32 tensor of shape [0]. All default-constructed tensors
    /// share one empty storage, so default construction does not allocate.
    DenseTensor() {
        static const std::shared_ptr<Impl> empty = zeros({0}, DType::float32).impl_;
        impl_ = empty;
    }

    /// A tensor of the given shape filled with 0. Throws value_error on a negative dimension.
    static DenseTensor zeros(std::vector<std::int64_t> shape, DType dtype) {
        return DenseTensor(std::move(shape), dtype);
    }

    /// A tensor filled with `value` (converted to the dtype: truncated for integers, value != 0 for
    /// bool). Throws value_error when an integer dtype cannot hold it (NaN, out of range).
    static DenseTensor full(std::vector<std::int64_t> shape, double value, DType dtype) {
        DenseTensor t(std::move(shape), dtype);
        std::visit([value, dtype](auto& v) {
            using E = typename std::remove_reference_t<decltype(v)>::value_type;
            E e{};
            if (dtype == DType::bool_) {
                e = static_cast<E>(value != 0);
            } else if constexpr (std::is_integral_v<E>) {
                // [-2^(n-1), 2^(n-1)) in double, exactly
                const double lo = static_cast<double>(std::numeric_limits<E>::min());
                if (!(value >= lo && value < -lo))
                    throw value_error("DenseTensor::full: " + std::to_string(value) + " does not fit the dtype");
                e = static_cast<E>(value);
            } else {
                e = static_cast<E>(value);
            }
            for (auto& x : v) x = e;
        }, t.impl_->data);
        return t;
    }

    /// A tensor holding `values` (row-major). Throws value_error when the count does not match the shape.
    template <class E>
    static DenseTensor from_values(std::vector<std::int64_t> shape, std::vector<E> values) {
        DenseTensor t(std::move(shape), dtype_for<E>());
        if (static_cast<std::int64_t>(values.size()) != t.numel())
            throw value_error("DenseTensor::from_values: " + std::to_string(values.size()) +
                              " values for a shape of " + std::to_string(t.numel()) + " elements");
        std::get<std::vector<storage_t<E>>>(t.impl_->data).assign(values.begin(), values.end());
        return t;
    }

    const std::vector<std::int64_t>& shape() const noexcept { return impl_->shape; }
    DType dtype() const noexcept { return impl_->dtype; }
    std::int64_t numel() const noexcept { return impl_->numel; }
    std::int64_t dim() const noexcept { return static_cast<std::int64_t>(impl_->shape.size()); }

    /// The elements as a span of E; throws type_error when E is not the tensor's element type.
    /// Like at::Tensor, a const tensor still gives write access to its shared storage.
    template <class E>
    std::span<storage_t<E>> values() const {
        if (dtype_for<E>() != impl_->dtype)
            throw type_error("DenseTensor::values: the tensor holds " + std::string(to_string(impl_->dtype)) +
                             ", not " + std::string(to_string(dtype_for<E>())));
        return std::span<storage_t<E>>(std::get<std::vector<storage_t<E>>>(impl_->data));
    }

    /// The elements converted to double, row-major.
    std::vector<double> to_doubles() const {
        return std::visit([](const auto& v) { return std::vector<double>(v.begin(), v.end()); }, impl_->data);
    }

    /// A deep copy: later writes to *this do not reach it.
    DenseTensor clone() const { return DenseTensor(std::make_shared<Impl>(*impl_)); }

    /// True when both share the same storage (a copy, not a clone).
    bool shares_storage_with(const DenseTensor& other) const noexcept { return impl_ == other.impl_; }

    /// Same shape, dtype and values.
    friend bool operator==(const DenseTensor& a, const DenseTensor& b) {
        return a.impl_->dtype == b.impl_->dtype && a.impl_->shape == b.impl_->shape && a.impl_->data == b.impl_->data;
    }

    /// DenseTensor(float32, [2, 3])
    friend std::ostream& operator<<(std::ostream& os, const DenseTensor& t) {
        os << "DenseTensor(" << t.dtype() << ", [";
        for (std::size_t i = 0; i < t.shape().size(); ++i) os << (i ? ", " : "") << t.shape()[i];
        return os << "])";
    }

private:
    template <class E>
    static constexpr DType dtype_for() {
        using U = std::remove_cv_t<E>;
        if constexpr (std::is_same_v<U, float>) return DType::float32;
        else if constexpr (std::is_same_v<U, double>) return DType::float64;
        else if constexpr (std::is_same_v<U, std::int32_t>) return DType::int32;
        else if constexpr (std::is_same_v<U, std::int64_t>) return DType::int64;
        else if constexpr (std::is_same_v<U, bool> || std::is_same_v<U, std::uint8_t>) return DType::bool_;
        else static_assert(sizeof(U) == 0, "DenseTensor supports float, double, int32_t, int64_t and bool elements");
    }

    explicit DenseTensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

    DenseTensor(std::vector<std::int64_t> shape, DType dtype) {
        std::int64_t numel = 1;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            const std::int64_t d = shape[i];
            if (d < 0)
                throw value_error("DenseTensor: dimension " + std::to_string(i) + " is negative (" +
                                  std::to_string(d) + ")");
            if (d != 0 && numel > std::numeric_limits<std::int64_t>::max() / d)
                throw value_error("DenseTensor: the number of elements overflows int64");
            numel *= d;
        }
        const auto n = static_cast<std::size_t>(numel);
        Storage data;
        switch (dtype) {
            case DType::float32: data = std::vector<float>(n); break;
            case DType::float64: data = std::vector<double>(n); break;
            case DType::int32: data = std::vector<std::int32_t>(n); break;
            case DType::int64: data = std::vector<std::int64_t>(n); break;
            case DType::bool_: data = std::vector<std::uint8_t>(n); break;
        }
        impl_ = std::make_shared<Impl>(Impl{dtype, std::move(shape), numel, std::move(data)});
    }

    std::shared_ptr<Impl> impl_;
};

/// DenseTensor as a yobx tensor.
template <>
struct tensor_traits<DenseTensor> {
    static const std::vector<std::int64_t>& shape(const DenseTensor& t) { return t.shape(); }
    static DType dtype(const DenseTensor& t) { return t.dtype(); }
    static DenseTensor clone(const DenseTensor& t) { return t.clone(); }
    static DenseTensor empty(const std::vector<std::int64_t>& shape, const DenseTensor& like) {
        return DenseTensor::zeros(shape, like.dtype());
    }
    static DenseTensor zeros(const std::vector<std::int64_t>& shape, const DenseTensor& like) {
        return DenseTensor::zeros(shape, like.dtype());
    }
    /// Optional member: a tensor of `value`s, for the observer's ones and constant fills.
    static DenseTensor full(const std::vector<std::int64_t>& shape, double value, const DenseTensor& like) {
        return DenseTensor::full(shape, value, like.dtype());
    }
    /// Optional member: the elements as doubles, for InputObserver::check_discrepancies.
    static std::vector<double> to_doubles(const DenseTensor& t) { return t.to_doubles(); }
};

}  // namespace yobx
