// The rules of include/yobx/onnx/ops/generator.hpp: Range and ConstantOfShape on shape computations.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

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
