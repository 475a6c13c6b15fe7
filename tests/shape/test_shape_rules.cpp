// Broadcasting on symbolic shapes: its results as printed expressions, the broadcast
// policies and hooks, and every error message. (Each operator's dims are tested beside
// its rule, in tests/onnx/ops/<family>.cpp.)
#include <yobx/shape_inference.hpp>

#include <doctest/doctest.h>

#include "../dims_support.hpp"
#include "../error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace yobx;

using test::error_of;

namespace {

using dims_test::Dims;
using dims_test::str;

// Restores a hook entry at scope exit (the patch layer's job, in miniature).
template <class Entry>
struct HookSwap {
    Entry& entry;
    Entry old;
    HookSwap(Entry& e, typename Entry::pointer replacement) : entry(e), old(std::exchange(e, replacement)) {}
    ~HookSwap() { entry = old; }
};

Shape first_shape(ShapeEnv&, std::span<const Shape> shapes, BroadcastPolicy, std::string_view, source_location) {
    return shapes.front();
}
Shape first_size(ShapeEnv&, const Shape& a, const Shape&, BroadcastPolicy, std::string_view, source_location) { return a; }

}  // namespace

TEST_CASE("format_shape and format_shapes print what errors quote") {
    Dims d;
    CHECK(format_shape({}) == "[]");
    CHECK(format_shape({d.a, d.b + 1, 3}) == "[a, b + 1, 3]");
    const std::vector<Shape> shapes{{d.a}, {d.b}, {d.c}};
    CHECK(format_shapes(shapes) == "[a], [b] and [c]");
    CHECK(format_shapes(std::span<const Shape>(shapes).first(2)) == "[a] and [b]");
    CHECK(to_string(BroadcastPolicy::new_symbol) == "new_symbol");
}

TEST_CASE("broadcast keeps equal dims, takes the other side of a 1 and aligns on the right") {
    Dims d;
    CHECK(str(shape::broadcast(d.env, {{d.a, d.b}, {d.b}})) == "[a, b]");
    CHECK(str(shape::broadcast(d.env, {{d.a, 1}, {1, d.b}})) == "[a, b]");
    CHECK(str(shape::broadcast(d.env, {{d.a, 1, d.b}, {d.a, d.c, 1}, {1}})) == "[a, c, b]");
    CHECK(str(shape::broadcast(d.env, {{}, {d.a}})) == "[a]");
    CHECK(d.env.runtime_asserts().empty());
}

TEST_CASE("broadcast of two unrelated symbols follows the policy") {
    SUBCASE("strict: GuardOnDataDependentSymNode naming both symbols") {
        Dims d;
        const std::string msg = error_of<GuardOnDataDependentSymNode>([&] { shape::broadcast(d.env, {{d.a, d.b}, {d.c, d.b}}); });
        CHECK(msg.find("Could not guard on data-dependent expression Eq(a, c) (hints: a = 4, c = 4)") == 0);
    }
    SUBCASE("sym_max: Max(a, c)") {
        Dims d;
        CHECK(str(shape::broadcast(d.env, {{d.a, d.b}, {d.c, d.b}}, BroadcastPolicy::sym_max)) == "[Max(a, c), b]");
    }
    SUBCASE("new_symbol: a fresh symbol whose hint is the hints' broadcast") {
        Dims d;
        CHECK(str(shape::broadcast(d.env, {{d.a, d.b}, {d.c, d.b}}, BroadcastPolicy::new_symbol)) == "[s0, b]");
        CHECK(d.env.hint("s0") == 4);
    }
    SUBCASE("new_symbol: a side the lattice proves the Max of both (both at least 1) is exact") {
        ShapeEnv env;
        const SymInt n = env.create_symbol("n", 7, ValueRange::at_least(1)), e = env.create_symbol("e", 4, ValueRange::at_least(1));
        // a position table of 64 rows sliced to the sequence, added to a [e, n] tensor
        const SymInt sliced = sym_min(SymInt(64), n);
        CHECK(str(shape::broadcast(env, {{e, n}, {1, sliced}}, BroadcastPolicy::new_symbol)) == "[e, n]");
        CHECK(str(shape::broadcast(env, {{sliced}, {n}}, BroadcastPolicy::new_symbol)) == "[n]");
        CHECK(env.runtime_asserts().empty());
        // unrelated: a fresh symbol, as before
        CHECK(str(shape::broadcast(env, {{n}, {e}}, BroadcastPolicy::new_symbol)) == "[s0]");
    }
    SUBCASE("dominating_side: the one rule of a side every valid graph broadcasts to (the ONNX layer's fallback uses it)") {
        ShapeEnv env;
        const SymInt n = env.create_symbol("n", 7, ValueRange::at_least(1)), e = env.create_symbol("e", 4, ValueRange::at_least(1));
        const SymInt z = env.create_symbol("z", 3, ValueRange::at_least(0));
        CHECK(shape::dominating_side(env, sym_min(SymInt(64), n), n)->to_string() == "n");
        CHECK(shape::dominating_side(env, n, sym_min(SymInt(64), n))->to_string() == "n");
        CHECK_FALSE(shape::dominating_side(env, n, e));                   // unrelated
        CHECK_FALSE(shape::dominating_side(env, z, sym_min(SymInt(64), z)));  // z may be 0
        // an undefined question (a division by z, which may be 0): not known, no exception
        CHECK_FALSE(shape::dominating_side(env, parse_sym("n//z"), n));
    }
    SUBCASE("new_symbol: a side that may be 0 keeps the fresh symbol (0 with 1 broadcasts to 0, not Max)") {
        ShapeEnv env;
        const SymInt n = env.create_symbol("n", 7);
        CHECK(str(shape::broadcast(env, {{n}, {sym_min(SymInt(64), n)}}, BroadcastPolicy::new_symbol)) == "[s0]");
    }
    SUBCASE("draft: the hints say a == c, recorded in the report") {
        Dims d(ShapeEnvMode::draft);
        CHECK(str(shape::broadcast(d.env, {{d.a, d.b}, {d.c, d.b}})) == "[a, b]");
        REQUIRE(d.env.draft_report().size() == 1);
        CHECK(d.env.draft_report().issues()[0].condition.to_string() == "Eq(a, c)");
        CHECK(d.env.draft_report().issues()[0].answer == true);
    }
    SUBCASE("draft with c's hint 1: c broadcasts, both assumptions are reported") {
        ShapeEnv env(ShapeEnvMode::draft);
        const SymInt a = env.create_symbol("a", 4), c = env.create_symbol("c", 1);
        CHECK(str(shape::broadcast(env, {{a}, {c}})) == "[a]");
        REQUIRE(env.draft_report().size() == 2);
        CHECK(env.draft_report().issues()[0].condition.to_string() == "Eq(a, c)");
        CHECK(env.draft_report().issues()[0].answer == false);
        CHECK(env.draft_report().issues()[1].condition.to_string() == "Eq(c, 1)");
        CHECK(env.draft_report().issues()[1].answer == true);
    }
}

TEST_CASE("a constant other than 1 decides a broadcast with a symbol under every policy, as ONNX does") {
    for (const auto policy : {BroadcastPolicy::strict, BroadcastPolicy::sym_max, BroadcastPolicy::new_symbol}) {
        CAPTURE(to_string(policy));
        // s may be 1: the result is 3 all the same, valid only if s is 1 or 3 (recorded, not asked)
        ShapeEnv env;
        const SymInt s = env.create_symbol("s", 3, ValueRange::at_least(1));
        CHECK(str(shape::broadcast(env, {{s, 2}, {3, 1}}, policy)) == "[3, 2]");
        REQUIRE(env.runtime_asserts().size() == 1);
        CHECK(env.runtime_asserts()[0].condition.to_string() == "Eq(s, 3) | Eq(s, 1)");
        CHECK(env.runtime_asserts()[0].message == "broadcasting s with 3");
        CHECK(env.draft_report().empty());  // a strict env reports no assumption
        // 0 decides too: 0 broadcast with 1 is 0, not Max(0, 1)
        ShapeEnv zero;
        const SymInt n = zero.create_symbol("n", 1, ValueRange::at_least(0));
        CHECK(str(shape::broadcast(zero, {{0, 5}, {n, 5}}, policy)) == "[0, 5]");
        CHECK(zero.runtime_asserts().back().condition.to_string() == "Eq(n, 1) | Eq(n, 0)");
        // a symbol that cannot be 1 must be the constant: a replacement
        Dims d;
        CHECK(str(shape::broadcast(d.env, {{d.a}, {4}}, policy)) == "[4]");
        CHECK(d.env.simplify(d.a).to_string() == "4");
        // hints that refute both answers: the shapes cannot be broadcast
        Dims e;
        CHECK(error_of<value_error>([&] { shape::broadcast(e.env, {{e.b}, {3}}, policy, "Add"); }) ==
              "Add: shapes [b] and [3] cannot be broadcast: at output dimension 0, b and 3 are not equal and neither is 1");
    }
    // two symbols: the policy decides
    Dims d;
    CHECK(str(shape::broadcast(d.env, {{d.n}, {d.a}}, BroadcastPolicy::sym_max)) == "[Max(a, n)]");
}

TEST_CASE("a data-dependent size broadcast with a size that has a hint takes that size under every policy, as ONNX does") {
    for (const auto policy : {BroadcastPolicy::strict, BroadcastPolicy::sym_max, BroadcastPolicy::new_symbol}) {
        CAPTURE(to_string(policy));
        Dims d;
        const SymInt u = d.env.fresh_symbol("u");  // no hint, as NonZero's count
        CHECK(str(shape::broadcast(d.env, {{u, 3}, {d.a, 1}}, policy)) == "[a, 3]");
        CHECK(d.env.runtime_asserts().back().condition.to_string() == "Eq(u0, 1) | Eq(a, u0)");
        CHECK(d.env.runtime_asserts().back().message == "broadcasting u0 with a");
        // a symbol a check replaced by a constant decides like the constant
        d.env.check(d.c == 4);
        CHECK(str(shape::broadcast(d.env, {{d.c}, {u}}, policy)) == "[4]");
    }
}

TEST_CASE("two data-dependent sizes broadcast to a fresh one in a draft env under the strict policy, a strict env asks") {
    ShapeEnv draft(ShapeEnvMode::draft);
    const SymInt u0 = draft.fresh_symbol("u"), u1 = draft.fresh_symbol("u");
    CHECK(str(shape::broadcast(draft, {{u0}, {u1}})) == "[u2]");
    CHECK(draft.draft_report().empty());
    CHECK(str(shape::broadcast(draft, {{u0}, {u1}}, BroadcastPolicy::sym_max)) == "[Max(u0, u1)]");
    ShapeEnv strict;
    const SymInt v0 = strict.fresh_symbol("u"), v1 = strict.fresh_symbol("u");
    CHECK(error_of<GuardOnDataDependentSymNode>([&] { shape::broadcast(strict, {{v0}, {v1}}); })
              .starts_with("Could not guard on data-dependent expression Eq(u0, u1) (hints: u0 = ?, u1 = ?)"));
}

TEST_CASE("a draft env lists the broadcast's requirement in its report") {
    ShapeEnv draft(ShapeEnvMode::draft);
    const SymInt t = draft.create_symbol("t", 6, ValueRange::at_least(1));
    CHECK(str(shape::broadcast(draft, {{t}, {6}})) == "[6]");
    CHECK(str(shape::broadcast(draft, {{6}, {t}})) == "[6]");
    REQUIRE(draft.draft_report().size() == 1);
    const DraftIssue& issue = draft.draft_report().issues()[0];
    CHECK(issue.requirement == "broadcasting t with 6");
    CHECK(issue.condition.to_string() == "Eq(t, 6) | Eq(t, 1)");
    CHECK(issue.count == 2);
    const std::string report = draft.draft_report().to_string();
    CHECK(report.find("1. Assumed requirement.\n"
                      "    broadcasting t with 6: yobx took `Eq(t, 6) | Eq(t, 1)` as given.\n"
                      "    It holds for the hints: t = 6.\n"
                      "    This was encountered 2 time(s).\n") != std::string::npos);
}

TEST_CASE("broadcast errors name the op, every shape and the two dimensions") {
    Dims d;
    CHECK(error_of<value_error>([&] { shape::broadcast(d.env, {{3, d.a}, {4, d.a}}, BroadcastPolicy::strict, "Add"); }) ==
          "Add: shapes [3, a] and [4, a] cannot be broadcast: at output dimension 0, 3 and 4 are not equal and neither is 1");
    // a >= 2, so a + 1 is neither a nor 1: no policy can save it
    CHECK(error_of<value_error>([&] { shape::broadcast(d.env, {{d.a}, {d.a}, {d.a + 1}}, BroadcastPolicy::sym_max, "Sum"); }) ==
          "Sum: shapes [a], [a] and [a + 1] cannot be broadcast: at output dimension 0, a and a + 1 are not equal "
          "and neither is 1");
    // Max(a, b) may be a + 1: sym_max does not refuse what it cannot refute
    CHECK(str(shape::broadcast(d.env, {{d.a}, {d.b}, {d.a + 1}}, BroadcastPolicy::sym_max)) == "[Max(a + 1, b)]");
    ShapeEnv draft(ShapeEnvMode::draft);
    const SymInt x = draft.create_symbol("x", 3), y = draft.create_symbol("y", 5);
    CHECK(error_of<value_error>([&] { shape::broadcast(draft, {{x}, {y}}, BroadcastPolicy::strict, "Mul"); }) ==
          "Mul: shapes [x] and [y] cannot be broadcast: at output dimension 0, x and y are not equal and neither is 1");
}

TEST_CASE("the broadcast_shapes and infer_size hooks are single assignments that the rules follow") {
    Dims d;
    const BroadcastShapesFn default_broadcast = shape_hooks.broadcast_shapes;
    const InferSizeFn default_infer = shape_hooks.infer_size;
    CHECK((default_broadcast == &shape::default_broadcast_shapes<>));
    CHECK((default_infer == &shape::default_infer_size<>));
    // an entry compares with the default's name as a pointer did; a null entry is the default
    CHECK((shape_hooks.broadcast_shapes == &shape::default_broadcast_shapes));
    CHECK((ShapeHooks{}.infer_size == shape_hooks.infer_size));
    {
        HookSwap swap(shape_hooks.broadcast_shapes, &first_shape);
        CHECK(str(shape::broadcast(d.env, {{d.a, 1}, {d.c, d.b}})) == "[a, 1]");
        CHECK(str(shape::expand(d.env, {d.a}, {1, d.a})) == "[1, a]");  // infer_size is its own entry
    }
    {
        HookSwap swap(shape_hooks.infer_size, &first_size);
        CHECK(str(shape::expand(d.env, {d.a}, {2, d.a})) == "[a]");
        CHECK(str(shape::matmul(d.env, {5, 2, d.a, d.b}, {7, 1, d.b, d.c})) == "[5, 2, a, c]");
    }
    CHECK((shape_hooks.broadcast_shapes == default_broadcast));
    CHECK((shape_hooks.infer_size == default_infer));
}
