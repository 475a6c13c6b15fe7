// The rules of include/yobx/onnx/ops/math.hpp: reductions.
#include "../../dims_support.hpp"
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

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

// ---- the operator's dims: yobx::shape::matmul ----

namespace {
using namespace dims_test;
using test::error_of;
}  // namespace

TEST_CASE("matmul: batched, broadcast batch dimensions, 1-D operands") {
    Dims d;
    CHECK(str(shape::matmul(d.env, {d.n, d.a, d.b}, {d.b, d.c})) == "[n, a, c]");
    CHECK(str(shape::matmul(d.env, {1, d.a, d.b}, {d.n, 1, d.b, d.c})) == "[n, 1, a, c]");
    CHECK(str(shape::matmul(d.env, {d.b}, {d.b})) == "[]");
    CHECK(str(shape::matmul(d.env, {d.b}, {d.n, d.b, d.c})) == "[n, c]");
    CHECK(str(shape::matmul(d.env, {d.n, d.a, d.b}, {d.b})) == "[n, a]");
    CHECK(d.env.runtime_asserts().empty());
    CHECK(str(shape::matmul(d.env, {d.b, d.a}, {d.c, 5})) == "[b, 5]");
    REQUIRE(d.env.runtime_asserts().size() == 1);
    CHECK(d.env.runtime_asserts()[0].condition.to_string() == "Eq(a, c)");
}

TEST_CASE("matmul errors: scalar operands, contracted dimensions, batch dimensions") {
    Dims d;
    CHECK(error_of<value_error>([&] { shape::matmul(d.env, {}, {d.a}); }) ==
          "MatMul: operands must have rank >= 1, got shapes [] and [a]");
    CHECK(error_of<value_error>([&] { shape::matmul(d.env, {2, 3}, {4, 5}); }) ==
          "MatMul: contracted dimensions differ: [2, 3] @ [4, 5] contracts 3 with 4");
    CHECK(error_of<value_error>([&] { shape::matmul(d.env, {2, d.a, 3}, {4, 3, d.b}); }) ==
          "MatMul: shapes [2] and [4] cannot be broadcast: at output dimension 0, 2 and 4 are not equal and neither is 1");
    CHECK(error_of<GuardOnDataDependentSymNode>([&] { shape::matmul(d.env, {d.a, 2, 3}, {d.c, 3, 2}); })
              .find("Eq(a, c)") != std::string::npos);
    CHECK(str(shape::matmul(d.env, {d.a, 2, 3}, {d.c, 3, 2}, BroadcastPolicy::sym_max)) == "[Max(a, c), 2, 2]");
}
