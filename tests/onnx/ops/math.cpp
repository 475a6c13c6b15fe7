// The rules of include/yobx/onnx/ops/math.hpp: reductions.
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
