// SymInt, SymBool and parse_sym: canonical forms, printing, parsing and errors.
#include <yobx/sym.hpp>

#include <doctest/doctest.h>

#include "../error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using yobx::parse_sym;
using yobx::parse_sym_bool;
using yobx::SymBool;
using yobx::SymInt;

using test::error_of;

namespace {

const SymInt s0 = SymInt::symbol("s0");
const SymInt s1 = SymInt::symbol("s1");
const SymInt s2 = SymInt::symbol("s2");

std::string str(const SymInt& s) { return s.to_string(); }
std::string str(const SymBool& b) { return b.to_string(); }

constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t small = std::numeric_limits<std::int64_t>::min();

}  // namespace

TEST_CASE("the laws of the canonical form: division by several terms, the lattice, the division identity") {
    const SymInt s3 = SymInt::symbol("s3"), x = SymInt::symbol("x");
    // a divisor of several terms divides exactly what it divides
    CHECK(str(floordiv(16 * s0 - 16, s0 - 1)) == "16");
    CHECK(str(mod(5 * s1 + 5, s1 + 1)) == "0");
    CHECK(str(floordiv((s0 + 2) * (2 * s0), s0 + 2)) == "2*s0");
    CHECK(str(mod(s1 * (s1 - 1) + s2, s1 - 1)) == "Mod(s2, s1 - 1)");
    CHECK(str(floordiv(s0 * s1 + s0, s0)) == "s1 + 1");
    // Max and Min: absorption, common summand, positive factor, sign, Min + Max
    CHECK(str(sym_min(8 * s1, sym_min(s2, sym_min(s3, sym_max(s2, 3))))) == "Min(8*s1, s2, s3)");
    CHECK(str(sym_max(s0 + s1, s0 + s2)) == "s0 + Max(s1, s2)");
    CHECK(str(sym_max(s0 + 2, 5)) == "Max(3, s0) + 2");
    CHECK(str(sym_max(4 * s2, 4 * s3)) == "4*Max(s2, s3)");
    CHECK(str(-sym_max(-s0, -s1)) == "Min(s0, s1)");
    CHECK(str(sym_min(s0, s1) + sym_max(s0, s1)) == "s0 + s1");
    // the division identity: k*(x//k) is x - Mod(x, k)
    CHECK(str(8 * floordiv(x, 8)) == "x - Mod(x, 8)");
    CHECK(str(8 * floordiv(x, 8) + mod(x, 8)) == "x");
    CHECK(str(s1 * floordiv(x, s1) + mod(x, s1)) == "x");
    CHECK((x - mod(x, s1)).identical(s1 * floordiv(x, s1)));
    CHECK(str(mod(x + mod(x, 2), 2)) == "0");
}

TEST_CASE("the laws of the canonical form: through remainders, common factors and nested quotients") {
    const SymInt s3 = SymInt::symbol("s3"), x = SymInt::symbol("x"), u0 = SymInt::symbol("u0");
    // a remainder by a multiple of the divisor, and a multiple whose cofactor holds quotients
    CHECK(str(mod(mod(u0, 2 * s0 * s3), s0 * s3)) == "Mod(u0, s0*s3)");
    CHECK(str(mod(mod(x, 5 * (s2 + 1)), s2 + 1)) == "Mod(x, s2 + 1)");
    CHECK(str(mod(floordiv(u0, 2) * (s0 * s1 - 1) + s3, s0 * s1 - 1)) == "Mod(s3, s0*s1 - 1)");
    CHECK(str(floordiv(floordiv(u0, 2) * (s0 * s1 - 1) + s3, s0 * s1 - 1)) == "s3//(s0*s1 - 1) + u0//2");
    // a common factor: the primitive part of the divisor, a constant one, one hidden by k*(y//k) == y - Mod(y, k)
    CHECK(str(floordiv((s0 + 1) * x, 3 * s0 + 3)) == "x//3");
    CHECK(str(mod((s0 + 1) * x, 3 * s0 + 3)) == "s0*Mod(x, 3) + Mod(x, 3)");
    CHECK(str(floordiv(7 * s0 - 3, 28)) == "(s0 + 3)//4 - 1");
    CHECK(str(floordiv(2 * s0 + 1, 4)) == "s0//2");
    CHECK(str(mod(2 * s0 + 1, 4)) == "2*Mod(s0, 2) + 1");
    CHECK(str(floordiv(2 * floordiv(s3, 2), 8)) == "s3//8");
    CHECK(str(mod(2 * floordiv(s3, 2), 8)) == "-Mod(s3, 2) + Mod(s3, 8)");
    // nested quotients, whatever the terms beside the inner one
    CHECK(str(floordiv(floordiv(s0, 2) + s1, 3)) == "(s0 + 2*s1)//6");
    CHECK(str(floordiv(floordiv(s0, 2) + s1 * s2 - 1, 3)) == "(s0 + 2*s1*s2 + 4)//6 - 1");
    CHECK(str(floordiv(floordiv(s0 * u0 + s0, u0 + 1), 8)) == "s0//8");
    // a product of remainders by a symbol they do not hold: left as it is, not an error
    CHECK(str(floordiv(mod(SymInt(13), s0) * mod(s3, 3), s3)) == "(Mod(13, s0)*Mod(s3, 3))//s3");
    // a divisor holding quotients that divides exactly: its atoms taken as unknowns
    const SymInt windows = (s0 - floordiv(6 * s0, 7)) * (s1 - floordiv(6 * s1, 7));
    CHECK(str(floordiv(s2 * windows, windows)) == "s2");
    CHECK(str(floordiv(s2 * windows + 3 * windows, windows)) == "s2 + 3");
    CHECK(str(floordiv(s2 * windows + 1, windows)) == "(" + str(s2 * windows + 1) + ")//(" + str(windows) + ")");
}

TEST_CASE("a division whose rewriting nests too deep is refused with a value_error naming it") {
    // the bound is reached by nesting; here it is reached by starting at the limit
    yobx::detail::sym::rewrite_depth = yobx::detail::sym::max_rewrite_depth;
    const std::string msg = error_of<yobx::value_error>([] { return floordiv(s0 * s1 + 1, s1 + 1); });
    yobx::detail::sym::rewrite_depth = 0;
    CHECK(msg == "expression too deep in (s0*s1 + 1)//(s1 + 1): rewriting its divisions takes more than 256 nested steps or 1024 "
                 "rewrites of a sum");
    CHECK(str(floordiv(s0 * s1 + 1, s1 + 1)) == "s0 + (-s0 + 1)//(s1 + 1)");  // s0*(s1 + 1) taken out
}

TEST_CASE("the canonical form makes the required identities hold structurally") {
    CHECK((s0 + s1).identical(s1 + s0));
    CHECK(str(2 * (s0 + 1) - 2) == "2*s0");
    CHECK((2 * (s0 + 1) - 2).identical(2 * s0));
    CHECK(str(sym_max(s0, s0)) == "s0");
    CHECK(str(floordiv(4 * s0, 4)) == "s0");
    CHECK(str(mod(s0 + 4 * s1, 4)) == "Mod(s0, 4)");
    CHECK(mod(s0 + 4 * s1, 4).identical(mod(s0, 4)));
    CHECK(str(s0 - s0) == "0");
    CHECK((s0 - s0).maybe_constant() == 0);
    // equal expressions compare equal as SymBool constants, and hash equally
    CHECK(static_cast<bool>((s0 + s1) == (s1 + s0)));
    CHECK((s0 + s1).hash() == (s1 + s0).hash());
    CHECK((2 * (s0 + 1) - 2).hash() == (2 * s0).hash());
}

TEST_CASE("constants fold and overflow is an error naming the expression") {
    CHECK(str(SymInt(3) * 4 + 1) == "13");
    CHECK(str(floordiv(SymInt(-7), 2)) == "-4");  // Python: -7 // 2 == -4
    CHECK(str(mod(SymInt(-7), 2)) == "1");        // Python: -7 % 2 == 1
    CHECK(str(mod(SymInt(7), -2)) == "-1");       // Python: 7 % -2 == -1
    CHECK(error_of<yobx::value_error>([] { return SymInt(big) + 1; }) ==
          "integer overflow in 9223372036854775807 + 1: the result does not fit in int64");
    CHECK(error_of<yobx::value_error>([] { return SymInt(small) - 1; }) ==
          "integer overflow in (-9223372036854775807 - 1) - 1: the result does not fit in int64");
    CHECK(error_of<yobx::value_error>([] { return (s0 + 1) * big * 2; }) ==
          "integer overflow in (9223372036854775807*s0 + 9223372036854775807)*2: the result does not fit in int64");
    CHECK(error_of<yobx::value_error>([] { return floordiv(SymInt(small), -1); }) ==
          "integer overflow in (-9223372036854775807 - 1)//(-1): the result does not fit in int64");
    CHECK(error_of<yobx::value_error>([] { return -SymInt(small); }) ==
          "integer overflow in 0 - (-9223372036854775807 - 1): the result does not fit in int64");
    CHECK(error_of<yobx::value_error>([] { return SymInt(std::numeric_limits<std::uint64_t>::max()); }) ==
          "SymInt: 18446744073709551615 does not fit in int64");
}

TEST_CASE("division and modulo by zero are errors naming the expression") {
    CHECK(error_of<yobx::value_error>([] { return floordiv(s0 + 1, 0); }) == "division by zero in (s0 + 1)//0");
    CHECK(error_of<yobx::value_error>([] { return mod(s0, 0); }) == "modulo by zero in Mod(s0, 0)");
    CHECK(error_of<yobx::value_error>([] { return floordiv(SymInt(5), s0 - s0); }) == "division by zero in 5//0");
    CHECK(error_of<yobx::value_error>([] { return floordiv(s0, s1).evaluate_with({{"s0", 3}, {"s1", 0}}); }) ==
          "division by zero while evaluating s0//s1 with {s0 = 3, s1 = 0}");
    CHECK(error_of<yobx::value_error>([] { return mod(s0, s1).evaluate_with({{"s0", 3}, {"s1", 0}}); }) ==
          "modulo by zero while evaluating Mod(s0, s1) with {s0 = 3, s1 = 0}");
    CHECK(error_of<yobx::value_error>([] { return mod(s0, s1).subs({{"s1", 0}}); }) == "modulo by zero in subs on Mod(s0, s1)");
    CHECK(error_of<yobx::value_error>([] { return (mod(s0, s1) == 0).evaluate_with({{"s0", 3}, {"s1", 0}}); }) ==
          "modulo by zero while evaluating Eq(Mod(s0, s1), 0) with {s0 = 3, s1 = 0}");
}

TEST_CASE("printing follows torch's style") {
    CHECK(str(s0 + 2 * s1) == "s0 + 2*s1");
    CHECK(str(sym_max(s1, s0)) == "Max(s0, s1)");
    CHECK(str(sym_min(s1, s0)) == "Min(s0, s1)");
    CHECK(str(floordiv(s0, 2)) == "s0//2");
    CHECK(str(mod(s0, 3)) == "Mod(s0, 3)");
    CHECK(str(s0 * s1 + s0 - 3) == "s0*s1 + s0 - 3");
    CHECK(str(-s0 + 2) == "-s0 + 2");
    CHECK(str(s0 * s0 * s1) == "s0**2*s1");
    CHECK(str(-floordiv(s0, 2)) == "-(s0//2)");  // `-s0//2` would read as (-s0)//2
    CHECK(str(s1 - floordiv(s0, 2)) == "s1 - s0//2");
    CHECK(str(3 * floordiv(s0 + 1, 2)) == "3*((s0 + 1)//2)");
    CHECK(str(floordiv(s0, s1 + 1)) == "s0//(s1 + 1)");
    CHECK(str(floordiv(floordiv(s0, s1), s2)) == "(s0//s1)//s2");
    CHECK(str(SymInt::symbol("s10") + SymInt::symbol("s2")) == "s2 + s10");  // natural order
    CHECK(str(SymInt(small) * s0) == "(-9223372036854775807 - 1)*s0");
}

TEST_CASE("floor division and modulo by constants are simplified") {
    CHECK(str(floordiv(4 * s0 + s1, 4)) == "s0 + s1//4");
    CHECK(str(floordiv(6 * s0 + 3, 9)) == "(2*s0 + 1)//3");
    CHECK(str(floordiv(s0 + 5, 4)) == "(s0 + 1)//4 + 1");
    CHECK(str(floordiv(floordiv(s0, 2), 3)) == "s0//6");
    CHECK(str(floordiv(s0, -1)) == "-s0");
    CHECK(str(floordiv(s0, 1)) == "s0");
    CHECK(str(mod(2 * s0, 4)) == "2*Mod(s0, 2)");
    CHECK(str(mod(3 * s0, 2)) == "Mod(s0, 2)");
    CHECK(str(mod(mod(s0, 6), 3)) == "Mod(s0, 3)");
    CHECK(str(mod(mod(s0, 3), 6)) == "Mod(s0, 3)");
    CHECK(str(mod(s0, 1)) == "0");
    CHECK(str(floordiv(2 * s0, 4 * s1)) == "s0//(2*s1)");
    CHECK(str(floordiv(s0, -s1)) == "(-s0)//s1");
    CHECK(str(mod(s0, -s1)) == "-Mod(-s0, s1)");
}

TEST_CASE("Max and Min flatten, fold constants and drop arguments at a constant distance") {
    CHECK(str(yobx::sym_max({s0, sym_max(s1, 3), 5})) == "Max(5, s0, s1)");
    CHECK(str(sym_max(s0 + 1, s0)) == "s0 + 1");
    CHECK(str(sym_min(s0 + 1, s0)) == "s0");
    CHECK(str(sym_max(SymInt(2), SymInt(7))) == "7");
    CHECK(sym_max(s0, s1).identical(sym_max(s1, s0)));
    CHECK(error_of<yobx::value_error>([] { return yobx::sym_max({}); }) == "sym_max of no arguments");
    CHECK(error_of<yobx::value_error>([] { return yobx::sym_min({}); }) == "sym_min of no arguments");
}

TEST_CASE("comparisons give canonical SymBools, printed like torch") {
    CHECK(str(s0 == s1) == "Eq(s0, s1)");
    CHECK(str(s0 != 3) == "Ne(s0, 3)");
    CHECK(str(s0 >= 2) == "s0 >= 2");
    CHECK(str(s0 > 1) == "s0 >= 2");  // one canonical form for both
    CHECK(str(s0 < s1) == "s0 < s1");
    CHECK(str(s0 > s1) == "s0 > s1");
    CHECK(str(s0 - s1 >= 5) == "s0 >= s1 + 5");
    CHECK(str(2 * s0 <= 2 * s1 + 3) == "s0 <= s1 + 1");  // integers: 2*s0 <= 2*s1 + 3 iff s0 <= s1 + 1
    CHECK(str(2 * s0 == 3) == "False");                   // no integer solution
    CHECK(str(s1 + s0 == 8) == "Eq(s0 + s1, 8)");
    CHECK((s0 < s1).identical(s1 > s0));
    CHECK((s0 < s1).identical(s0 + 1 <= s1));
    CHECK(str((s0 >= 2) && (s0 + s1 == 8)) == "Eq(s0 + s1, 8) & (s0 >= 2)");
    CHECK(str((s0 >= 2) || (s1 != 3)) == "Ne(s1, 3) | (s0 >= 2)");
    CHECK(str(!((s0 >= 2) && (s1 == 3))) == "Ne(s1, 3) | (s0 <= 1)");
    CHECK(str((s0 >= 2) && SymBool(false)) == "False");
    CHECK(str((s0 >= 2) || SymBool(true)) == "True");
    CHECK(str(SymInt(3) < 4) == "True");
}

TEST_CASE("a symbolic SymBool cannot be used as a bool without a ShapeEnv") {
    CHECK(static_cast<bool>(s0 + 1 > s0));
    try {
        (void)static_cast<bool>(s0 > s1);
        FAIL("no exception");
    } catch (const yobx::GuardOnDataDependentSymNode& e) {
        CHECK(std::string(e.what()) ==
              "Could not guard on data-dependent expression s0 > s1 without a ShapeEnv: decide it with "
              "ShapeEnv::evaluate, statically_known_true, guard_or_false or guard_or_true");
        CHECK(e.condition() == "s0 > s1");
    }
}

TEST_CASE("evaluate_with substitutes and computes, subs replaces symbols") {
    CHECK((s0 + 2 * s1).evaluate_with({{"s0", 3}, {"s1", 5}}) == 13);
    CHECK(floordiv(s0 - 7, 2).evaluate_with({{"s0", 0}}) == -4);
    CHECK(mod(s0, s1).evaluate_with({{"s0", -7}, {"s1", 3}}) == 2);
    CHECK(sym_max(s0, s1).evaluate_with({{"s0", 3}, {"s1", 5}}) == 5);
    CHECK(((s0 >= 2) && (s0 + s1 == 8)).evaluate_with({{"s0", 3}, {"s1", 5}}));
    CHECK(error_of<yobx::value_error>([] { return (s0 + s1).evaluate_with({{"s0", 3}}); }) == "evaluate_with: no value for symbol s1 in s0 + s1");
    CHECK(error_of<yobx::value_error>([] { return (s0 * s1).evaluate_with({{"s0", big}, {"s1", 2}}); }) ==
          "integer overflow while evaluating s0*s1 with {s0 = 9223372036854775807, s1 = 2}");
    CHECK(str((s0 + s1).subs({{"s1", s0}})) == "2*s0");
    CHECK(str(sym_max(s0, s1).subs({{"s1", s0 + 1}})) == "s0 + 1");
    CHECK(str(floordiv(s0, s1).subs({{"s1", 4}, {"s0", 4 * s2 + 1}})) == "s2");
    CHECK((s2 * s0 + floordiv(SymInt::symbol("s10"), s1)).free_symbols() == std::vector<std::string>{"s0", "s1", "s2", "s10"});
}

TEST_CASE("pow takes a non-negative constant exponent") {
    CHECK(str(pow(s0 + 1, 2)) == "s0**2 + 2*s0 + 1");
    CHECK(str(pow(2 * s0, 3)) == "8*s0**3");
    CHECK(str(pow(s0, 0)) == "1");
    CHECK(error_of<yobx::value_error>([] { return pow(s0, -1); }) == "pow: negative exponent -1 for s0");
    CHECK(error_of<yobx::value_error>([] { return pow(SymInt(2), 63); }) == "integer overflow in (2)**63: the result does not fit in int64");
}

TEST_CASE("symbol names are checked") {
    CHECK(error_of<yobx::value_error>([] { return SymInt::symbol("2x"); }) ==
          "SymInt::symbol: '2x' is not a valid symbol name (it must start with a letter or '_')");
    CHECK(error_of<yobx::value_error>([] { return SymInt::symbol("Max"); }) == "SymInt::symbol: 'Max' is not a valid symbol name (reserved word)");
    CHECK(error_of<yobx::value_error>([] { return SymInt::symbol("a-b"); }) ==
          "SymInt::symbol: 'a-b' is not a valid symbol name (only letters, digits and '_' are allowed)");
    CHECK(error_of<yobx::value_error>([] { return SymInt::symbol(""); }) == "SymInt::symbol: '' is not a valid symbol name (empty)");
    CHECK(error_of<yobx::value_error>([] { return s0.constant_value(); }) == "SymInt s0 is symbolic, not a constant");
}

TEST_CASE("parse_sym reads torch's printed forms back to the same canonical expression") {
    const std::vector<SymInt> exprs = {s0 + 2 * s1,           sym_max(s0, s1),     floordiv(s0, 2),
                                       mod(s0, 3),            -floordiv(s0, 2),    3 * floordiv(s0 + 1, 2),
                                       floordiv(s0, s1 + 1),  s0 * s0 * s1 - 3,    SymInt(small) * s0 + small,
                                       yobx::sym_min({s0, s1, 4}),  mod(s0, -s1),        floordiv(floordiv(s0, s1), s2),
                                       SymInt(-5),            SymInt(small),       pow(s0 + 1, 3)};
    for (const auto& e : exprs) {
        INFO(e.to_string());
        const SymInt back = parse_sym(e.to_string());
        CHECK(back.identical(e));
        CHECK(back.hash() == e.hash());
    }
    CHECK(str(parse_sym("s1 + s0")) == "s0 + s1");
    CHECK(str(parse_sym("FloorDiv(s0, 2)")) == "s0//2");
    CHECK(str(parse_sym("s0 % 4 + (s0 + 4*s1) % 4")) == "2*Mod(s0, 4)");
    CHECK(str(parse_sym("-2**2 + s0**0")) == "-3");  // Python: -2**2 == -4
    CHECK(str(parse_sym("Max(s0)")) == "s0");
    CHECK(str(parse_sym("  s0\t*\n2 ")) == "2*s0");
}

TEST_CASE("parse_sym_bool reads conditions back") {
    const std::vector<SymBool> conds = {s0 == s1, s0 != 3, s0 >= 2, s0 < s1, s0 - s1 >= 5,
                                        (s0 >= 2) && (s1 == 3), !((s0 >= 2) && (s1 == 3)), SymBool(true), mod(s0, 8) == 0};
    for (const auto& c : conds) {
        INFO(c.to_string());
        CHECK(parse_sym_bool(c.to_string()).identical(c));
    }
    CHECK(str(parse_sym_bool("(s0 + 1) < 3")) == "s0 <= 1");
    CHECK(str(parse_sym_bool("~(s0 == 1) | ((s1 > 4))")) == "Ne(s0, 1) | (s1 >= 5)");
    CHECK(str(parse_sym_bool("s0 != s1 & True")) == "Ne(s0, s1)");
}

TEST_CASE("the address of a templated entry point is taken with its type or <> (docs/symbolic.md)") {
    SymInt (*read)(std::string_view) = &yobx::parse_sym;
    CHECK(str(read("s0 + 2*s0")) == "3*s0");
    const auto read_bool = &yobx::parse_sym_bool<>;
    CHECK(str(read_bool("s0 >= 2")) == "s0 >= 2");
}

TEST_CASE("a remainder's expansion multiplies a power in at once, however large its exponent") {
    // found by fuzz_parse_sym: the expansion multiplied z0s in 873043223 times, one per unit of the exponent
    CHECK(str(parse_sym("z0s**873043223%lA% loo%or%D")) == "Mod(Mod(Mod(Mod(z0s**873043223, lA), loo), or), D)");
    // a remainder raised beyond max_terms is not expanded (it would exceed max_terms terms)
    CHECK(str(parse_sym("Mod(s0, s1)**5000 % s2")) == "Mod(Mod(s0, s1)**5000, s2)");
}

TEST_CASE("a chain of forty remainders by symbols keeps its form (its expansion was exponential in the depth)") {
    // found by fuzz_parse_sym: each remainder's expansion expanded the inner ones too, and the
    // sum laws rebuilt each of them through the same division: 1.7 times the time per level
    const char* const divisors[] = {"x0", "x1", "x2"};
    std::string text = "F", printed = "F";
    for (int i = 1; i <= 40; ++i) {
        const std::string_view k = divisors[i % 3];
        text.append(" % ").append(k);
        printed = std::string("Mod(").append(printed).append(", ").append(k).append(")");
    }
    CHECK(str(parse_sym(text)) == printed);
    CHECK(str(parse_sym("(s0 % s1 % s2) % s2")) == "Mod(Mod(s0, s1), s2)");
}

TEST_CASE("the negation of a condition that does not fit in int64 is a value_error") {
    const SymInt s0 = SymInt::symbol("s0");
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    CHECK(str(!(s0 <= big - 1)) == "s0 >= 9223372036854775807");
    CHECK(error_of<yobx::value_error>([&] { return !(s0 <= big); }) ==
          "integer overflow in ~(s0 <= 9223372036854775807): the result does not fit in int64");
}

TEST_CASE("parse errors name the column and what was expected") {
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 + "); }) ==
          "parse_sym: column 6: expected a number, a symbol, '(' or Max/Min/Mod/FloorDiv, found end of input in \"s0 + \"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 +* 2"); }) ==
          "parse_sym: column 5: expected a number, a symbol, '(' or Max/Min/Mod/FloorDiv, found '*' in \"s0 +* 2\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("((s0)"); }) == "parse_sym: column 6: expected ')', found end of input in \"((s0)\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 s1"); }) ==
          "parse_sym: column 4: expected an operator or end of input, found 's1' in \"s0 s1\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 ** -1"); }) ==
          "parse_sym: column 7: expected a non-negative integer exponent, found '-' in \"s0 ** -1\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("foo(1)"); }) ==
          "parse_sym: column 1: expected Max, Min, Mod or FloorDiv before '(' (unknown function foo), found 'foo' in \"foo(1)\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("Mod(s0)"); }) ==
          "parse_sym: column 1: expected Mod with exactly two arguments, found 'Mod' in \"Mod(s0)\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("9223372036854775808"); }) ==
          "parse_sym: column 1: expected an integer that fits in int64, found '9223372036854775808' in \"9223372036854775808\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("Eq(s0, 1)"); }) ==
          "parse_sym: column 1: expected an integer expression (Eq is a condition), found 'Eq' in \"Eq(s0, 1)\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 / 2"); }) ==
          "parse_sym: column 4: expected an operator or end of input, found '/' in \"s0 / 2\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym(std::string(201, '(') + "s0" + std::string(201, ')')); })
              .starts_with("parse_sym: column 201: expected at most 200 nested parentheses or calls, found '('"));
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 // 0"); }) == "division by zero in s0//0");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("Mod(s0, 0)"); }) == "modulo by zero in Mod(s0, 0)");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("9223372036854775807 + 1"); }) ==
          "integer overflow in 9223372036854775807 + 1: the result does not fit in int64");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("(s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7)**8"); }) ==
          "expression too large in (s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7)**8: the expansion exceeds 4096 terms");
    CHECK(error_of<yobx::value_error>([] { return parse_sym_bool("s0 + 1"); }) ==
          "parse_sym_bool: column 7: expected a comparison (==, !=, <, <=, >, >=), found end of input in \"s0 + 1\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym_bool("(s0 > 1"); }) ==
          "parse_sym_bool: column 8: expected ')', found end of input in \"(s0 > 1\"");
}

TEST_CASE("parse: an operator cut off by the end of input is read as far as it goes") {
    // one character left where `//`, `**`, `<=` take two: not that token (the same
    // messages as before peek compared characters itself)
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 /"); }) ==
          "parse_sym: column 4: expected an operator or end of input, found '/' in \"s0 /\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0*"); }) ==
          "parse_sym: column 4: expected a number, a symbol, '(' or Max/Min/Mod/FloorDiv, found end of input in \"s0*\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("2 **"); }) ==
          "parse_sym: column 5: expected a non-negative integer exponent, found end of input in \"2 **\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym("s0 //"); }) ==
          "parse_sym: column 6: expected a number, a symbol, '(' or Max/Min/Mod/FloorDiv, found end of input in \"s0 //\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym_bool("s0 <"); }) ==
          "parse_sym_bool: column 5: expected a number, a symbol, '(' or Max/Min/Mod/FloorDiv, found end of input in \"s0 <\"");
    CHECK(error_of<yobx::value_error>([] { return parse_sym_bool("s0 ="); }) ==
          "parse_sym_bool: column 4: expected a comparison (==, !=, <, <=, >, >=), found '=' in \"s0 =\"");
    CHECK(str(parse_sym("s0//2")) == "s0//2");
    CHECK(str(parse_sym("s0**2")) == "s0**2");
}

TEST_CASE("SymInt and SymBool key unordered containers by structure") {
    std::unordered_set<SymInt> set{s0 + s1, s1 + s0, 2 * (s0 + 1) - 2, 2 * s0};
    CHECK(set.size() == 2);
    std::unordered_map<SymBool, int> map{{s0 < s1, 1}};
    CHECK(map.count(s1 > s0) == 1);
    CHECK(SymInt(3).identical(SymInt(3)));
    CHECK_FALSE(SymInt(3).identical(s0));
}

TEST_CASE("SymInt values are shared across threads safely") {
    const SymInt shared = sym_max(s0 + 2 * s1, floordiv(s2, 4));
    std::vector<std::thread> threads;
    std::vector<std::string> results(4);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            SymInt acc = shared;
            for (int i = 0; i < 200; ++i) acc = sym_max(acc, shared) + 0;
            results[static_cast<std::size_t>(t)] = (acc + t - t).to_string();
        });
    for (auto& th : threads) th.join();
    for (const auto& r : results) CHECK(r == "Max(s2//4, s0 + 2*s1)");
}

TEST_CASE("symbols are ordered by their names' natural order, also through the keys computed once") {
    using yobx::detail::sym::AtomKind;
    using yobx::detail::sym::cmp_atom;
    using yobx::detail::sym::cmp_name;
    using yobx::detail::sym::make_atom;
    const auto sign = [](int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); };
    // short names (keyed), long ones and those with leading zeros or NUL (compared by cmp_name)
    const std::vector<std::string> names{"s0", "s1", "s2", "s10", "s01", "s001", "s", "s_", "t0", "_x", "x", "xy", "a0",
                                         "batch", "seq", "hidden", "heads", "abcdefgh1", "abcdefghi1", "abcdefghi2",
                                         "s123456789012345", "s1234567890123456", "s999999999999999", "u0", "S0",
                                         std::string("a\0b1", 4), "#0", "#1", "#10"};
    for (const auto& a : names)
        for (const auto& b : names) {
            const auto x = make_atom(AtomKind::symbol, a, {});
            const auto y = make_atom(AtomKind::symbol, b, {});
            INFO(a << " vs " << b);
            CHECK(sign(cmp_atom(*x, *y)) == sign(cmp_name(a, b)));
        }
    CHECK(cmp_name("s2", "s10") < 0);
    CHECK(cmp_name("s01", "s1") < 0);  // same number: the text decides
    CHECK(str(parse_sym("s10 + s2 + s1")) == "s1 + s2 + s10");
    CHECK(str(parse_sym("Max(abcdefghi2, abcdefghi10)")) == "Max(abcdefghi2, abcdefghi10)");
}

TEST_CASE("polynomials copy, move and assign their terms") {
    using yobx::detail::sym::Poly;
    const Poly p = parse_sym("s0 + 2*s1 + 3").poly();
    Poly copy = p;
    CHECK(yobx::detail::sym::to_string(copy) == "s0 + 2*s1 + 3");
    Poly moved = std::move(copy);
    CHECK(yobx::detail::sym::to_string(moved) == "s0 + 2*s1 + 3");
    CHECK(copy.terms.empty());  // NOLINT: moved-from, empty by std::vector's move
    Poly other = parse_sym("s2").poly();
    other = p;
    CHECK(yobx::detail::sym::equal(other, p));
    other = static_cast<const Poly&>(other);  // self-assignment
    CHECK(yobx::detail::sym::to_string(other) == "s0 + 2*s1 + 3");
    other = Poly();
    CHECK(yobx::detail::sym::to_string(other) == "0");
}

TEST_CASE("the per-thread block cache reuses freed arrays of 1 to 8 elements, at most 32 of each length") {
    using yobx::detail::CachedAllocator;
    using yobx::detail::ThreadBlocks;
    struct Item {
        std::int64_t a, b;
    };
    CachedAllocator<Item> alloc;
    Item* p = alloc.allocate(3);
    alloc.deallocate(p, 3);
    Item* q = alloc.allocate(3);
    if constexpr (yobx::detail::block_cache_enabled) CHECK(q == p);  // the freed array comes back
    alloc.deallocate(q, 3);
    Item* big_array = alloc.allocate(9);  // beyond 8 elements: std::allocator, not kept
    alloc.deallocate(big_array, 9);
    // a thread keeps at most 32 arrays of one length; an array made by one thread may be freed by another
    std::vector<Item*> made(40);
    std::thread maker([&] {
        for (auto& m : made) m = CachedAllocator<Item>().allocate(2);
    });
    maker.join();
    std::size_t kept = 0;
    std::thread user([&] {
        for (Item* m : made) CachedAllocator<Item>().deallocate(m, 2);
        kept = ThreadBlocks<Item>::get()->count[1];
    });  // its arrays are released when it ends
    user.join();
    CHECK(kept == (yobx::detail::block_cache_enabled ? 32 : 0));
    CHECK(CachedAllocator<Item>() == CachedAllocator<Item>());
}

TEST_CASE("abbreviated: an expression past the limit as its head, ..., and its count of terms") {
    CHECK(yobx::abbreviated("4*n + 2", 200) == "4*n + 2");
    CHECK(yobx::abbreviated("Max(4*n, 8*n + 2, 2*m)", 10) == "Max(4*n, ... (3 terms, 22 characters)");
    // a sum cut between two terms at depth 0, never inside a parenthesis
    CHECK(yobx::abbreviated("4*n*(m + 1) + 8*Mod(n, 3) - 2*n + 7", 20) == "4*n*(m + 1) ... (4 terms, 35 characters)");
    // a term longer than the limit is cut inside
    CHECK(yobx::abbreviated("Max(aaaaaaaaaaaa, b)", 6) == "Max(aa, ... (2 terms, 20 characters)");
    std::string sum = "s0";
    for (int i = 1; i < 100; ++i) sum += " + " + std::to_string(i) + "*s" + std::to_string(i);
    const std::string cut = yobx::abbreviated(sum);
    CHECK(cut.size() <= 240);
    CHECK(cut.substr(cut.size() - 32) == " ... (100 terms, 875 characters)");
    CHECK(cut.substr(0, 16) == "s0 + 1*s1 + 2*s2");
}
