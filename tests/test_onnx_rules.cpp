// The ONNX operator rules on a graph built in C++, without protobuf: each rule's
// exact output, its versions by opset, data propagation and its errors.
#include <yobx/onnx/ops.hpp>

#include "error_of.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace yobx;
using namespace yobx::onnx;

namespace {

Attribute ints(std::vector<std::int64_t> v) {
    Attribute a;
    a.kind = Attribute::Kind::ints;
    a.ints = std::move(v);
    return a;
}
Attribute integer(std::int64_t v) {
    Attribute a;
    a.kind = Attribute::Kind::int_;
    a.i = v;
    return a;
}
Attribute text(std::string v) {
    Attribute a;
    a.kind = Attribute::Kind::string;
    a.s = std::move(v);
    return a;
}

/// Runs one operator of the default domain on these inputs.
std::vector<std::optional<TensorInfo>> run(ShapeEnv& env, std::string_view op, int opset, std::vector<const TensorInfo*> inputs,
                                           const Attributes& attributes = {}, std::size_t outputs = 1,
                                           BroadcastPolicy policy = BroadcastPolicy::new_symbol, std::string_view domain = "") {
    const Rule rule = default_registry().find(domain, op, opset);
    REQUIRE_MESSAGE(static_cast<bool>(rule), std::string(op));
    NodeContext ctx(env, policy, domain, op, "n", opset, std::move(inputs), attributes, outputs);
    rule(ctx);
    return ctx.outputs();
}

std::string shape_of(const std::optional<TensorInfo>& t) {
    REQUIRE(t.has_value());
    REQUIRE(t->shape.has_value());
    return format_shape(*t->shape);
}
std::string values_of(const std::optional<TensorInfo>& t) {
    REQUIRE(t.has_value());
    return t->values ? format_shape(*t->values) : "none";
}

TensorInfo ints_tensor(std::vector<SymInt> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return TensorInfo::of(elem::int64, {n}, std::move(v));
}

}  // namespace

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

TEST_CASE("Reduce with axes whose values are not known: empty, keepdims, the axes' count") {
    const TensorInfo x = TensorInfo::of(elem::float32, {SymInt::symbol("a"), 1, 4});
    const auto reduce = [&](const TensorInfo& axes, const Attributes& attributes = {}) {
        ShapeEnv env;  // fresh symbols from unk__0
        return shape_of(run(env, "ReduceSum", 13, {&x, &axes}, attributes)[0]);
    };
    const TensorInfo axis1 = ints_tensor({1});
    CHECK(reduce(axis1) == "[a, 1, 4]");
    CHECK(reduce(axis1, {{"keepdims", integer(0)}}) == "[a, 4]");
    // an axes input of shape [0] is empty: every axis reduced, or none with noop_with_empty_axes
    const TensorInfo empty = TensorInfo::of(elem::int64, {0});
    CHECK(reduce(empty) == "[1, 1, 1]");
    CHECK(reduce(empty, {{"keepdims", integer(0)}}) == "[]");
    CHECK(reduce(empty, {{"noop_with_empty_axes", integer(1)}}) == "[a, 1, 4]");
    // two axes, which not known: the rank is, a dim of 1 stays 1
    const TensorInfo two = TensorInfo::of(elem::int64, {2});
    CHECK(reduce(two) == "[unk__0, 1, unk__1]");
    CHECK(reduce(two, {{"keepdims", integer(0)}}) == "[unk__0]");
    {
        ShapeEnv env;
        const Attributes none;  // NodeContext keeps a reference to its attributes: not a temporary
        NodeContext ctx(env, BroadcastPolicy::new_symbol, "", "ReduceMean", "n", 18, {&x, &two}, none, 1);
        default_registry().find("", "ReduceMean", 18)(ctx);
        REQUIRE(ctx.fresh_symbols().size() == 2);
        CHECK(ctx.fresh_symbols()[0].why == "ReduceMean with axes whose values are not known");
    }
    // without keepdims, an unknown count or more axes than the rank leave the rank unknown
    const TensorInfo some = TensorInfo::of(elem::int64, {SymInt::symbol("k")});
    const TensorInfo five = TensorInfo::of(elem::int64, {5});
    ShapeEnv env;
    CHECK(shape_of(run(env, "ReduceMax", 18, {&x, &some})[0]) == "[unk__0, 1, unk__1]");
    CHECK_THROWS_AS(run(env, "ReduceMax", 18, {&x, &some}, {{"keepdims", integer(0)}}), UnknownInput);
    CHECK_THROWS_AS(run(env, "ReduceMax", 18, {&x, &five}, {{"keepdims", integer(0)}}), UnknownInput);
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

TEST_CASE("Range, ConstantOfShape and Where propagate the values of shape computations") {
    ShapeEnv env;
    const SymInt n = env.create_symbol("n", std::nullopt, ValueRange{1, ValueRange::inf});
    const TensorInfo start = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{2});
    const TensorInfo limit = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{n});
    const TensorInfo delta = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{3});
    CHECK(shape_of(run(env, "Range", 17, {&start, &limit, &delta})[0]) == "[n//3]");
    const TensorInfo five = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{5});
    const auto r = run(env, "Range", 17, {&start, &five, &delta});
    CHECK(values_of(r[0]) == "[2]");
    const TensorInfo shape = ints_tensor({n, 4});
    const auto c = run(env, "ConstantOfShape", 17, {&shape});
    CHECK(shape_of(c[0]) == "[n, 4]");
    CHECK(c[0]->elem_type == elem::float32);
    // Where(Equal(shape, -1), 1, shape): torch's expand pattern
    const TensorInfo target = ints_tensor({-1, n});
    const TensorInfo minus_one = ints_tensor({-1});
    const auto eq = run(env, "Equal", 17, {&target, &minus_one});
    CHECK(values_of(eq[0]) == "[1, 0]");
    const TensorInfo one = ints_tensor({1});
    CHECK(values_of(run(env, "Where", 17, {&*eq[0], &one, &target})[0]) == "[1, n]");
}

TEST_CASE("Max, Min and Sum keep the values of every input, broadcast, and none where one is not known") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", std::nullopt, ValueRange::size());
    const SymInt b = env.create_symbol("b", std::nullopt, ValueRange::size());
    const TensorInfo ab = ints_tensor({a, b}), three = ints_tensor({3}), b1 = ints_tensor({b, 1});
    CHECK(values_of(run(env, "Sum", 17, {&ab, &three, &b1})[0]) == "[a + b + 3, b + 4]");
    CHECK(values_of(run(env, "Max", 17, {&ab, &three})[0]) == "[Max(3, a), Max(3, b)]");
    CHECK(values_of(run(env, "Min", 17, {&three, &b1, &ab})[0]) == "[Min(3, a, b), Min(1, b)]");  // b may be 0
    CHECK(values_of(run(env, "Sum", 17, {&ab})[0]) == "[a, b]");
    const TensorInfo unknown = TensorInfo::of(elem::int64, {2});
    CHECK(values_of(run(env, "Sum", 17, {&ab, &three, &unknown})[0]) == "none");
    const TensorInfo abc = ints_tensor({a, b, 7});
    CHECK(test::error_of<value_error>([&] { run(env, "Max", 17, {&three, &ab, &abc}); }) ==
          "Max: shapes [1], [2] and [3] cannot be broadcast: at output dimension 0, 2 and 3 are not equal and neither is 1");
}

TEST_CASE("sizes through floats: Cast, Mul or Div by a constant, then Floor, Ceil or a Cast back, rounded as the runtimes round") {
    ShapeEnv env;
    const SymInt h = env.create_symbol("h", std::nullopt, ValueRange{0, ValueRange::inf});
    const TensorInfo hw = ints_tensor({h, 20});
    const auto cast = [&](int type, const TensorInfo& t) { return *run(env, "Cast", 17, {&t}, {{"to", integer(type)}})[0]; };
    const auto op = [&](std::string_view name, const TensorInfo& a, const TensorInfo& b) { return *run(env, name, 17, {&a, &b})[0]; };
    const auto unary = [&](std::string_view name, const TensorInfo& a) { return *run(env, name, 17, {&a})[0]; };
    const auto constant = [](int type, std::vector<double> v) {
        TensorInfo t = TensorInfo::of(type, {static_cast<std::int64_t>(v.size())});
        t.reals = std::move(v);
        return t;
    };
    const TensorInfo f = cast(elem::float32, hw);
    CHECK(values_of(f) == "[h, 20]");  // a float's integers
    // int(h * 0.7): float32's 20 * 0.7f rounds to 14, 0.7f stands for 7/10
    const TensorInfo m = op("Mul", f, constant(elem::float32, {0.7}));
    CHECK(values_of(m) == "none");  // between integers: only a rounding reads it
    CHECK(values_of(cast(elem::int64, m)) == "[(7*h)//10, 14]");
    CHECK(values_of(unary("Floor", m)) == "[(7*h)//10, 14]");
    CHECK(values_of(unary("Ceil", m)) == "[(7*h + 9)//10, 14]");
    // torch's interpolate(scale_factor=0.7) casts the product to float32 again before its Floor;
    // a cast to float64 would round it once more: not followed
    CHECK(values_of(unary("Floor", cast(elem::float32, m))) == "[(7*h)//10, 14]");
    CHECK(values_of(unary("Floor", cast(elem::float64, m))) == "none");
    // a factor per element, the constant on the left
    CHECK(values_of(cast(elem::int64, op("Mul", constant(elem::float32, {0.5, 2.5}), f))) == "[h//2, 50]");
    // math.ceil(h / 3) in float64
    const TensorInfo q = op("Div", cast(elem::float64, hw), constant(elem::float64, {3}));
    CHECK(values_of(cast(elem::int64, unary("Ceil", q))) == "[(h + 2)//3, 7]");
    // integers stay integers: (h + 1) * 2; a negative factor truncates toward zero
    const TensorInfo twice = op("Mul", op("Add", f, constant(elem::float32, {1})), constant(elem::float32, {2}));
    CHECK(values_of(twice) == "[2*h + 2, 42]");
    CHECK(values_of(cast(elem::int32, op("Mul", f, constant(elem::float32, {-0.5})))) == "[-(h//2), -10]");
    CHECK(values_of(unary("Floor", op("Mul", f, constant(elem::float32, {-0.5})))) == "[-((h + 1)//2), -10]");
    // no values where the rounding cannot be written: a symbolic divisor, a size that may be
    // negative, float16, a second scaling, Round's ties; a constant past float32's integers rounds
    CHECK(values_of(cast(elem::int64, op("Div", f, f))) == "none");
    const TensorInfo may_be_negative = cast(elem::float32, ints_tensor({h - 30}));
    CHECK(values_of(cast(elem::int64, op("Mul", may_be_negative, constant(elem::float32, {0.5})))) == "none");
    CHECK(values_of(cast(elem::float16, hw)) == "none");
    CHECK(values_of(cast(elem::int64, op("Mul", m, constant(elem::float32, {2})))) == "none");
    CHECK(values_of(unary("Round", m)) == "none");
    CHECK(values_of(unary("Round", f)) == "[h, 20]");
    CHECK(values_of(cast(elem::float32, ints_tensor({16777217, std::numeric_limits<std::int64_t>::max()}))) == "none");
    CHECK(values_of(cast(elem::float32, ints_tensor({16777217}))) == "[16777216]");
    // every rounding of every product and quotient as the float type computes it, at each size to 5000;
    // none where the float product lands on either side of an integer with no fraction to say which
    // (10 * 0.3f rounds to 3.0000002: ceil 4, where 0.3f's other multiples of 3 stay exact)
    const TensorInfo h1 = ints_tensor({h});
    std::string unwritten;
    for (const int type : {elem::float32, elem::float64})
        for (const double c : {0.7, 0.3, 1.0 / 3, 1.7, 0.1, 2.5, 0.6, 1.3})
            for (const std::string name : {"Mul", "Div"})
                for (const std::string rounding : {"Floor", "Ceil", "Cast"}) {
                    const TensorInfo x = op(name, cast(type, h1), constant(type, {c}));
                    const TensorInfo v = rounding == "Cast" ? cast(elem::int64, x) : unary(rounding, x);
                    const std::string what = name + " " + std::to_string(c).substr(0, 5) + " " + rounding + (type == elem::float32 ? " f32" : " f64");
                    if (!v.values) {
                        unwritten += (unwritten.empty() ? "" : ", ") + what;
                        continue;
                    }
                    const SymInt e = v.values->at(0);
                    std::int64_t wrong = 0;
                    for (std::int64_t n = 0; n <= 5000; ++n) {
                        const double y = type == elem::float32 ? static_cast<double>(name == "Mul" ? static_cast<float>(n) * static_cast<float>(c)
                                                                                                    : static_cast<float>(n) / static_cast<float>(c))
                                                               : (name == "Mul" ? static_cast<double>(n) * c : static_cast<double>(n) / c);
                        const double r = rounding == "Floor" ? std::floor(y) : rounding == "Ceil" ? std::ceil(y) : std::trunc(y);
                        wrong += e.evaluate_with({{"h", n}}) != static_cast<std::int64_t>(r);
                    }
                    CHECK_MESSAGE(wrong == 0, what << ": " << e.to_string());
                }
    CHECK(unwritten == "Mul 0.300 Ceil f32, Div 0.300 Floor f32, Div 0.300 Cast f32, Mul 0.600 Ceil f32, Div 0.600 Floor f32, Div 0.600 Cast f32, "
                       "Mul 1.300 Floor f32, Mul 1.300 Cast f32, Div 1.300 Ceil f32, Mul 0.700 Floor f64, Mul 0.700 Cast f64, Div 0.700 Ceil f64");
}

TEST_CASE("broadcasting two unrelated symbols: a fresh symbol by default, an error under strict") {
    ShapeEnv env;
    const TensorInfo a = TensorInfo::of(elem::float32, {SymInt::symbol("a"), 3});
    const TensorInfo b = TensorInfo::of(elem::float32, {SymInt::symbol("b"), 1});
    CHECK(shape_of(run(env, "Add", 17, {&a, &b})[0]) == "[s0, 3]");
    CHECK_THROWS_AS(run(env, "Add", 17, {&a, &b}, {}, 1, BroadcastPolicy::strict), GuardOnDataDependentSymNode);
    const TensorInfo c = TensorInfo::of(elem::float32, {4, 2});
    CHECK(test::error_of<value_error>([&] { run(env, "Mul", 17, {&a, &c}); }) ==
          "Mul: shapes [a, 3] and [4, 2] cannot be broadcast: at output dimension 1, 3 and 2 are not equal and neither is 1");
}

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
    CHECK(test::error_of<value_error>([&] { run(env, "Gather", 17, {&data, &idx}); }) == "Gather 'n': index 2 is out of range for a dimension of size 2");
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

TEST_CASE("block, gather and attention attributes of any int64: checked arithmetic") {
    // the same class as the window attributes: blocksize*blocksize, batch_dims + index length and
    // num_heads + 2*kv_num_heads were plain int64 arithmetic
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
    const TensorInfo q = TensorInfo::of(elem::float32, {1, 5, 64});
    const auto gqa = [&](std::int64_t kv_heads) {
        return run(env, "GroupQueryAttention", 1, {&q}, {{"num_heads", integer(2)}, {"kv_num_heads", integer(kv_heads)}}, 1,
                   BroadcastPolicy::new_symbol, "com.microsoft");
    };
    CHECK(shape_of(gqa(1)[0]) == "[1, 5, 32]");
    CHECK(test::error_of<value_error>([&] { gqa(big); }) == "integer overflow in 9223372036854775807*2: the result does not fit in int64");
}

TEST_CASE("com.microsoft fusions: attention with a past, embeddings, skip layer normalization") {
    ShapeEnv env;
    const SymInt b = SymInt::symbol("batch"), s = SymInt::symbol("seq"), p = SymInt::symbol("past");
    const auto ms = [&](std::string_view op, std::vector<const TensorInfo*> in, const Attributes& a, std::size_t n) {
        return run(env, op, 1, std::move(in), a, n, BroadcastPolicy::new_symbol, "com.microsoft");
    };
    const TensorInfo x = TensorInfo::of(elem::float32, {b, s, 64});
    const TensorInfo w = TensorInfo::of(elem::float32, {64, 192});
    const TensorInfo bias = TensorInfo::of(elem::float32, {192});
    const TensorInfo past = TensorInfo::of(elem::float32, {2, b, 4, p, 16});
    auto out = ms("Attention", {&x, &w, &bias, nullptr, &past}, {{"num_heads", integer(4)}}, 2);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[2, batch, 4, past + seq, 16]");
    const TensorInfo key = TensorInfo::of(elem::float32, {b, SymInt::symbol("kv"), 64});
    const TensorInfo past_key = TensorInfo::of(elem::float32, {b, 4, p, 16});
    out = ms("MultiHeadAttention", {&x, &key, &key, nullptr, nullptr, nullptr, &past_key, &past_key}, {{"num_heads", integer(4)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[batch, 4, kv + past, 16]");
    out = ms("GroupQueryAttention", {&x, nullptr, nullptr, &past_key}, {{"num_heads", integer(2)}, {"kv_num_heads", integer(1)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 32]");
    CHECK(shape_of(out[1]) == "[batch, 4, unk__0, 16]");
    const TensorInfo ids = TensorInfo::of(elem::int64, {b, s});
    const TensorInfo word = TensorInfo::of(elem::float32, {1000, 64});
    out = ms("EmbedLayerNormalization", {&ids, nullptr, &word}, {}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[batch]");
    CHECK(out[1]->elem_type == elem::int32);
    out = ms("SkipLayerNormalization", {&x, &x}, {}, 4);
    CHECK(shape_of(out[1]) == "[batch, seq, 1]");
    CHECK(shape_of(out[3]) == "[batch, seq, 64]");
    const TensorInfo a = TensorInfo::of(elem::float32, {b, s, 64});
    out = ms("MatMulNBits", {&a}, {{"K", integer(64)}, {"N", integer(96)}}, 1);
    CHECK(shape_of(out[0]) == "[batch, seq, 96]");
    CHECK(test::error_of<value_error>([&] { ms("Attention", {&x, &w}, {}, 1); }) == "Attention 'n': attribute 'num_heads' must be positive");
}

TEST_CASE("com.microsoft quantized operators: QLinearConcat, channels-last pooling") {
    ShapeEnv env;
    const auto ms = [&](std::string_view op, std::vector<const TensorInfo*> in, const Attributes& a) {
        return run(env, op, 1, std::move(in), a, 1, BroadcastPolicy::new_symbol, "com.microsoft");
    };
    const TensorInfo scale = TensorInfo::of(elem::float32, {});
    const TensorInfo zp = TensorInfo::of(elem::uint8, {});
    const TensorInfo x = TensorInfo::of(elem::uint8, {1, 3, SymInt::symbol("h")});
    const TensorInfo y = TensorInfo::of(elem::uint8, {1, 5, SymInt::symbol("h")});
    CHECK(shape_of(ms("QLinearConcat", {&scale, &zp, &x, &scale, &zp, &y, &scale, &zp}, {{"axis", integer(1)}})[0]) == "[1, 8, h]");
    const TensorInfo nhwc = TensorInfo::of(elem::uint8, {1, SymInt::symbol("h"), 10, 8});
    const auto out = ms("QLinearAveragePool", {&nhwc, &scale, &zp, &scale, &zp},
                        {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}, {"channels_last", integer(1)}});
    CHECK(shape_of(out[0]) == "[1, h//2, 5, 8]");
}

TEST_CASE("com.microsoft packing mode, position biases, decoding attentions, NhwcConv, MatMulInteger16, GemmFloat8, MoE") {
    ShapeEnv env;
    const SymInt b = SymInt::symbol("batch"), s = SymInt::symbol("seq"), h = SymInt::symbol("h"), w = SymInt::symbol("w");
    const auto ms = [&](std::string_view op, std::vector<const TensorInfo*> in, const Attributes& a, std::size_t n = 1) {
        return run(env, op, 1, std::move(in), a, n, BroadcastPolicy::new_symbol, "com.microsoft");
    };
    // convert_to_packing_mode: RemovePadding before the first attention, RestorePadding after the last
    const TensorInfo x = TensorInfo::of(elem::float16, {b, s, 64});
    const TensorInfo mask = TensorInfo::of(elem::int32, {b});
    auto out = ms("RemovePadding", {&x, &mask}, {}, 4);
    CHECK(shape_of(out[0]) == "[unk__0, 64]");
    CHECK(out[0]->elem_type == elem::float16);
    CHECK(shape_of(out[1]) == "[batch, seq]");
    CHECK(shape_of(out[2]) == "[batch + 1]");
    CHECK(shape_of(out[3]) == "[1]");
    for (std::size_t i = 1; i < 4; ++i) CHECK(out[i]->elem_type == elem::int32);
    const TensorInfo tokens = *out[0], offset = *out[1], cumulated = *out[2];
    const TensorInfo weights = TensorInfo::of(elem::float16, {64, 192}), bias = TensorInfo::of(elem::float16, {192});
    out = ms("PackedAttention", {&tokens, &weights, &bias, &offset, &cumulated}, {{"num_heads", integer(4)}});
    CHECK(shape_of(out[0]) == "[unk__0, 64]");
    CHECK(shape_of(ms("PackedAttention", {&tokens, &weights, &bias, &offset, &cumulated},
                      {{"num_heads", integer(4)}, {"qkv_hidden_sizes", ints({64, 64, 32})}})[0]) == "[unk__0, 32]");
    const TensorInfo value = TensorInfo::of(elem::float16, {out[0]->shape->at(0), 48});
    CHECK(shape_of(ms("PackedMultiHeadAttention", {&tokens, &tokens, &value, &offset, &cumulated}, {{"num_heads", integer(4)}})[0]) ==
          "[unk__0, 48]");
    const TensorInfo packed = TensorInfo::of(elem::float16, {out[0]->shape->at(0), 4, 3, 16});
    CHECK(shape_of(ms("PackedMultiHeadAttention", {&packed, nullptr, nullptr, &offset, &cumulated}, {{"num_heads", integer(4)}})[0]) ==
          "[unk__0, 64]");
    CHECK(shape_of(ms("RestorePadding", {&tokens, &offset}, {})[0]) == "[batch, seq, 64]");
    // T5's position bias: its lengths are the values of shape computations; GatedRelativePositionBias
    const TensorInfo table = TensorInfo::of(elem::float32, {32, 8});
    const TensorInfo length = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{s});
    out = ms("RelativePositionBias", {&table, &length, &length}, {{"max_distance", integer(128)}, {"is_bidirectional", integer(1)}});
    CHECK(shape_of(out[0]) == "[1, 8, seq, seq]");
    const TensorInfo unknown = TensorInfo::of(elem::int64, {});
    CHECK(shape_of(ms("RelativePositionBias", {&table, &length, &unknown}, {})[0]) == "[1, 8, seq, unk__1]");
    const TensorInfo query = TensorInfo::of(elem::float32, {b, s, 64}), rel = TensorInfo::of(elem::float32, {1, 2, s, s});
    const TensorInfo qbias = TensorInfo::of(elem::float32, {64}), gw = TensorInfo::of(elem::float32, {32, 8});
    const TensorInfo gb = TensorInfo::of(elem::float32, {8}), eco = TensorInfo::of(elem::float32, {1, 2, 1, 1});
    CHECK(shape_of(ms("GatedRelativePositionBias", {&query, &qbias, &rel, &gw, &gb, &eco}, {{"num_heads", integer(2)}})[0]) ==
          "[batch, 2, seq, seq]");
    const TensorInfo packed_query = TensorInfo::of(elem::float32, {SymInt::symbol("tokens"), 64});
    CHECK(shape_of(ms("GatedRelativePositionBias", {&packed_query, &qbias, &rel, &gw, &gb, &eco, &offset}, {{"num_heads", integer(2)}})[0]) ==
          "[batch, 2, seq, seq]");
    // NhwcConv: Conv with the channels last
    const TensorInfo nhwc = TensorInfo::of(elem::float16, {b, h, w, 3});
    const TensorInfo kernel = TensorInfo::of(elem::float16, {8, 3, 3, 3});
    CHECK(shape_of(ms("NhwcConv", {&nhwc, &kernel}, {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}})[0]) == "[batch, h, w, 8]");
    CHECK(shape_of(ms("NhwcConv", {&nhwc, &kernel}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}})[0]) ==
          "[batch, (h + 1)//2 - 1, (w + 1)//2 - 1, 8]");
    const TensorInfo a = TensorInfo::of(elem::int16, {b, 4}), bm = TensorInfo::of(elem::int16, {4, 5});
    out = ms("MatMulInteger16", {&a, &bm}, {});
    CHECK(shape_of(out[0]) == "[batch, 5]");
    CHECK(out[0]->elem_type == elem::int32);
    // decoding: DecoderMaskedMultiHeadAttention (past and present in one buffer, or one step longer),
    // SparseAttention (the caches always shared), GemmFloat8, MoE, LongformerAttention
    const SymInt p = SymInt::symbol("past"), mx = SymInt::symbol("max_len");
    const TensorInfo step = TensorInfo::of(elem::float16, {b, 1, 64});
    const TensorInfo past_shared = TensorInfo::of(elem::float16, {b, 4, mx, 16}), past = TensorInfo::of(elem::float16, {b, 4, p, 16});
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &step, &step, nullptr, nullptr, &past_shared, &past_shared},
             {{"num_heads", integer(4)}, {"past_present_share_buffer", integer(1)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, 1, 64]");
    CHECK(shape_of(out[1]) == "[batch, 4, max_len, 16]");
    CHECK(shape_of(out[2]) == "[batch, 4, max_len, 16]");
    const TensorInfo past_length = TensorInfo::of(elem::int32, {}, std::vector<SymInt>{p});
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &step, &step, nullptr, nullptr, &past_shared, &past_shared, &past_length},
             {{"num_heads", integer(4)}, {"past_present_share_buffer", integer(1)}}, 4);
    CHECK(shape_of(out[3]) == "[batch, 4, 1, past + 1]");  // as onnxruntime's CPU kernel gives it
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &step, &step, nullptr, nullptr, &past, &past}, {{"num_heads", integer(4)}}, 4);
    CHECK(shape_of(out[1]) == "[batch, 4, past + 1, 16]");
    CHECK(shape_of(out[3]) == "[batch, 4, 1, past + 1]");
    CHECK(out[3]->elem_type == elem::float32);
    const TensorInfo packed_step = TensorInfo::of(elem::float16, {b, 1, 192});
    out = ms("DecoderMaskedMultiHeadAttention", {&packed_step, nullptr, nullptr, nullptr, nullptr, &past, &past}, {{"num_heads", integer(4)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, 1, 64]");
    const TensorInfo cross_kv = TensorInfo::of(elem::float16, {b, 4, SymInt::symbol("encoded"), 16});
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &cross_kv, &cross_kv}, {{"num_heads", integer(4)}}, 4);
    CHECK(shape_of(out[0]) == "[batch, 1, 64]");
    CHECK(shape_of(out[3]) == "[batch, 4, 1, encoded]");
    const TensorInfo packed_qkv = TensorInfo::of(elem::float16, {b, s, 128});  // (4 + 2 * 2) * 16
    const TensorInfo cache = TensorInfo::of(elem::float16, {b, 2, mx, 16});
    out = ms("SparseAttention", {&packed_qkv, nullptr, nullptr, &cache, &cache}, {{"num_heads", integer(4)}, {"kv_num_heads", integer(2)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[batch, 2, max_len, 16]");
    CHECK(shape_of(out[2]) == "[batch, 2, max_len, 16]");
    const int float8 = 17;  // FLOAT8E4M3FN
    const TensorInfo f8a = TensorInfo::of(float8, {64, b}), f8b = TensorInfo::of(float8, {64, 32});
    out = ms("GemmFloat8", {&f8a, &f8b}, {{"transA", integer(1)}, {"dtype", integer(elem::float16)}});
    CHECK(shape_of(out[0]) == "[batch, 32]");
    CHECK(out[0]->elem_type == elem::float16);
    CHECK(shape_of(ms("MoE", {&x}, {})[0]) == "[batch, seq, 64]");
    CHECK(shape_of(ms("LongformerAttention", {&x}, {{"num_heads", integer(4)}, {"window", integer(2)}})[0]) == "[batch, seq, 64]");
    // errors name the node
    CHECK(test::error_of<value_error>([&] { ms("RemovePadding", {&tokens, &mask}, {}, 4); }) ==
          "RemovePadding 'n': input must have rank 3, got [unk__0, 64]");
    CHECK(test::error_of<value_error>([&] { ms("PackedMultiHeadAttention", {&tokens}, {{"num_heads", integer(4)}}); }) ==
          "PackedMultiHeadAttention 'n': query must have rank 4 (packed), or rank 2 with a value of rank 2, got [unk__0, 64]");
    CHECK(test::error_of<value_error>([&] { ms("RestorePadding", {&tokens, &mask}, {}); }) ==
          "RestorePadding 'n': token_offset must have rank 2, got [batch]");
    CHECK(test::error_of<value_error>([&] { ms("GatedRelativePositionBias", {&packed_query}, {{"num_heads", integer(2)}}); }) ==
          "GatedRelativePositionBias 'n': query_layer must have rank 3 without token_offset, got [tokens, 64]");
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
