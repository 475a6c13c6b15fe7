// The rules of include/yobx/onnx/ops/tensor.hpp: shape computations, Split, Squeeze, Resize, Col2Im, Reshape and Slice on torch's patterns.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

TEST_CASE("Shape -> Gather -> Unsqueeze -> Concat -> Reshape keeps the symbols") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {SymInt::symbol("a"), SymInt::symbol("b"), SymInt::symbol("c")});
    const auto s = run(env, "Shape", 17, {&x});
    CHECK(values_of(s[0]) == "[a, b, c]");
    const TensorInfo zero = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{0});
    const auto g = run(env, "Gather", 17, {&*s[0], &zero});
    CHECK(shape_of(g[0]) == "[]");
    CHECK(values_of(g[0]) == "[a]");
    const TensorInfo axes = ints_tensor({0});
    const auto u = run(env, "Unsqueeze", 17, {&*g[0], &axes});
    const TensorInfo minus_one = ints_tensor({-1});
    const auto c = run(env, "Concat", 17, {&*u[0], &minus_one}, {{"axis", integer(0)}});
    CHECK(values_of(c[0]) == "[a, -1]");
    const auto r = run(env, "Reshape", 17, {&x, &*c[0]});
    CHECK(shape_of(r[0]) == "[a, b*c]");
}

TEST_CASE("Split by opset: an attribute, an input, num_outputs") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {10, SymInt::symbol("n")});
    auto out = run(env, "Split", 11, {&x}, {{"split", ints({3, 7})}}, 2);
    CHECK(shape_of(out[0]) == "[3, n]");
    CHECK(shape_of(out[1]) == "[7, n]");
    const TensorInfo sizes = ints_tensor({6, 4});
    out = run(env, "Split", 13, {&x, &sizes}, {}, 2);
    CHECK(shape_of(out[1]) == "[4, n]");
    out = run(env, "Split", 18, {&x}, {{"num_outputs", integer(3)}}, 3);
    CHECK(shape_of(out[0]) == "[4, n]");
    CHECK(shape_of(out[2]) == "[2, n]");
    out = run(env, "Split", 18, {&x}, {{"axis", integer(1)}, {"num_outputs", integer(2)}}, 2);
    CHECK(shape_of(out[0]) == "[10, (n + 1)//2]");
    CHECK(shape_of(out[1]) == "[10, n - (n + 1)//2]");
    CHECK(test::error_of<value_error>([&] { run(env, "Split", 11, {&x}, {{"split", ints({3, 7})}}, 3); }) == "Split 'n': split has 2 entries for 3 outputs");
    // values split into more outputs than they have: the parts 1, 1, 0 (values kept), or a negative last part
    const TensorInfo two = ints_tensor({7, 8});
    out = run(env, "Split", 18, {&two}, {{"num_outputs", integer(3)}}, 3);
    CHECK(values_of(out[1]) == "[8]");
    CHECK(shape_of(out[2]) == "[0]");
    CHECK(values_of(out[2]) == "[]");
    const TensorInfo one = ints_tensor({7});
    CHECK(test::error_of<value_error>([&] { run(env, "Split", 18, {&one}, {{"num_outputs", integer(3)}}, 3); }) ==
          "Split 'n': output 2 would have a negative dimension: [-1]");
}

TEST_CASE("Squeeze and Unsqueeze: axes an attribute before opset 13, an input since") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {SymInt::symbol("a"), 1, 4});
    CHECK(shape_of(run(env, "Squeeze", 11, {&x}, {{"axes", ints({1})}})[0]) == "[a, 4]");
    const TensorInfo axes = ints_tensor({-2});
    CHECK(shape_of(run(env, "Squeeze", 13, {&x, &axes})[0]) == "[a, 4]");
    CHECK(shape_of(run(env, "Unsqueeze", 11, {&x}, {{"axes", ints({0})}})[0]) == "[1, a, 1, 4]");
    const TensorInfo unknown = TensorInfo::of(elem::int64, {1});
    CHECK_THROWS_AS(run(env, "Squeeze", 13, {&x, &unknown}), UnknownInput);
}

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

TEST_CASE("torch's dynamic pads: values of rank 2 moved by Reshape, a backward Slice and Transpose") {
    // F.pad(x, (0, 0, 0, pw, 0, ph)) exported: the pads [0, 0, 0, pw, 0, ph, 0, 0] as
    // [4, 2] pairs, reversed, transposed and flattened to ONNX's begins-then-ends
    ShapeEnv env;
    const SymInt ph = SymInt::symbol("ph"), pw = SymInt::symbol("pw");
    const TensorInfo pads = ints_tensor({0, 0, 0, pw, 0, ph, 0, 0});
    const TensorInfo pairs_shape = ints_tensor({-1, 2});
    auto pairs = run(env, "Reshape", 17, {&pads, &pairs_shape});
    CHECK(shape_of(pairs[0]) == "[4, 2]");
    CHECK(values_of(pairs[0]) == "[0, 0, 0, pw, 0, ph, 0, 0]");
    const TensorInfo start = ints_tensor({-1}), end = ints_tensor({-9223372036854775807LL}), axes = ints_tensor({0}), steps = ints_tensor({-1});
    auto reversed = run(env, "Slice", 17, {&*pairs[0], &start, &end, &axes, &steps});
    CHECK(values_of(reversed[0]) == "[0, 0, 0, ph, 0, pw, 0, 0]");
    auto transposed = run(env, "Transpose", 17, {&*reversed[0]}, {{"perm", ints({1, 0})}});
    CHECK(shape_of(transposed[0]) == "[2, 4]");
    CHECK(values_of(transposed[0]) == "[0, 0, 0, 0, 0, ph, pw, 0]");
    const TensorInfo flat_shape = ints_tensor({-1});
    auto flat = run(env, "Reshape", 17, {&*transposed[0], &flat_shape});
    CHECK(values_of(flat[0]) == "[0, 0, 0, 0, 0, ph, pw, 0]");
    // a Cast and an Identity keep a block; rules that read sizes never see one
    auto cast = run(env, "Cast", 17, {&*pairs[0]}, {{"to", integer(elem::int32)}});
    CHECK(values_of(cast[0]) == "[0, 0, 0, pw, 0, ph, 0, 0]");
    auto same = run(env, "Identity", 17, {&*pairs[0]});
    CHECK(values_of(same[0]) == "[0, 0, 0, pw, 0, ph, 0, 0]");
    auto sum = run(env, "Add", 17, {&*pairs[0], &*pairs[0]});
    CHECK(shape_of(sum[0]) == "[4, 2]");
    CHECK(values_of(sum[0]) == "none");
}

TEST_CASE("a window partition after a pad to a multiple of 7 keeps every dim") {
    // swin's window partition: x [b, h, w, c] padded to multiples of 7 and viewed as
    // [b, ph//7, 7, pw//7, 7, c], then [b*(ph//7)*(pw//7), 49, c]
    ShapeEnv env;
    const SymInt b = env.create_symbol("batch", std::nullopt, ValueRange::at_least(1));
    const SymInt hgt = env.create_symbol("height", std::nullopt, ValueRange::at_least(1));
    TensorInfo image = TensorInfo::of(elem::float32, {b, 3, hgt, hgt});
    const TensorInfo weight = TensorInfo::of(elem::float32, {96, 3, 4, 4});
    auto patches = run(env, "Conv", 17, {&image, &weight}, {{"strides", ints({4, 4})}});
    CHECK(shape_of(patches[0]) == "[batch, 96, height//4, height//4]");
    // the convolution's output is not empty where onnxruntime runs it
    CHECK(env.range("height").to_string() == "[4, oo]");
    const SymInt h = floordiv(hgt, 4);
    const SymInt padded = env.simplify(h + mod(6 * h, 7));  // h + (7 - h % 7) % 7
    const TensorInfo x = TensorInfo::of(elem::float32, {b, padded, padded, 96});
    const SymInt n = env.simplify(floordiv(padded, 7));
    const TensorInfo target = ints_tensor({b, n, 7, n, 7, 96});
    auto windows = run(env, "Reshape", 17, {&x, &target});
    CHECK(shape_of(windows[0]) == "[batch, height//4 - (6*(height//4))//7, 7, height//4 - (6*(height//4))//7, 7, 96]");
    // proven, not guessed: strict mode takes it too
    auto strict = run(env, "Reshape", 17, {&x, &target}, {}, 1, BroadcastPolicy::strict);
    CHECK(shape_of(strict[0]) == shape_of(windows[0]));
    const TensorInfo moved = TensorInfo::of(elem::float32, {b, n, n, 7, 7, 96});
    const TensorInfo flat = ints_tensor({env.simplify(b * n * n), 49, 96});
    auto out = run(env, "Reshape", 17, {&moved, &flat});
    CHECK(shape_of(out[0]) == "[" + env.simplify(b * n * n).to_string() + ", 49, 96]");
    // the batch back from the windows: an exact integer Div
    const TensorInfo count = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{env.simplify(b * n * n)});
    const TensorInfo windows_count = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{env.simplify(n * n)});
    auto batch = run(env, "Div", 17, {&count, &windows_count});
    CHECK(values_of(batch[0]) == "[batch]");
}

TEST_CASE("a shifted window's mask: the slices of the padded size have the sizes the convolution's fact gives") {
    // swin's attention mask: zeros [ph, pw] sliced at (0, -7), (-7, -3), (-3, None) on each
    // axis; ph is at least 7 since the patch embedding is not empty (height >= 4)
    ShapeEnv env;
    const SymInt hgt = env.create_symbol("height", std::nullopt, ValueRange::at_least(1));
    TensorInfo image = TensorInfo::of(elem::float32, {1, 3, hgt, hgt});
    const TensorInfo weight = TensorInfo::of(elem::float32, {96, 3, 4, 4});
    run(env, "Conv", 17, {&image, &weight}, {{"strides", ints({4, 4})}});
    const SymInt h = floordiv(hgt, 4);
    const SymInt padded = env.simplify(h + mod(6 * h, 7));
    const TensorInfo mask = TensorInfo::of(elem::float32, {padded, padded});
    const auto slice = [&](std::int64_t start, std::int64_t end) {
        const TensorInfo starts = ints_tensor({start}), ends = ints_tensor({end}), axes = ints_tensor({0});
        return shape_of(run(env, "Slice", 17, {&mask, &starts, &ends, &axes})[0]);
    };
    const std::string p = padded.to_string();
    CHECK(p == "height//4 + Mod(6*(height//4), 7)");
    CHECK(slice(0, -7) == "[" + p + " - 7, " + p + "]");
    CHECK(slice(-7, -3) == "[4, " + p + "]");
    CHECK(slice(-3, std::numeric_limits<std::int64_t>::max()) == "[3, " + p + "]");
    // without the fact (no convolution before), the sizes stay exact for any padded size
    ShapeEnv bare;
    const SymInt g = bare.create_symbol("height", std::nullopt, ValueRange::at_least(1));
    const SymInt q = bare.simplify(floordiv(g, 4) + mod(6 * floordiv(g, 4), 7));
    const TensorInfo any = TensorInfo::of(elem::float32, {q, q});
    const TensorInfo starts = ints_tensor({-7}), ends = ints_tensor({-3}), axes = ints_tensor({0});
    const std::string r = q.to_string();
    CHECK(shape_of(run(bare, "Slice", 17, {&any, &starts, &ends, &axes})[0]) == "[Max(-4, Max(3, " + r + ") - Max(7, " + r + ")) + 4, " + r + "]");
}

TEST_CASE("a Reshape entry that may be 0 is still the dim when the input's dim is its multiple") {
    ShapeEnv env;
    const SymInt s = env.create_symbol("s", std::nullopt, ValueRange::size());
    const SymInt padded = env.simplify(s + mod(6 * s, 7));
    const TensorInfo x = TensorInfo::of(elem::float32, {padded, 5});
    // an entry 0 copies the input's dim: here padded//7 == 0 only when padded == 0
    const TensorInfo target = ints_tensor({env.simplify(floordiv(padded, 7)), 7, 5});
    auto out = run(env, "Reshape", 17, {&x, &target});
    CHECK(shape_of(out[0]) == "[s - (6*s)//7, 7, 5]");
    // s//7 may be 0 where s is not: unknown
    const TensorInfo y = TensorInfo::of(elem::float32, {s, 5});
    const TensorInfo other = ints_tensor({env.simplify(floordiv(s, 7)), 7, 5});
    auto unknown = run(env, "Reshape", 17, {&y, &other});
    CHECK(shape_of(unknown[0]) == "[unk__0, 7, 5]");
    CHECK(test::error_of([&] { run(env, "Reshape", 17, {&y, &other}, {}, 1, BroadcastPolicy::strict); })
              .starts_with("Could not guard on data-dependent expression Eq(s//7, 0) (hints: s = ?) at "));
    // a -1 beside dims proven at least 1 is the element count's quotient
    const TensorInfo z = TensorInfo::of(elem::float32, {s, 4, 5});
    const TensorInfo infer = ints_tensor({-1, 5});
    auto inferred = run(env, "Reshape", 17, {&z, &infer});
    CHECK(shape_of(inferred[0]) == "[4*s, 5]");
}
