// The tensor customization point and the dense test tensor.
#include "../support.hpp"

#include <yobx/detail/repr.hpp>
#include <yobx/tensor.hpp>

#include <doctest/doctest.h>

#include <sstream>

namespace {

// A user's own tensor type: a name and a shape, nothing else.
struct ToyTensor {
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::shared_ptr<int> storage = std::make_shared<int>(0);
};

}  // namespace

template <>
struct yobx::tensor_traits<ToyTensor> {
    static const std::vector<std::int64_t>& shape(const ToyTensor& t) { return t.shape; }
    static const std::string& dtype(const ToyTensor& t) { return t.dtype; }
    static ToyTensor clone(const ToyTensor& t) { return {t.dtype, t.shape, std::make_shared<int>(*t.storage)}; }
    static ToyTensor empty(const std::vector<std::int64_t>& s, const ToyTensor& like) { return {like.dtype, s}; }
    static ToyTensor zeros(const std::vector<std::int64_t>& s, const ToyTensor& like) { return {like.dtype, s}; }
};

using test::DenseTensor;
using test::DType;

TEST_CASE("a type with complete tensor_traits satisfies the Tensor concept") {
    static_assert(yobx::Tensor<DenseTensor>);
    static_assert(yobx::Tensor<ToyTensor>);
    static_assert(std::is_same_v<yobx::dim_t<DenseTensor>, std::int64_t>);
    CHECK(yobx::shape_of(ToyTensor{"f16", {4, 5}}) == std::vector<std::int64_t>{4, 5});
}

TEST_CASE("types without tensor_traits are not tensors") {
    static_assert(!yobx::Tensor<int>);
    static_assert(!yobx::Tensor<std::vector<float>>);
    CHECK(true);
}

TEST_CASE("DenseTensor copies share storage and clones do not") {
    auto t = DenseTensor::zeros({2, 2}, DType::float32);
    auto copy = t;
    auto deep = yobx::clone(t);
    t.values<float>()[3] = 7.5f;
    CHECK(copy.values<float>()[3] == 7.5f);
    CHECK(deep.values<float>()[3] == 0.0f);
    CHECK(copy.shares_storage_with(t));
    CHECK_FALSE(deep.shares_storage_with(t));
}

TEST_CASE("DenseTensor factories keep dtype and shape") {
    auto f = DenseTensor::full({3}, 2.0, DType::int64);
    CHECK(f.values<std::int64_t>()[2] == 2);
    auto v = DenseTensor::from_values<float>({2}, {1.5f, -1.0f});
    CHECK(v.values<float>()[1] == -1.0f);
    auto e = yobx::tensor_traits<DenseTensor>::empty({0, 4}, f);
    CHECK(e.dtype() == DType::int64);
    CHECK(e.shape() == std::vector<std::int64_t>{0, 4});
    CHECK(e.numel() == 0);
    auto z = yobx::tensor_traits<DenseTensor>::zeros({2, 1}, v);
    CHECK(z.dtype() == DType::float32);
    std::ostringstream os;
    os << z;
    CHECK(os.str() == "DenseTensor(float32, [2, 1])");
    auto b = DenseTensor::from_values<bool>({2}, {true, false});
    CHECK(yobx::dtype_of(b) == DType::bool_);
}

TEST_CASE("DenseTensor rejects bad shapes, counts and element types") {
    CHECK_THROWS_WITH_AS(DenseTensor::zeros({2, -1}, DType::float32), "DenseTensor: dimension 1 is negative (-1)",
                         yobx::value_error);
    CHECK_THROWS_WITH_AS(DenseTensor::from_values<float>({3}, {1.0f}),
                         "DenseTensor::from_values: 1 values for a shape of 3 elements", yobx::value_error);
    CHECK_THROWS_WITH_AS(DenseTensor::zeros({1}, DType::int64).values<float>(),
                         "DenseTensor::values: the tensor holds int64, not float32", yobx::type_error);
    CHECK_THROWS_WITH_AS(DenseTensor::zeros({1LL << 40, 1LL << 40}, DType::float32),
                         "DenseTensor: the number of elements overflows int64", yobx::value_error);
}

TEST_CASE("floats print as Python's repr") {
    using yobx::detail::repr_double;
    CHECK(repr_double(0.5) == "0.5");
    CHECK(repr_double(3.0) == "3.0");
    CHECK(repr_double(-0.0) == "-0.0");
    CHECK(repr_double(100000.0) == "100000.0");
    CHECK(repr_double(1e16) == "1e+16");
    CHECK(repr_double(1.5e-7) == "1.5e-07");
    CHECK(repr_double(0.0001) == "0.0001");
    CHECK(repr_double(0.1 + 0.2) == "0.30000000000000004");
    CHECK(repr_double(123456789012345678.0) == "1.2345678901234568e+17");
    CHECK(repr_double(1.0 / 0.0) == "inf");
}

TEST_CASE("strings print as Python's repr") {
    using yobx::detail::repr_string;
    CHECK(repr_string("abc") == "'abc'");
    CHECK(repr_string("it's") == "\"it's\"");
    CHECK(repr_string("a'b\"c") == "'a\\'b\"c'");
    CHECK(repr_string("tab\there\n") == "'tab\\there\\n'");
    CHECK(repr_string(std::string("\x01", 1)) == "'\\x01'");
}
