// The rules of include/yobx/onnx/ops/elementwise.hpp (and rounding.hpp): values kept through elementwise operators and float round trips, broadcasting.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

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
