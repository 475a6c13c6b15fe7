// The registry (include/yobx/onnx/ops.hpp): versions found by opset, errors naming the node.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

TEST_CASE("operator versions are found by the model's opset") {
    const OpRegistry& r = default_registry();
    const auto covered = [&](std::string_view domain, std::string_view op, int opset) { return r.find(domain, op, opset) != nullptr; };
    CHECK_FALSE(covered("", "CastLike", 14));
    CHECK(covered("", "CastLike", 15));
    CHECK(covered("ai.onnx", "Relu", 17));
    CHECK_FALSE(covered("com.microsoft", "Relu", 1));
    CHECK_FALSE(covered("", "NoSuchOp", 17));
    const bool same = r.find("", "Split", 12) == r.find("", "Split", 18);  // one rule reads the opset
    CHECK(same);
}

TEST_CASE("errors name the node and the values involved") {
    ShapeEnv env;
    const TensorInfo data = ints_tensor({7, 8});
    const TensorInfo idx = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{2});
    CHECK(test::error_of<value_error>([&] { run(env, "Gather", 17, {&data, &idx}); }) == "Gather 'n': index 2 is out of range for axis 0 of size 2 (data shape [2])");
    const TensorInfo x = TensorInfo::of(elem::float32, {2, 3});
    CHECK(test::error_of<value_error>([&] { run(env, "Flatten", 17, {&x}, {{"axis", integer(3)}}); }) == "Flatten 'n': axis 3 is out of range for rank 2");
    CHECK(test::error_of<value_error>([&] { run(env, "Cast", 17, {&x}); }) == "Cast 'n': attribute 'to' is required");
    CHECK(test::error_of<value_error>([&] { run(env, "Conv", 17, {&x, &x}, {{"strides", text("2")}}); }) == "Conv 'n': input must have rank >= 3, got [2, 3]");
    const TensorInfo huge = TensorInfo::of(elem::float32, {std::int64_t{1} << 62, 4});
    CHECK(test::error_of<value_error>([&] { run(env, "Flatten", 17, {&huge}, {{"axis", integer(2)}}); }) ==
          "integer overflow in 4611686018427387904*4: the result does not fit in int64");
    const TensorInfo pads = ints_tensor({0, 0, -3, 0});
    CHECK(test::error_of<value_error>([&] { run(env, "Pad", 17, {&x, &pads}); }) == "Pad 'n': output 0 would have a negative dimension: [-1, 3]");
}
