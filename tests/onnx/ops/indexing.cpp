// The rules of include/yobx/onnx/ops/indexing.hpp: Split by opset, Slice on a shifted window's mask, and the dims of Concat, Slice and Gather.
#include "../../dims_support.hpp"
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

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

// ---- the operator's dims: yobx::shape::concat, slice, gather ----

namespace {
using namespace dims_test;
using test::error_of;
}  // namespace

TEST_CASE("concat adds the axis dimensions and requires the others equal") {
    Dims d;
    CHECK(str(shape::concat(d.env, {{d.a}, {d.b}}, 0)) == "[a + b]");
    CHECK(str(shape::concat(d.env, {{5, 2}, {d.n, 2}}, 0)) == "[n + 5, 2]");
    CHECK(str(shape::concat(d.env, {{d.a, d.b}, {d.a, 3}, {d.a, d.b}}, -1)) == "[a, 2*b + 3]");
    CHECK(d.env.runtime_asserts().empty());
    // a == c is not known: it becomes a check (torch._check) and a replacement
    CHECK(str(shape::concat(d.env, {{d.a, d.b}, {d.c, d.b}}, 1)) == "[a, 2*b]");
    REQUIRE(d.env.runtime_asserts().size() == 1);
    CHECK(d.env.runtime_asserts()[0].condition.to_string() == "Eq(a, c)");
    CHECK(d.env.runtime_asserts()[0].message == "Concat: dimension 0 differs between [a, b] and [c, b]: a vs c");
    CHECK(d.env.simplify(d.c).to_string() == "a");
}

TEST_CASE("concat errors: rank mismatch, axis out of range, unequal dimensions") {
    Dims d;
    CHECK(error_of<value_error>([&] { shape::concat(d.env, {{d.a, d.b}, {d.c}}, 0); }) ==
          "Concat: inputs must have the same rank: [a, b] has rank 2, [c] has rank 1");
    CHECK(error_of<value_error>([&] { shape::concat(d.env, {{d.a, d.b}, {d.c, d.b}}, 2); }) ==
          "Concat: axis 2 is out of range for rank 2 (shapes [a, b] and [c, b]); valid axes are -2 to 1");
    CHECK(error_of<value_error>([&] { shape::concat(d.env, {{d.a, 3}, {d.a, 4}}, 0); }) ==
          "Concat: dimension 1 differs between [a, 3] and [a, 4]: 3 vs 4");
    CHECK(error_of<value_error>([&] { shape::concat(d.env, std::span<const Shape>{}, 0); }) == "Concat: no inputs");
    // undecidable but false for the hints: the check refuses it
    ShapeEnv env;
    const SymInt x = env.create_symbol("x", 3), y = env.create_symbol("y", 5);
    CHECK(error_of<runtime_error>([&] { shape::concat(env, {{x, 1}, {y, 1}}, 1); }) ==
          "check failed: Concat: dimension 0 differs between [x, 1] and [y, 1]: x vs y: Eq(x, y) is false for the hints x = 3, y = 5");
}

TEST_CASE("slice handles negative indices, clamping, steps and symbolic bounds") {
    Dims d;
    const Shape x{d.a, d.b, 10};
    CHECK(str(shape::slice(d.env, x, {1}, {int_max}, std::vector<std::int64_t>{1})) == "[a, b - 1, 10]");
    CHECK(str(shape::slice(d.env, x, {0, -3}, {1, int_max}, std::vector<std::int64_t>{0, 2})) == "[1, b, 3]");
    CHECK(str(shape::slice(d.env, x, {2}, {100}, std::vector<std::int64_t>{-1}, std::vector<std::int64_t>{3})) == "[a, b, 3]");
    CHECK(str(shape::slice(d.env, x, {-1}, {int_min}, std::vector<std::int64_t>{2}, std::vector<std::int64_t>{-1})) == "[a, b, 10]");
    CHECK(str(shape::slice(d.env, x, {-1}, {int_min}, std::vector<std::int64_t>{2}, std::vector<std::int64_t>{-2})) == "[a, b, 5]");
    CHECK(str(shape::slice(d.env, x, {-1}, {0}, std::vector<std::int64_t>{0}, std::vector<std::int64_t>{-1})) == "[a - 1, b, 10]");
    CHECK(str(shape::slice(d.env, x, {0}, {d.n})) == "[Min(a, n), b, 10]");
    CHECK(str(shape::slice(d.env, {d.a + d.n}, {d.a}, {int_max})) == "[n]");
    CHECK(str(shape::slice(d.env, x, {d.b - 1}, {d.b + 5}, std::vector<std::int64_t>{1})) == "[a, 1, 10]");
    CHECK(str(shape::slice(d.env, x, {4}, {2})) == "[0, b, 10]");
}

TEST_CASE("Slice reads an index of magnitude 2^62 or more as an end of the dimension, and a step that large as one element at most") {
    ShapeEnv env;
    const SymInt w = env.create_symbol("w", 5, ValueRange::at_least(1));
    const std::int64_t far = std::int64_t{1} << 62;
    const auto one = [](std::int64_t v) { return std::vector<std::int64_t>{v}; };
    // torch.onnx's flip: starts -1, ends -INT64_MAX, steps -1 reverses the whole dimension
    CHECK(str(shape::slice(env, {w}, {-1}, {-int_max}, std::nullopt, one(-1))) == "[w]");
    CHECK(str(shape::slice(env, {w}, {-1}, {-far}, std::nullopt, one(-2))) == "[(w + 1)//2]");
    CHECK(str(shape::slice(env, {w}, {int_max - 5}, {-int_max}, std::nullopt, one(-1))) == "[w]");
    CHECK(str(shape::slice(env, {w}, {-int_max}, {far}, std::nullopt, one(2))) == "[(w + 1)//2]");
    CHECK(str(shape::slice(env, {w}, {far}, {0}, std::nullopt, one(1))) == "[0]");
    CHECK(str(shape::slice(env, {w}, {-far}, {0}, std::nullopt, one(-1))) == "[0]");
    // below 2^62 an end stays compared with the dimension, which has no upper bound
    CHECK(str(shape::slice(env, {w}, {0}, {far - 1})) == "[Min(4611686018427387903, w)]");
    // a step past every dimension takes the first element of a non-empty slice
    CHECK(str(shape::slice(env, {w}, {0}, {int_max}, std::nullopt, one(int_max))) == "[1]");
    CHECK(str(shape::slice(env, {w}, {-1}, {int_min}, std::nullopt, one(int_min))) == "[1]");
    CHECK(str(shape::slice(env, {w}, {2}, {int_max}, std::nullopt, one(far))) == "[Min(1, w - Min(2, w))]");
    const Shape from_two = shape::slice(env, {w}, {2}, {int_max}, std::nullopt, one(far));
    for (const std::int64_t v : {1, 2, 3, 100}) CHECK(from_two[0].evaluate_with({{"w", v}}) == (v > 2 ? 1 : 0));
}

TEST_CASE("Slice reads an end of exactly INT32_MAX or INT64_MAX as numpy's None, as onnxruntime runs it") {
    ShapeEnv env;
    const SymInt w = env.create_symbol("w", 5, ValueRange::at_least(1));
    const std::int64_t i32 = std::numeric_limits<std::int32_t>::max();
    const auto one = [](std::int64_t v) { return std::vector<std::int64_t>{v}; };
    // backwards through the first element: onnxruntime takes [4, 3, 2, 1, 0] of 5 elements
    // where ONNX's reference clamps the end to d - 1 and takes nothing
    CHECK(str(shape::slice(env, {w}, {-1}, {int_max}, std::nullopt, one(-1))) == "[w]");
    CHECK(str(shape::slice(env, {w}, {int_max}, {i32}, std::nullopt, one(-1))) == "[w]");
    CHECK(str(shape::slice(env, {w}, {-1}, {int_max}, std::nullopt, one(-2))) == "[(w + 1)//2]");
    CHECK(str(shape::slice(env, {w}, {2}, {int_max}, std::nullopt, one(-1))) == "[Min(3, w)]");
    CHECK(str(shape::slice(env, {w + 4}, {w}, {i32}, std::nullopt, one(-1))) == "[w + 1]");
    // forwards through the last element: INT32_MAX no longer stays as Min(2147483647, w)
    CHECK(str(shape::slice(env, {w}, {1}, {i32})) == "[w - 1]");
    CHECK(str(shape::slice(env, {w}, {0}, {i32}, std::nullopt, one(3))) == "[(w + 2)//3]");
    // any other large end is clamped as ONNX says: backwards from d - 1, nothing is taken
    CHECK(str(shape::slice(env, {w}, {-1}, {int_max - 1}, std::nullopt, one(-1))) == "[0]");
    CHECK(str(shape::slice(env, {w}, {-1}, {i32 - 1}, std::nullopt, one(-1))) == "[w - Min(2147483647, w)]");
    // values of a shape tensor follow the same reading
    CHECK(onnx::ops::slice_indices(5, 4, int_max, -1) == std::vector<std::int64_t>{4, 3, 2, 1, 0});
    CHECK(onnx::ops::slice_indices(5, -1, i32, -2) == std::vector<std::int64_t>{4, 2, 0});
    CHECK(onnx::ops::slice_indices(5, 4, int_max - 1, -1).empty());
    CHECK(onnx::ops::slice_indices(5, 1, i32, 1) == std::vector<std::int64_t>{1, 2, 3, 4});
}

TEST_CASE("Slice with a negative step clamps a start before the first element to 0, as ONNX does (numpy takes nothing)") {
    // ONNX's shape inference gives [1] for starts=-2, ends=INT64_MIN, steps=-2 on [1]; numpy's x[-2::-2] is empty
    ShapeEnv env;
    CHECK(str(shape::slice(env, {1}, {-2}, {int_min}, std::vector<std::int64_t>{0}, std::vector<std::int64_t>{-2})) == "[1]");
    CHECK(str(shape::slice(env, {5}, {-9}, {int_min}, std::nullopt, std::vector<std::int64_t>{-1})) == "[1]");
    // symbolic: the start n - 2 is clamped to [0, n - 1]
    const SymInt n = env.create_symbol("n", 1, ValueRange::at_least(1));
    const Shape sliced = shape::slice(env, {n}, {-2}, {int_min}, std::nullopt, std::vector<std::int64_t>{-2});
    CHECK(str(sliced) == "[Max(2, n)//2]");  // Max(0, n - 2)//2 + 1
    for (const std::int64_t v : {1, 2, 3, 6}) CHECK(sliced[0].evaluate_with({{"n", v}}) == (v - 2 <= 0 ? 1 : (v - 2) / 2 + 1));
    // an empty dimension gives nothing whatever the step (its clamp range [0, -1] is empty)
    CHECK(str(shape::slice(env, {0}, {-2}, {int_min}, std::nullopt, std::vector<std::int64_t>{-1})) == "[0]");
    CHECK(str(shape::slice(env, {0}, {3}, {-9}, std::nullopt, std::vector<std::int64_t>{-1})) == "[0]");
    // and the values of a shape tensor follow the same rule
    CHECK(onnx::ops::slice_indices(1, -2, std::numeric_limits<std::int64_t>::min(), -2) == std::vector<std::int64_t>{0});
    CHECK(onnx::ops::slice_indices(5, -9, -9, -1) == std::vector<std::int64_t>{0});  // [0, 4] and [-1, 4]: element 0
    CHECK(onnx::ops::slice_indices(5, 9, 1, -2) == std::vector<std::int64_t>{4, 2});
    CHECK(onnx::ops::slice_indices(0, 3, -9, -1).empty());
}

TEST_CASE("slice asks the ShapeEnv for the sign of an index it cannot place") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 4, ValueRange::at_least(2));
    const SymInt i = env.create_symbol("i", -1, ValueRange::unknown());
    const std::string msg = error_of<GuardOnDataDependentSymNode>([&] { shape::slice(env, {a}, {i}, {int_max}); });
    CHECK(msg.find("Could not guard on data-dependent expression i < 0 (hints: i = -1)") == 0);
    ShapeEnv draft(ShapeEnvMode::draft);
    const SymInt a2 = draft.create_symbol("a", 4, ValueRange::at_least(2));
    const SymInt i2 = draft.create_symbol("i", -1, ValueRange::unknown());
    // i < 0 is assumed from the hint, not known: the clamps stay (Max(0, a - Min(a, x)) is a - Min(a, x))
    CHECK(str(shape::slice(draft, {a2}, {i2}, {int_max})) == "[a - Min(a, Max(0, a + i))]");
    CHECK(draft.draft_report().issues()[0].condition.to_string() == "i < 0");
}

TEST_CASE("slice errors: lengths, axis, repeated axis, step 0") {
    Dims d;
    CHECK(error_of<value_error>([&] { shape::slice(d.env, {d.a, d.b}, {0, 1}, {1}); }) ==
          "Slice: starts, ends, axes and steps must have the same length, got 2, 1, -, - for input shape [a, b]");
    CHECK(error_of<value_error>([&] { shape::slice(d.env, {d.a, d.b}, {0}, {1}, std::vector<std::int64_t>{2}); }) ==
          "Slice: axis 2 is out of range for rank 2 (shape [a, b]); valid axes are -2 to 1");
    CHECK(error_of<value_error>([&] { shape::slice(d.env, {d.a, d.b}, {0, 0}, {1, 1}, std::vector<std::int64_t>{1, -1}); }) ==
          "Slice: axis 1 appears twice in axes [1, -1] for input shape [a, b]");
    CHECK(error_of<value_error>([&] {
              shape::slice(d.env, {d.a, d.b}, {0}, {1}, std::vector<std::int64_t>{0}, std::vector<std::int64_t>{0});
          }) == "Slice: step 0 at axis 0 for input shape [a, b]");
}

TEST_CASE("gather replaces the axis by the indices' shape") {
    Dims d;
    CHECK(str(shape::gather({d.a, d.b, d.c}, {}, 1)) == "[a, c]");
    CHECK(str(shape::gather({d.a, d.b}, {d.n, 2}, 0)) == "[n, 2, b]");
    CHECK(str(shape::gather({d.a, d.b}, {3}, -1)) == "[a, 3]");
    CHECK(error_of<value_error>([&] { shape::gather({d.a, d.b}, {3}, -3); }) ==
          "Gather: axis -3 is out of range for rank 2 (shape [a, b]); valid axes are -2 to 1");
    CHECK(error_of<value_error>([&] { shape::gather({}, {3}, 0); }) ==
          "Gather: axis 0 is out of range for rank 0 (shape []); valid axes are none");
}
