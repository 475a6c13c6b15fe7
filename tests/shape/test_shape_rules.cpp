// Shape rules on symbolic shapes: each rule's result as printed expressions,
// the broadcast policies and hooks, and every error message.
#include <yobx/shape_inference.hpp>

#include <doctest/doctest.h>

#include "../error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace yobx;

using test::error_of;

namespace {

constexpr std::int64_t int_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int_min = std::numeric_limits<std::int64_t>::min();

// Sizes as torch.export makes them: at least 2, with the observed value as hint.
struct Dims {
    ShapeEnv env;
    SymInt a = env.create_symbol("a", 4, ValueRange::at_least(2));
    SymInt b = env.create_symbol("b", 8, ValueRange::at_least(2));
    SymInt c = env.create_symbol("c", 4, ValueRange::at_least(2));
    SymInt n = env.create_symbol("n", 6, ValueRange::at_least(0));
    explicit Dims(ShapeEnvMode mode = ShapeEnvMode::strict) : env(mode) {}
};

std::string str(const Shape& s) { return format_shape(s); }

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

TEST_CASE("shape with start and end, size and nonzero") {
    Dims d;
    const Shape x{d.a, d.b, 3};
    CHECK(str(shape::shape_values(x)) == "[a, b, 3]");
    CHECK(str(shape::shape_values(x, 1)) == "[b, 3]");
    CHECK(str(shape::shape_values(x, -2, -1)) == "[b]");
    CHECK(str(shape::shape_values(x, -10, 10)) == "[a, b, 3]");
    CHECK(str(shape::shape_values(x, 2, 1)) == "[]");
    CHECK(str(shape::shape(x, 1)) == "[2]");
    CHECK(str(shape::size(x)) == "[]");
    CHECK(shape::numel(x).to_string() == "3*a*b");
    CHECK(str(shape::nonzero(d.env, x)) == "[3, u0]");
    CHECK(str(shape::nonzero(d.env, x)) == "[3, u1]");
    CHECK(d.env.hint("u0") == std::nullopt);
}
