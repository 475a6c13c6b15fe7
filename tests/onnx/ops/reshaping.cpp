// The rules of include/yobx/onnx/ops/reshaping.hpp: shape computations, Squeeze, Unsqueeze, Reshape and Transpose on torch's patterns, and the dims of Reshape, Squeeze, Unsqueeze, Transpose, Expand and Shape.
#include "../../dims_support.hpp"
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

// ---- the operator's dims: yobx::shape::reshape, squeeze, unsqueeze, transpose, expand, shape_values ----

namespace {
using namespace dims_test;
using test::error_of;
}  // namespace

TEST_CASE("reshape copies 0, infers -1 and keeps symbolic dimensions") {
    Dims d;
    CHECK(str(shape::reshape(d.env, {d.a, d.b, d.c}, {d.a, -1})) == "[a, b*c]");
    CHECK(str(shape::reshape(d.env, {d.a, d.b, d.c}, {0, -1})) == "[a, b*c]");
    CHECK(str(shape::reshape(d.env, {d.a, d.b, 6}, {-1, 3})) == "[2*a*b, 3]");
    CHECK(str(shape::reshape(d.env, {d.a, d.b, 6}, {0, 0, 2, 3})) == "[a, b, 2, 3]");
    CHECK(d.env.runtime_asserts().empty());
    CHECK(str(shape::reshape(d.env, {d.a, d.b, d.c}, {0, 0, 2, -1})) == "[a, b, 2, c//2]");
    REQUIRE(d.env.runtime_asserts().size() == 1);
    CHECK(d.env.runtime_asserts()[0].condition.to_string() == "Eq(Mod(c, 2), 0)");
    CHECK(str(shape::reshape(d.env, {d.a, d.b}, {d.b, d.a})) == "[b, a]");
    CHECK(str(shape::reshape(d.env, {2 * d.a, d.b}, {d.a, 2, d.b})) == "[a, 2, b]");
}

TEST_CASE("reshape proves the element counts on the dims left once those on both sides cancel") {
    // x//4 - x//8 and (x + 4)//8 are equal, which the ShapeEnv proves of their difference (one
    // symbol), not of b times it: the counts compared whole recorded the check
    // Eq(b*(x//4), b*(x//8) + b*((x + 4)//8))
    ShapeEnv env;
    const SymInt b = env.create_symbol("b", 2, ValueRange::at_least(1)), x = env.create_symbol("x", 20, ValueRange::at_least(4));
    CHECK(str(shape::reshape(env, {b, floordiv(x, 4) - floordiv(x, 8), 3}, {b, 3, floordiv(x + 4, 8)})) == "[b, 3, (x + 4)//8]");
    CHECK(env.runtime_asserts().empty());
    // what is left differing, the whole counts decide: a count that differs is refused with them
    CHECK(error_of<value_error>([&] { shape::reshape(env, {b, 3}, {b, 2}); }) ==
          "Reshape: cannot reshape [b, 3] (3*b elements) into [b, 2] (2*b elements)");
}

TEST_CASE("reshape with allowzero keeps 0 as a size") {
    Dims d;
    CHECK(str(shape::reshape(d.env, {0, d.a}, {d.a, 0}, true)) == "[a, 0]");
    CHECK(str(shape::reshape(d.env, {0, d.a}, {0, d.a}, false)) == "[0, a]");
    CHECK(str(shape::reshape(d.env, {0, d.a}, {0, 5}, false)) == "[0, 5]");
}

TEST_CASE("reshape errors: two -1, impossible sizes, bad values, 0 beyond the rank") {
    Dims d;
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {d.a, d.b}, {-1, 4, -1}); }) ==
          "Reshape: more than one -1 in the target shape [-1, 4, -1] for input shape [a, b]");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {2, 3}, {4, 2}); }) ==
          "Reshape: cannot reshape [2, 3] (6 elements) into [4, 2] (8 elements)");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {2, 3}, {4, -1}); }) ==
          "Reshape: cannot reshape [2, 3] (6 elements) into [4, -1]: 6 is not a multiple of 4");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {d.a, 3}, {d.a, 2, -1}); }) ==
          "Reshape: cannot reshape [a, 3] (3*a elements) into [a, 2, -1]: 3*a is not a multiple of 2*a");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {d.a, d.b}, {3, -2}); }) ==
          "Reshape: invalid value -2 at position 1 of the target shape [3, -2] for input shape [a, b]; only -1 "
          "(inferred) and 0 (copy) are special");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {d.a, d.b}, {d.b, d.a, 0}); }) ==
          "Reshape: 0 at position 2 copies dimension 2 of the input, but the input has rank 2 (target shape [b, a, 0] "
          "for input shape [a, b])");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {0, 4}, {0, -1}, true); }) ==
          "Reshape: with allowzero, the target shape [0, -1] for input shape [0, 4] cannot hold both 0 and -1");
    CHECK(error_of<value_error>([&] { shape::reshape(d.env, {0, 4}, {0, -1}); }) ==
          "Reshape: the -1 in the target shape [0, -1] for input shape [0, 4] is ambiguous: the other dimensions multiply to 0");
}

TEST_CASE("reshape to a symbolic entry that may be 0 asks the ShapeEnv") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 4, ValueRange::at_least(1));
    const SymInt k = env.create_symbol("k", 2);  // range [0, oo]: 0 would mean "copy"
    const std::string msg = error_of<GuardOnDataDependentSymNode>([&] { shape::reshape(env, {a, 2}, {k, -1}); });
    CHECK(msg.find("Could not guard on data-dependent expression Eq(k, 0) (hints: k = 2)") == 0);
    CHECK(str(shape::reshape(env, {a, 2, k}, {k, 2, a}, true)) == "[k, 2, a]");  // allowzero: nothing to ask
    ShapeEnv draft(ShapeEnvMode::draft);
    const SymInt a2 = draft.create_symbol("a", 4, ValueRange::at_least(1));
    const SymInt k2 = draft.create_symbol("k", 2);
    CHECK(str(shape::reshape(draft, {a2, 2}, {k2, -1})) == "[k, (2*a)//k]");
    CHECK(draft.draft_report().issues()[0].condition.to_string() == "Eq(k, 0)");
    CHECK(draft.runtime_asserts().back().condition.to_string() == "Eq(Mod(2*a, k), 0)");
}

TEST_CASE("squeeze removes the given axes, or every dimension that is 1") {
    Dims d;
    CHECK(str(shape::squeeze(d.env, {d.a, 1, d.b, 1}, std::vector<std::int64_t>{1})) == "[a, b, 1]");
    CHECK(str(shape::squeeze(d.env, {d.a, 1, d.b, 1}, std::vector<std::int64_t>{-1, 1})) == "[a, b]");
    CHECK(str(shape::squeeze(d.env, {d.a, 1, d.b, 1})) == "[a, b]");
    CHECK(d.env.runtime_asserts().empty());
}

TEST_CASE("squeeze of a symbolic dimension: a check with axes, a guard without") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 1, ValueRange::at_least(1));
    CHECK(str(shape::squeeze(env, {a, 3}, std::vector<std::int64_t>{0})) == "[3]");
    CHECK(env.runtime_asserts()[0].condition.to_string() == "Eq(a, 1)");
    ShapeEnv strict;
    const SymInt s = strict.create_symbol("s", 1, ValueRange::at_least(1));
    CHECK(error_of<GuardOnDataDependentSymNode>([&] { shape::squeeze(strict, {s, 3}); }).find("Eq(s, 1)") != std::string::npos);
}

TEST_CASE("squeeze errors: a dimension that is not 1, an axis out of range, a repeated axis") {
    Dims d;
    CHECK(error_of<value_error>([&] { shape::squeeze(d.env, {d.a, 3}, std::vector<std::int64_t>{1}); }) ==
          "Squeeze: dimension 1 of [a, 3] is 3, not 1");
    CHECK(error_of<value_error>([&] { shape::squeeze(d.env, {d.a, 3}, std::vector<std::int64_t>{0}); }) ==
          "Squeeze: dimension 0 of [a, 3] is a, not 1");  // a >= 2
    CHECK(error_of<value_error>([&] { shape::squeeze(d.env, {d.a, 1}, std::vector<std::int64_t>{2}); }) ==
          "Squeeze: axis 2 is out of range for rank 2 (shape [a, 1]); valid axes are -2 to 1");
    CHECK(error_of<value_error>([&] { shape::squeeze(d.env, {d.a, 1}, std::vector<std::int64_t>{1, -1}); }) ==
          "Squeeze: axis -1 appears twice in axes [1, -1] for input shape [a, 1]");
}

TEST_CASE("unsqueeze inserts ones at output positions") {
    Dims d;
    CHECK(str(shape::unsqueeze({d.a, d.b}, {0, -1})) == "[1, a, b, 1]");
    CHECK(str(shape::unsqueeze({d.a, d.b}, {1})) == "[a, 1, b]");
    CHECK(str(shape::unsqueeze({}, {0})) == "[1]");
    CHECK(error_of<value_error>([&] { shape::unsqueeze({d.a}, {2}); }) ==
          "Unsqueeze: axis 2 is out of range for output rank 2 (shape [a]); valid axes are -2 to 1");
    CHECK(error_of<value_error>([&] { shape::unsqueeze({d.a}, {0, -3}); }) ==
          "Unsqueeze: axis -3 appears twice in axes [0, -3] for input shape [a]");
}

TEST_CASE("transpose permutes, reversing by default") {
    Dims d;
    CHECK(str(shape::transpose({d.a, d.b, d.c}, std::vector<std::int64_t>{0, 2, 1})) == "[a, c, b]");
    CHECK(str(shape::transpose({d.a, d.b, 3})) == "[3, b, a]");
    for (const auto& perm : {std::vector<std::int64_t>{0, 0}, std::vector<std::int64_t>{0}, std::vector<std::int64_t>{0, 2}})
        CHECK(error_of<value_error>([&] { shape::transpose({d.a, d.b}, perm); }) ==
              "Transpose: perm " + shape::detail::format_ints(perm) + " is not a permutation of the 2 axes of input shape [a, b]");
}

TEST_CASE("expand broadcasts both ways") {
    Dims d;
    CHECK(str(shape::expand(d.env, {d.a, 1}, {1, d.b})) == "[a, b]");
    CHECK(str(shape::expand(d.env, {d.b}, {d.a, 1, 1})) == "[a, 1, b]");
    CHECK(error_of<value_error>([&] { shape::expand(d.env, {3}, {2, 4}); }) ==
          "Expand: shapes [3] and [2, 4] cannot be broadcast: at output dimension 1, 3 and 4 are not equal and neither is 1");
    // Found by the generated graphs: a 1 expanded to -2 broadcast to -2, and the values' length overflowed.
    CHECK(error_of<value_error>([&] { shape::expand(d.env, {1}, {-2}); }) ==
          "Expand: invalid value -2 at position 0 of the target shape [-2]; dimensions cannot be negative");
}

TEST_CASE("shape_values with start and end, and numel") {
    Dims d;
    const Shape x{d.a, d.b, 3};
    CHECK(str(shape::shape_values(x)) == "[a, b, 3]");
    CHECK(str(shape::shape_values(x, 1)) == "[b, 3]");
    CHECK(str(shape::shape_values(x, -2, -1)) == "[b]");
    CHECK(str(shape::shape_values(x, -10, 10)) == "[a, b, 3]");
    CHECK(str(shape::shape_values(x, 2, 1)) == "[]");
    CHECK(shape::numel(x).to_string() == "3*a*b");
}
