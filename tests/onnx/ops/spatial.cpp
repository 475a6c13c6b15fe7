// The rules of include/yobx/onnx/ops/spatial.hpp: Resize, Col2Im, CenterCropPad, DepthToSpace and SpaceToDepth (and GatherND's checked arithmetic beside them).
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

TEST_CASE("Resize by scales is exact on a symbolic size, by sizes takes them") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {1, 3, SymInt::symbol("h"), 10});
    TensorInfo scales = TensorInfo::of(elem::float32, {4});
    scales.reals = std::vector<double>{1, 1, 0.5, 1.5};
    CHECK(shape_of(run(env, "Resize", 13, {&x, nullptr, &scales})[0]) == "[1, 3, h//2, 15]");
    scales.reals = std::vector<double>{1, 1, 2, 2};
    CHECK(shape_of(run(env, "Resize", 10, {&x, &scales})[0]) == "[1, 3, 2*h, 20]");
    // a dim is a size in every valid graph, whether or not the ShapeEnv proves it (h - 3 >= 0)
    const TensorInfo cropped = TensorInfo::of(elem::float32, {1, 3, SymInt::symbol("h") - 3, 10});
    scales.reals = std::vector<double>{1, 1, 0.5, 0.7};
    CHECK(shape_of(run(env, "Resize", 13, {&cropped, nullptr, &scales})[0]) == "[1, 3, (h + 1)//2 - 2, 7]");  // (h - 3)//2
    const TensorInfo sizes = ints_tensor({1, 3, 7, SymInt::symbol("w")});
    CHECK(shape_of(run(env, "Resize", 13, {&x, nullptr, nullptr, &sizes})[0]) == "[1, 3, 7, w]");
}

TEST_CASE("Resize by a scale that is not a binary fraction: the float32 product the runtimes compute") {
    // onnxruntime computes static_cast<float>(d) * scale in float32: 20 * 0.7f rounds to 14, where the
    // float's exact value 11744051/2^24 gives 13.99...; 0.7f stands for 7/10 at every size up to 2^20
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {20, 10, SymInt::symbol("h"), SymInt::symbol("w")});
    TensorInfo scales = TensorInfo::of(elem::float32, {4});
    scales.reals = std::vector<double>{0.7, 0.3, 0.7, 0.3};
    CHECK(shape_of(run(env, "Resize", 13, {&x, nullptr, &scales})[0]) == "[14, 3, (7*h)//10, (3*w)//10]");
    scales.reals = std::vector<double>{1.1, 2.5, 1.0 / 3, 0.5};
    CHECK(shape_of(run(env, "Resize", 13, {&x, nullptr, &scales})[0]) == "[22, 25, h//3, w//2]");
    for (const double s : {0.7, 0.3, 1.1, 1.0 / 3, 0.9, 1.7, 0.1, 2.0 / 3}) {
        scales.reals = std::vector<double>{1, 1, s, 1};
        const SymInt h = run(env, "Resize", 13, {&x, nullptr, &scales})[0]->shape->at(2);
        std::int64_t wrong = 0;
        for (std::int64_t v = 0; v <= 5000; ++v)
            wrong += h.evaluate_with({{"h", v}}) != static_cast<std::int64_t>(static_cast<float>(v) * static_cast<float>(s));
        CHECK_MESSAGE(wrong == 0, "scale " << s << " written " << h.to_string());
    }
}

TEST_CASE("Resize with keep_aspect_ratio_policy: one scale for every axis, checked sizes") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {1, 3, 4, 4});
    const auto resize = [&](const TensorInfo& sizes, const char* policy) {
        return run(env, "Resize", 18, {&x, nullptr, nullptr, &sizes}, {{"keep_aspect_ratio_policy", text(policy)}});
    };
    const TensorInfo sizes = ints_tensor({1, 3, 8, 6});
    CHECK(shape_of(resize(sizes, "not_larger")[0]) == "[1, 3, 4, 4]");
    CHECK(shape_of(resize(sizes, "not_smaller")[0]) == "[2, 6, 8, 8]");
    // fewer sizes than axes were read past their end; a size past int64 or below 0 was an undefined cast
    const TensorInfo two = ints_tensor({8, 8});
    CHECK(test::error_of<value_error>([&] { resize(two, "not_larger"); }) == "Resize 'n': sizes has 2 values for 4 axes");
    const TensorInfo huge = ints_tensor({1, 3, std::numeric_limits<std::int64_t>::max(), 4});
    CHECK(test::error_of<value_error>([&] { resize(huge, "not_smaller"); }) ==
          "Resize 'n': keep_aspect_ratio_policy scales 4 to 9223372036854775808.000000, not a dimension");
    const TensorInfo negative = ints_tensor({1, 3, -8, 4});
    CHECK(test::error_of<value_error>([&] { resize(negative, "not_larger"); }) ==
          "Resize 'n': keep_aspect_ratio_policy scales 1 to -2.000000, not a dimension");
    // a scale of a negative dimension (a malformed input) past int64's range
    const TensorInfo bad = TensorInfo::of(elem::float32, {1, 3, -4, 4});
    TensorInfo scales = TensorInfo::of(elem::float32, {4});
    scales.reals = std::vector<double>{1, 1, 1e30, 1};
    CHECK(test::error_of<value_error>([&] { run(env, "Resize", 13, {&bad, nullptr, &scales}); }) ==
          "Resize 'n': scale 1000000000000000019884624838656.000000 of -4 overflows");
}

TEST_CASE("Resize with keep_aspect_ratio_policy on symbolic dims: the resized axes fresh, the others kept") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {SymInt::symbol("n"), 4, SymInt::symbol("h"), SymInt::symbol("w")});
    const TensorInfo sizes = ints_tensor({29, 23});
    const auto out = run(env, "Resize", 18, {&x, nullptr, nullptr, &sizes}, {{"keep_aspect_ratio_policy", text("not_larger")}, {"axes", ints({2, 3})}});
    CHECK(shape_of(out[0]) == "[n, 4, unk__0, unk__1]");
}

TEST_CASE("Col2Im and CenterCropPad take their sizes from the values of shape computations") {
    ShapeEnv env;
    const SymInt n = SymInt::symbol("n"), h = SymInt::symbol("h"), w = SymInt::symbol("w");
    const TensorInfo cols = TensorInfo::of(elem::float32, {n, 12, h * w});
    const TensorInfo image = ints_tensor({h + 1, w + 1});
    const TensorInfo block = ints_tensor({2, 2});
    CHECK(shape_of(run(env, "Col2Im", 18, {&cols, &image, &block})[0]) == "[n, 3, h + 1, w + 1]");
    const TensorInfo unknown_image = TensorInfo::of(elem::int64, {2});
    CHECK(shape_of(run(env, "Col2Im", 18, {&cols, &unknown_image, &block})[0]) == "[n, 3, unk__0, unk__1]");
    const TensorInfo zero = ints_tensor({0, 2});
    CHECK(test::error_of<value_error>([&] { run(env, "Col2Im", 18, {&cols, &image, &zero}); }) == "Col2Im 'n': block_shape [0, 2] is not a block");
    const TensorInfo flat = TensorInfo::of(elem::float32, {n, 12});
    CHECK(test::error_of<value_error>([&] { run(env, "Col2Im", 18, {&flat, &image, &block}); }) ==
          "Col2Im 'n': input must be [N, C*prod(block_shape), L], got [n, 12]");

    const TensorInfo x = TensorInfo::of(elem::float32, {n, 3, h, w});
    const TensorInfo crop = ints_tensor({5, w - 1});
    CHECK(shape_of(run(env, "CenterCropPad", 18, {&x, &crop}, {{"axes", ints({-2, -1})}})[0]) == "[n, 3, 5, w - 1]");
    CHECK(test::error_of<value_error>([&] { run(env, "CenterCropPad", 18, {&x, &crop}); }) == "CenterCropPad 'n': shape has 2 values for 4 axes");
}

TEST_CASE("block and gather attributes of any int64: checked arithmetic") {
    // the same class as the window attributes: blocksize*blocksize and batch_dims + index length
    // were plain int64 arithmetic
    ShapeEnv env;
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const TensorInfo x4 = TensorInfo::of(elem::float32, {1, 8, 4, 4});
    CHECK(shape_of(run(env, "DepthToSpace", 13, {&x4}, {{"blocksize", integer(2)}})[0]) == "[1, 2, 8, 8]");
    CHECK(shape_of(run(env, "SpaceToDepth", 13, {&x4}, {{"blocksize", integer(2)}})[0]) == "[1, 32, 2, 2]");
    CHECK(test::error_of<value_error>([&] { run(env, "DepthToSpace", 13, {&x4}, {{"blocksize", integer(std::int64_t{1} << 32)}}); }) ==
          "integer overflow in 4294967296*4294967296: the result does not fit in int64");
    CHECK(test::error_of<value_error>([&] { run(env, "SpaceToDepth", 13, {&x4}, {{"blocksize", integer(std::int64_t{1} << 32)}}); }) ==
          "integer overflow in 4294967296*4294967296: the result does not fit in int64");
    CHECK(test::error_of<value_error>([&] { run(env, "SpaceToDepth", 13, {&x4}, {{"blocksize", integer(0)}}); }) ==
          "SpaceToDepth 'n': blocksize must be positive");
    const TensorInfo data = TensorInfo::of(elem::float32, {2, 3, 4});
    const TensorInfo one = TensorInfo::of(elem::int64, {2, 1});
    CHECK(shape_of(run(env, "GatherND", 13, {&data, &one}, {{"batch_dims", integer(1)}})[0]) == "[2, 4]");
    const TensorInfo huge = TensorInfo::of(elem::int64, {2, big});
    CHECK(test::error_of<value_error>([&] { run(env, "GatherND", 13, {&data, &huge}, {{"batch_dims", integer(1)}}); }) ==
          "GatherND 'n': batch_dims 1 and index length 9223372036854775807 exceed the data's rank 3");
    const TensorInfo negative = TensorInfo::of(elem::int64, {2, -1});
    CHECK(test::error_of<value_error>([&] { run(env, "GatherND", 13, {&data, &negative}); }) ==
          "GatherND 'n': the last dimension of the indices must be >= 0, got -1");
}
