// The rules of include/yobx/onnx/ops/nn.hpp: convolutions, pooling, their window attributes.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

TEST_CASE("three stride-2 convolutions of a symbolic height give (height + 7)//8") {
    ShapeEnv env;
    const SymInt h = env.create_symbol("height", std::nullopt, ValueRange{1, ValueRange::inf});
    TensorInfo x = TensorInfo::of(elem::float32, {SymInt::symbol("batch"), 3, h, 224});
    const TensorInfo w = TensorInfo::of(elem::float32, {16, 3, 3, 3});
    const Attributes a{{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}};
    for (int i = 0; i < 3; ++i) {
        auto out = run(env, "Conv", 17, {&x, &w}, a);
        x = *out[0];
    }
    CHECK(shape_of(x) == "[batch, 16, (height + 7)//8, 28]");
}

TEST_CASE("pooling: ceil_mode, auto_pad and MaxPool's indices") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {1, 8, SymInt::symbol("h"), 13});
    auto out = run(env, "MaxPool", 12, {&x}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"ceil_mode", integer(1)}}, 2);
    CHECK(shape_of(out[0]) == "[1, 8, h//2, 6]");
    CHECK(shape_of(out[1]) == "[1, 8, h//2, 6]");
    CHECK(out[1]->elem_type == elem::int64);
    // ceil_mode where the last window starts in the end padding for some sizes of h only: the
    // count for every size (onnxruntime drops that window: h = 3 with kernel 2, stride 2 and
    // pads 1 gives windows at -1, 1 and 3, the last one in the end padding, dropped: 2 = 3//2 + 1)
    const auto pool = [&](std::int64_t k, std::int64_t s, std::int64_t begin, std::int64_t end) {
        const TensorInfo x1 = TensorInfo::of(elem::float32, {1, 1, SymInt::symbol("h")});
        return shape_of(run(env, "MaxPool", 12, {&x1},
                            {{"kernel_shape", ints({k})}, {"strides", ints({s})}, {"pads", ints({begin, end})}, {"ceil_mode", integer(1)}})[0]);
    };
    CHECK(pool(2, 2, 1, 1) == "[1, 1, h//2 + 1]");
    CHECK(pool(1, 2, 0, 0) == "[1, 1, (h + 1)//2]");
    CHECK(pool(2, 3, 0, 0) == "[1, 1, (h + 2)//3]");
    CHECK(pool(3, 2, 2, 2) == "[1, 1, (h + 1)//2 + 1]");
    CHECK(pool(1, 2, 0, 3) == "[1, 1, (h + 1)//2 + 1]");  // an end pad past the kernel: the last window always dropped
    out = run(env, "AveragePool", 17, {&x}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"auto_pad", text("SAME_UPPER")}});
    CHECK(shape_of(out[0]) == "[1, 8, (h + 1)//2, 7]");
    CHECK(test::error_of<value_error>([&] { run(env, "AveragePool", 17, {&x}, {{"kernel_shape", ints({3, 3})}, {"auto_pad", text("SAME")}}); }) ==
          "AveragePool 'n': auto_pad 'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

TEST_CASE("window attributes of any int64: checked arithmetic, an error where the result does not fit") {
    // found by fuzz_onnx_model: dilation*(kernel - 1) + 1 and pads_end + stride were plain int64 arithmetic
    ShapeEnv env;
    const std::int64_t big = std::numeric_limits<std::int64_t>::max(), small = std::numeric_limits<std::int64_t>::min();
    const TensorInfo x = TensorInfo::of(elem::float32, {1, 1, 5});
    const TensorInfo w = TensorInfo::of(elem::float32, {1, 1, 3});
    CHECK(test::error_of<value_error>([&] { run(env, "Conv", 17, {&x, &w}, {{"strides", ints({0})}}); }) == "Conv 'n': strides must be positive");
    CHECK(test::error_of<value_error>([&] { run(env, "Conv", 17, {&x, &w}, {{"kernel_shape", ints({small})}}); }) ==
          "Conv 'n': the extent of a kernel of -9223372036854775808 with dilation 1 does not fit in int64");
    CHECK(test::error_of<value_error>([&] { run(env, "MaxPool", 12, {&x}, {{"kernel_shape", ints({3})}, {"dilations", ints({big})}}); }) ==
          "MaxPool 'n': the extent of a kernel of 3 with dilation 9223372036854775807 does not fit in int64");
    CHECK(test::error_of<value_error>([&] { run(env, "ConvTranspose", 17, {&x, &w}, {{"dilations", ints({big})}}); }) ==
          "ConvTranspose 'n': the extent of a kernel of 3 with dilation 9223372036854775807 does not fit in int64");
    CHECK(test::error_of<value_error>([&] { run(env, "ConvTranspose", 17, {&x, &w}, {{"pads", ints({big, big})}}); }) ==
          "integer overflow in (-9223372036854775800) - 9223372036854775807: the result does not fit in int64");
    // ceil_mode's last-window test with an end pad near INT64_MAX
    const TensorInfo xh = TensorInfo::of(elem::float32, {1, 1, SymInt::symbol("h")});
    const Attributes pool{{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"ceil_mode", integer(1)}, {"pads", ints({0, big})}};
    CHECK(shape_of(run(env, "MaxPool", 12, {&xh}, pool)[0]) == "[1, 1, (h + 1)//2 + 4611686018427387902]");
}
