// ShapeEnv: symbols, hints and ranges; checks as replacements, ranges and
// divisibility; guards in strict and draft mode; the draft report.
#include <yobx/sym.hpp>

#include <doctest/doctest.h>

#include "../error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>

using yobx::ShapeEnv;
using yobx::ShapeEnvMode;
using yobx::SymBool;
using yobx::SymInt;
using yobx::ValueRange;

using test::error_of;

namespace {

std::string at(const yobx::source_location& l) {
    return std::string(l.file_name()) + ":" + std::to_string(l.line()) + " in " + l.function_name();
}

}  // namespace

TEST_CASE("create_symbol keeps the hint and the range, and rejects bad input") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 8, ValueRange::between(2, 64));
    CHECK(s0.to_string() == "s0");
    CHECK(env.hint("s0") == 8);
    CHECK(env.range("s0") == ValueRange::between(2, 64));
    CHECK(env.range("s0").to_string() == "[2, 64]");
    CHECK(ValueRange::size().to_string() == "[0, oo]");
    CHECK(ValueRange::unknown().to_string() == "[-oo, oo]");
    CHECK(error_of([&] { env.create_symbol("s0", 3); }) == "create_symbol: symbol s0 already exists");
    CHECK(error_of([&] { env.create_symbol("s1", 1, ValueRange::at_least(2)); }) ==
          "create_symbol: hint 1 of s1 is outside its range [2, oo]");
    CHECK(error_of([&] { env.create_symbol("s1", std::nullopt, ValueRange::between(3, 2)); }) ==
          "create_symbol: the range [3, 2] of s1 is empty");
    CHECK(error_of([&] { env.hint("nope"); }) == "ShapeEnv: unknown symbol nope");
    CHECK_FALSE(env.has_symbol("s1"));
}

TEST_CASE("a power with a large exponent is bounded in one step, not one multiplication per unit of the exponent") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 3, ValueRange::at_least(2));
    const SymInt u0 = env.create_symbol("u0", std::nullopt, ValueRange::size());
    // u0 == y >= 0 and u0**100000000 == y**100000000: the shifted bound raises y at once
    CHECK(env.bound(pow(u0, 100000000) - u0) == ValueRange::unknown());
    CHECK(env.bound(pow(s0, 3) - s0) == ValueRange::at_least(6));
    CHECK(env.bound(pow(s0, 100000000) - s0) == ValueRange::unknown());  // (2 + t)**100000000 is too large to expand
}

TEST_CASE("fresh_symbol generates unique names per prefix, skipping the ones in use") {
    ShapeEnv env;
    env.create_symbol("unk__1", 4);
    CHECK(env.fresh_symbol("unk__").to_string() == "unk__0");
    CHECK(env.fresh_symbol("unk__").to_string() == "unk__2");
    CHECK(env.fresh_symbol("u", 5).to_string() == "u0");
    CHECK(env.fresh_symbol("u").to_string() == "u1");
    CHECK(env.hint("u0") == 5);
    CHECK(env.hint("unk__0") == std::nullopt);
}

TEST_CASE("ranges are propagated through every operator") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 4, ValueRange::between(2, 10));
    const SymInt b = env.create_symbol("b", 3, ValueRange::between(1, 4));
    const SymInt c = env.create_symbol("c", -1, ValueRange::between(-3, 5));
    CHECK(env.bound(a + b) == ValueRange::between(3, 14));
    CHECK(env.bound(a - b) == ValueRange::between(-2, 9));
    CHECK(env.bound(a * b) == ValueRange::between(2, 40));
    CHECK(env.bound(a * c) == ValueRange::between(-30, 50));
    CHECK(env.bound(c * c) == ValueRange::between(0, 25));
    CHECK(env.bound(floordiv(a, 3)) == ValueRange::between(0, 3));
    CHECK(env.bound(floordiv(a, b)) == ValueRange::between(0, 10));
    CHECK(env.bound(mod(a, 4)) == ValueRange::between(0, 3));
    CHECK(env.bound(mod(a, b)) == ValueRange::between(0, 3));
    CHECK(env.bound(sym_max(a, b)) == ValueRange::between(2, 10));
    CHECK(env.bound(sym_min(a, c)) == ValueRange::between(-3, 5));
    CHECK(env.bound(-a) == ValueRange::between(-10, -2));
    CHECK(env.bound(a * SymInt::symbol("free")) == ValueRange::unknown());
    CHECK(env.bound(c * c * c) == ValueRange::between(-27, 125));
    CHECK(env.bound(SymInt::symbol("free") * SymInt::symbol("free")) == ValueRange::size());
    const SymInt neg = env.create_symbol("neg", -4, ValueRange::between(ValueRange::neg_inf, -2));
    CHECK(env.bound(neg * neg) == ValueRange::at_least(4));
    CHECK(env.bound(neg * neg * neg) == ValueRange::between(ValueRange::neg_inf, -8));
    CHECK(env.bound(pow(a, 40)) == ValueRange::at_least(1099511627776));
    ShapeEnv sizes;
    const SymInt n = sizes.create_symbol("n", 5);
    CHECK(sizes.bound(n * n + 1) == ValueRange::at_least(1));
}

TEST_CASE("Max(s0, 1) is s0 when the range of s0 is >= 1, and not otherwise") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 4, ValueRange::at_least(1));
    const SymInt s1 = env.create_symbol("s1", 4, ValueRange::size());
    CHECK(env.simplify(sym_max(s0, 1)).to_string() == "s0");
    CHECK(env.simplify(sym_max(s1, 1)).to_string() == "Max(1, s1)");
    CHECK(env.simplify(sym_min(s0, 0)).to_string() == "0");
    CHECK(env.simplify(floordiv(s0, s0 + 1)).to_string() == "0");
    CHECK(env.simplify(mod(s1, s1 + 1)).to_string() == "s1");
}

TEST_CASE("check with an equality makes a replacement used afterwards") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 4), s1 = env.create_symbol("s1", 4);
    const SymInt s2 = env.create_symbol("s2", 5);
    env.check(s1 == s0, "same batch");
    CHECK(env.replacements().at("s1").to_string() == "s0");
    CHECK(env.simplify(s0 + s1).to_string() == "2*s0");
    CHECK(env.statically_known_true(s0 == s1));
    env.check(s2 == s0 + 1);
    CHECK(env.simplify(s2 - s1).to_string() == "1");
    CHECK(env.evaluate(sym_max(s2, s1) == s2));
    REQUIRE(env.runtime_asserts().size() == 2);
    CHECK(env.runtime_asserts()[0].condition.to_string() == "Eq(s0, s1)");
    CHECK(env.runtime_asserts()[0].message == "same batch");
}

TEST_CASE("check with a bound narrows the range") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 4);
    env.check(s0 >= 2);
    CHECK(env.range("s0") == ValueRange::at_least(2));
    env.check(2 * s0 < 21);
    CHECK(env.range("s0") == ValueRange::between(2, 10));
    env.check(s0 != 2);
    CHECK(env.range("s0") == ValueRange::between(3, 10));
    CHECK(env.statically_known_true(s0 > 2));
    CHECK(env.simplify(sym_max(s0, 3)).to_string() == "s0");
}

TEST_CASE("check with a bound on a quotient narrows the symbol") {
    ShapeEnv env;
    const SymInt h = env.create_symbol("h", std::nullopt, ValueRange::at_least(1));
    env.check(floordiv(h, 4) >= 1);  // a 4x4 convolution of stride 4 is not empty
    CHECK(env.range("h") == ValueRange::at_least(4));
    env.check(floordiv(h + 3, 5) <= 7);  // (h + 3)//5 <= 7 is h + 3 <= 39
    CHECK(env.range("h") == ValueRange::between(4, 36));
    env.check(2 * floordiv(h - 1, 3) <= 20);  // (h - 1)//3 <= 10 is h <= 33
    CHECK(env.range("h") == ValueRange::between(4, 33));
    CHECK(error_of([&] { env.check(floordiv(h, 4) >= 9); }) ==
          "check failed: h//4 >= 9 is provably false");
}

TEST_CASE("bounds through floor divisions and through a Max or Min distributed over the rest") {
    ShapeEnv env;
    const SymInt x = env.create_symbol("x", std::nullopt, ValueRange::at_least(1));
    // the ceiling of x/7 as the canonical form writes it: x - (6*x)//7 is (x + r)/7, r in [0, 6]
    const SymInt ceil7 = env.simplify(x - floordiv(6 * x, 7));
    CHECK(env.bound(ceil7) == ValueRange::at_least(1));
    CHECK(env.bound(env.simplify(2 * x - floordiv(3 * x, 2))) == ValueRange::at_least(1));
    // Max(3, p) - p is Max(3 - p, 0): between 0 and 3 for p >= 0
    const SymInt p = env.create_symbol("p", std::nullopt, ValueRange::size());
    CHECK(env.bound(env.simplify(sym_max(SymInt(3), p) - p)) == ValueRange::between(0, 3));
    CHECK(env.bound(env.simplify(p - sym_min(SymInt(5), p))) == ValueRange::at_least(0));
    // a roll's two slices put back together: Max(-3, p - Max(3, p)) + Max(3, p) is p
    CHECK(env.simplify(sym_max(SymInt(-3), p - sym_max(SymInt(3), p)) + sym_max(SymInt(3), p)).to_string() == "p");
}

TEST_CASE("a question on floor divisions and remainders in one symbol is answered from one period of its values") {
    ShapeEnv env;
    const SymInt h = env.create_symbol("h", std::nullopt, ValueRange::at_least(1));
    env.check(floordiv(h, 4) >= 1);  // a 4x4 patch embedding of stride 4: h >= 4
    // Swin's window padding: h//4 rounded up to a multiple of 4, at least 4 (its terms alone bound it by 1)
    const SymInt a = floordiv(h, 4);
    const SymInt padded = env.simplify(a + mod(4 - mod(a, SymInt(4)), SymInt(4)));
    CHECK(padded.to_string() == "h//4 + Mod(3*(h//4), 4)");
    CHECK(env.statically_known_true(padded >= 4));
    CHECK_FALSE(env.statically_known_true(padded >= 5));
    CHECK(env.bound(padded) == ValueRange::at_least(1));  // a range asked without a question: term by term
    // and so the slices of its window mask have their sizes: x[:-4] and x[-4:-2]
    CHECK(env.simplify(sym_max(SymInt(4), padded) - 4).to_string() == "h//4 + Mod(3*(h//4), 4) - 4");
    CHECK(env.simplify(sym_max(SymInt(-2), sym_max(SymInt(2), padded) - sym_max(SymInt(4), padded)) + 2).to_string() == "2");
    // a patch merging's even padding, then every second row: the ceiling of h//4 / 2, at least 1
    const SymInt half = env.simplify(a - floordiv(h, 8));
    CHECK(env.statically_known_true(half >= 1));
    CHECK(env.simplify(sym_min(SymInt(0), half)).to_string() == "0");
    // a falling sum: at most its first period's largest value
    CHECK(env.statically_known_true(floordiv(h, 2) - h <= -2));
    CHECK_FALSE(env.statically_known_true(floordiv(h, 2) - h <= -3));
    // a range with two ends: every value when there are few, each end's period when there are many
    const SymInt s = env.create_symbol("s", std::nullopt, ValueRange::between(3, 5));
    const SymInt rounded = floordiv(s, 2) + mod(s, SymInt(2));  // 2, 2, 3
    CHECK(env.statically_known_true(rounded >= 2));
    CHECK(env.statically_known_true(rounded <= 3));
    CHECK_FALSE(env.statically_known_true(rounded >= 3));
    const SymInt t = env.create_symbol("t", std::nullopt, ValueRange::between(5, 1000));
    CHECK(env.statically_known_true(floordiv(t, 3) - floordiv(t, 6) >= 1));
    CHECK(env.statically_known_true(floordiv(t, 3) - floordiv(t, 6) <= 167));
    CHECK_FALSE(env.statically_known_true(floordiv(t, 3) - floordiv(t, 6) <= 166));
    CHECK(env.statically_known_true(floordiv(t, 3) - t >= -667));
    CHECK_FALSE(env.statically_known_true(floordiv(t, 3) - t >= -666));
    // two symbols, or a period above max_period: the term-by-term bound stands
    const SymInt w = env.create_symbol("w", std::nullopt, ValueRange::at_least(4));
    CHECK(env.simplify(sym_min(SymInt(0), a - floordiv(w, 8))).to_string() == "Min(0, h//4 - w//8)");
    CHECK(env.simplify(sym_min(SymInt(0), floordiv(h, 1024) - floordiv(h, 2048))).to_string() == "Min(0, h//1024 - h//2048)");
}

TEST_CASE("a check that fails forgets the answers made under the ranges it undoes") {
    ShapeEnv env;
    const SymInt x = env.create_symbol("x", std::nullopt, ValueRange::size());
    const SymInt z = env.create_symbol("z", std::nullopt, ValueRange::size());
    const SymInt half = floordiv(x, 4) - floordiv(x, 8);  // 0 for x < 4
    // x >= 8 narrows x; under it half >= 1 makes the Max 0 and z + 1 <= 0 empties z's range
    CHECK(error_of<yobx::runtime_error>([&] { env.check(x >= 8 && z + 1 <= sym_max(SymInt(0), 1 - half)); }) ==
          "check failed: the range of z becomes empty ([0, oo] narrowed to [-oo, -1])");
    CHECK(env.bound(x) == ValueRange::size());
    CHECK_FALSE(env.statically_known_true(half >= 1));  // x is 0 to 3 there
}

TEST_CASE("check with divisibility is kept and used") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 16, ValueRange::at_least(1));
    env.check(mod(s0, 8) == 0, "multiple of 8");
    CHECK(env.range("s0") == ValueRange::at_least(8));
    CHECK(env.simplify(mod(s0, 8)).to_string() == "0");
    CHECK(env.simplify(mod(s0, 4)).to_string() == "0");
    CHECK(env.simplify(mod(3 * s0 + 2, 4)).to_string() == "2");
    CHECK(env.simplify(8 * floordiv(s0, 8)).to_string() == "s0");
    CHECK(env.simplify(4 * floordiv(s0, 2)).to_string() == "2*s0");
    CHECK(env.statically_known_true(s0 != 12));
    CHECK_FALSE(env.guard_or_true(s0 == 20));
    CHECK(env.simplify(mod(s0, 16)).to_string() == "Mod(s0, 16)");
}

TEST_CASE("a check that is provably false, or false for the hints, throws with the message") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 6, ValueRange::at_least(2));
    const SymInt s1 = env.create_symbol("s1", 3);
    CHECK(error_of<yobx::runtime_error>([&] { env.check(s0 < 2, "needs a batch"); }) ==
          "check failed: needs a batch: s0 <= 1 is provably false");
    CHECK(error_of<yobx::runtime_error>([&] { env.check(s0 == s1, "same length"); }) ==
          "check failed: same length: Eq(s0, s1) is false for the hints s0 = 6, s1 = 3");
    CHECK(error_of<yobx::runtime_error>([&] { env.check(mod(s0, 2) == 1); }) ==
          "check failed: Eq(Mod(s0, 2), 1) is false for the hints s0 = 6");
    CHECK(env.runtime_asserts().empty());
    env.check(s0 >= 0, "always true");  // provable: nothing to record
    CHECK(env.runtime_asserts().empty());
}

TEST_CASE("the ShapeEnv reduces Mod and // whenever the ranges place the quotient, and nested // by a size") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 5, ValueRange::at_least(2));
    const SymInt b = env.create_symbol("b", 7, ValueRange::at_least(2));
    CHECK(mod(a - 1, a).to_string() == "Mod(-1, a)");
    CHECK(env.simplify(mod(a - 1, a)).to_string() == "a - 1");
    CHECK(env.simplify(floordiv(a - 1, a)).to_string() == "0");
    CHECK(env.simplify(a - mod(a - 1, a) + a - 1).to_string() == "a");
    CHECK(env.simplify(8 * floordiv(b + a + 7 * mod(SymInt(-1), a) + 6, 8) - 8 * mod(SymInt(-1), a)).identical(env.simplify(8 * floordiv(b + 7, 8))));
    CHECK(env.simplify(floordiv(floordiv(a * a, 3), a)).to_string() == "a//3");
    CHECK(env.statically_known_true(floordiv(floordiv(a * a, 3), a) == floordiv(a, 3)));
    CHECK(env.simplify(sym_min(a, sym_max(3, a))).to_string() == "a");
    // a symbol in several terms is bounded at its lower end: a*a + 1 > a, a*b + 1 > a
    CHECK(env.simplify(floordiv(a, a * a + 1)).to_string() == "0");
    CHECK(env.simplify(mod(a, a * b + 1)).to_string() == "a");
    CHECK(env.bound(a * a - a + 1).to_string() == "[3, oo]");
    // (x//b + c)//b == (x + c*b)//(b*b) for a size b, c any terms without a quotient: here a*b**2 + a
    CHECK(env.simplify(floordiv(floordiv(a, b) + a * b, b)).to_string() == "a + a//(b**2)");
}

TEST_CASE("a divisibility check that leaves no multiple in the range throws") {
    ShapeEnv env;
    // no multiple of 8 in [9, 15]: the ranges decide Mod(u, 8) == u - 8, never 0
    const SymInt u = env.create_symbol("u", std::nullopt, ValueRange::between(9, 15));
    CHECK(error_of<yobx::runtime_error>([&] { env.check(mod(u, 8) == 0); }) == "check failed: Eq(Mod(u, 8), 0) is provably false");
    CHECK(env.simplify(mod(u, 8)).to_string() == "u - 8");
    // multiples of 8 and of 5 in [16, 24], none of 40: the range becomes empty
    const SymInt v = env.create_symbol("v", std::nullopt, ValueRange::between(9, 30));
    env.check(mod(v, 8) == 0);
    CHECK(env.range("v") == ValueRange::between(16, 24));
    CHECK(error_of<yobx::runtime_error>([&] { env.check(mod(v, 5) == 0); }) ==
          "check failed: the range of v becomes empty ([16, 24] narrowed to [16, 24] with multiples of 40)");
    // the failed check left nothing behind
    CHECK(env.range("v") == ValueRange::between(16, 24));
    CHECK(env.simplify(mod(v, 5)).to_string() == "Mod(v, 5)");
    CHECK(env.runtime_asserts().size() == 1);
}

TEST_CASE("statically_known_true, guard_or_false and guard_or_true never throw") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 3), c = env.create_symbol("c", 4);
    CHECK(env.statically_known_true(a >= 0));
    CHECK_FALSE(env.statically_known_true(a == c));
    CHECK_FALSE(env.guard_or_false(a == c));
    CHECK(env.guard_or_true(a == c));
    CHECK_FALSE(env.guard_or_true(a < 0));
    CHECK(env.guard_or_false(a + 1 > a));
    env.check(a < c);
    CHECK(env.statically_known_true(a <= c));
    CHECK(env.statically_known_true(a != c));
    CHECK_FALSE(env.guard_or_true(a == c));
    CHECK(env.simplify(sym_max(a, c)).to_string() == "c");
}

TEST_CASE("strict evaluate throws GuardOnDataDependentSymNode with the condition, hints and location") {
    ShapeEnv env;
    const SymInt a = env.create_symbol("a", 3), c = env.create_symbol("c", 4);
    CHECK(env.evaluate(a >= 0));
    const auto here = yobx::source_location::current();
    try {
        env.evaluate(a == c, here);
        FAIL("no exception");
    } catch (const yobx::GuardOnDataDependentSymNode& e) {
        CHECK(std::string(e.what()) == "Could not guard on data-dependent expression Eq(a, c) (hints: a = 3, c = 4) at " +
                                           at(here) +
                                           ". Tell yobx the answer with ShapeEnv::check (torch._check), or use "
                                           "ShapeEnvMode::draft to take the hints' answer and get a report.");
        CHECK(e.condition() == "Eq(a, c)");
        CHECK(e.where().line() == here.line());
    }
    CHECK(env.draft_report().empty());
    CHECK(env.runtime_asserts().empty());
}

TEST_CASE("draft evaluate answers from the hints, records a runtime assert and reports each issue once") {
    ShapeEnv env(ShapeEnvMode::draft);
    const SymInt a = env.create_symbol("a", 3), c = env.create_symbol("c", 3);
    const auto first = yobx::source_location::current();
    CHECK(env.evaluate(a == c, first));
    CHECK(env.evaluate(c == a, first));
    const auto second = yobx::source_location::current();
    CHECK_FALSE(env.evaluate(a != c, second));
    CHECK_FALSE(env.evaluate(a > c, second));
    REQUIRE(env.draft_report().size() == 2);
    const auto& issue = env.draft_report().issues()[0];
    CHECK(issue.condition.to_string() == "Eq(a, c)");
    CHECK(issue.answer);
    CHECK(issue.count == 3);
    CHECK(issue.locations.size() == 2);
    REQUIRE(env.runtime_asserts().size() == 2);
    CHECK(env.runtime_asserts()[0].condition.to_string() == "Eq(a, c)");
    CHECK(env.runtime_asserts()[1].condition.to_string() == "a <= c");
    CHECK(env.runtime_asserts()[1].message == "draft assumption");
    auto frame = [](const yobx::source_location& l) {
        return "        File \"" + std::string(l.file_name()) + "\", line " + std::to_string(l.line()) + ", in " + l.function_name() +
               "\n";
    };
    const std::string bar(99, '#');
    CHECK(env.draft_report().to_string() ==
          bar +
              "\n"
              "WARNING: 2 issue(s) found during shape evaluation; the answers were taken from the hints.\n"
              "They hold for the observed sizes only and were recorded as runtime asserts.\n"
              "Fix each one with ShapeEnv::check (torch._check) or by changing the code.\n" +
              bar +
              "\n"
              "\n1. Data dependent guard.\n"
              "    yobx was unable to decide `Eq(a, c)` from ranges and constraints.\n"
              "    It assumed True from the hints: a = 3, c = 3.\n"
              "    This was encountered 3 time(s).\n"
              "    This occurred at the following locations:\n" +
              frame(first) + frame(second) +
              "\n2. Data dependent guard.\n"
              "    yobx was unable to decide `a > c` from ranges and constraints.\n"
              "    It assumed False from the hints: a = 3, c = 3.\n"
              "    This was encountered 1 time(s).\n"
              "    This occurred at the following locations:\n" +
              frame(second));
}

TEST_CASE("draft evaluate of a condition whose negation does not fit in int64 (found by fuzz_onnx_model)") {
    // v <= INT64_MAX is 1 - (v - INT64_MAX) <= 0 negated: the negation overflowed out of the ShapeEnv uncaught
    ShapeEnv env(ShapeEnvMode::draft);
    const SymInt v = env.create_symbol("v", 3, ValueRange::unknown());
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    CHECK(env.evaluate(v <= big));
    CHECK(env.evaluate(v <= big));
    REQUIRE(env.draft_report().size() == 1);
    CHECK(env.draft_report().issues()[0].count == 2);
    REQUIRE(env.runtime_asserts().size() == 1);
    CHECK(env.runtime_asserts()[0].condition.to_string() == "v <= 9223372036854775807");
}

TEST_CASE("a draft report with no issue says so") {
    ShapeEnv env(ShapeEnvMode::draft);
    const SymInt a = env.create_symbol("a", 3);
    CHECK(env.evaluate(a >= 0));
    const std::string bar(99, '#');
    CHECK(env.draft_report().to_string() ==
          bar + "\nCongratulations: no issues found; every guard was decided without the hints.\n" + bar + "\n");
}

TEST_CASE("draft mode cannot answer for a symbol without a hint") {
    ShapeEnv env(ShapeEnvMode::draft);
    const SymInt u = env.fresh_symbol("u");
    const auto here = yobx::source_location::current();
    CHECK(error_of<yobx::GuardOnDataDependentSymNode>([&] { env.evaluate(u > 4, here); }) ==
          "Could not guard on data-dependent expression u0 >= 5 (hints: u0 = ?) at " + at(here) +
              ". Draft mode answers from the hints, but a symbol has no hint; tell yobx the answer with ShapeEnv::check.");
    env.check(u > 4, "more than four");  // no hint: nothing to contradict
    CHECK(env.evaluate(u > 4));
}

TEST_CASE("guard_int returns the value when ranges pin it down, else guards on the hint") {
    ShapeEnv strict;
    const SymInt a = strict.create_symbol("a", 5, ValueRange::between(5, 5));
    const SymInt b = strict.create_symbol("b", 7);
    CHECK(strict.guard_int(a * 2) == 10);
    const auto here = yobx::source_location::current();
    CHECK(error_of<yobx::GuardOnDataDependentSymNode>([&] { strict.guard_int(b + 1, here); }) ==
          "Could not guard on data-dependent expression b + 1 (hints: b = 7) at " + at(here) +
              ". Tell yobx the answer with ShapeEnv::check (torch._check), or use ShapeEnvMode::draft to take the hints' "
              "answer and get a report.");
    ShapeEnv draft(ShapeEnvMode::draft);
    const SymInt d = draft.create_symbol("d", 7);
    CHECK(draft.guard_int(d + 1) == 8);
    CHECK(draft.draft_report().issues()[0].condition.to_string() == "Eq(d, 7)");
    CHECK(draft.size_hint(d * 3) == 21);
}

TEST_CASE("evaluate_with substitutes values into conditions of the env") {
    ShapeEnv env;
    const SymInt s0 = env.create_symbol("s0", 3), s1 = env.create_symbol("s1", 5);
    const SymBool cond = (s0 + s1 == 8) && (s0 < s1);
    CHECK(cond.evaluate_with({{"s0", 3}, {"s1", 5}}));
    CHECK_FALSE(cond.evaluate_with({{"s0", 5}, {"s1", 3}}));
    CHECK((s0 * s1).evaluate_with({{"s0", 3}, {"s1", 5}}) == 15);
}
