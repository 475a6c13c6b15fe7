// Law-based property tests with a fixed seed: random expression trees are built
// both as SymInt (canonical, simplified) and as a plain tree evaluated by a
// naive evaluator written here; for random assignments the two agree, the
// printed form parses back to an identical expression, and hashing agrees with
// equality. The ShapeEnv's ranges are checked to contain every value reached.
#include <yobx/sym.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using yobx::SymBool;
using yobx::SymInt;

namespace {

struct Node {
    enum Kind { constant, symbol, add, sub, mul, neg, floordiv, mod, max, min } kind;
    std::int64_t value = 0;  // constant, or symbol index
    std::vector<std::shared_ptr<Node>> kids;
};
using Tree = std::shared_ptr<Node>;

const char* const names[] = {"s0", "s1", "s2", "s3"};

// Python semantics, written independently of yobx.
std::int64_t py_floordiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}
std::int64_t py_mod(std::int64_t a, std::int64_t b) { return a - b * py_floordiv(a, b); }

struct DivByZero {};

std::int64_t naive(const Node& n, const std::vector<std::int64_t>& v) {
    switch (n.kind) {
        case Node::constant: return n.value;
        case Node::symbol: return v[static_cast<std::size_t>(n.value)];
        case Node::add: return naive(*n.kids[0], v) + naive(*n.kids[1], v);
        case Node::sub: return naive(*n.kids[0], v) - naive(*n.kids[1], v);
        case Node::mul: return naive(*n.kids[0], v) * naive(*n.kids[1], v);
        case Node::neg: return -naive(*n.kids[0], v);
        case Node::floordiv:
        case Node::mod: {
            const std::int64_t a = naive(*n.kids[0], v), b = naive(*n.kids[1], v);
            if (b == 0) throw DivByZero{};
            return n.kind == Node::floordiv ? py_floordiv(a, b) : py_mod(a, b);
        }
        case Node::max: return std::max(naive(*n.kids[0], v), naive(*n.kids[1], v));
        case Node::min: return std::min(naive(*n.kids[0], v), naive(*n.kids[1], v));
    }
    return 0;
}

SymInt build(const Node& n);

/// build(), or nullopt when a divisor folds to the constant 0 (then the naive
/// evaluator divides by zero for every assignment too).
std::optional<SymInt> try_build(const Node& n) {
    try {
        return build(n);
    } catch (const yobx::value_error& e) {
        const std::string what = e.what();
        if (what.find("by zero") == std::string::npos) throw;
        return std::nullopt;
    }
}

SymInt build(const Node& n) {
    switch (n.kind) {
        case Node::constant: return n.value;
        case Node::symbol: return SymInt::symbol(names[n.value]);
        case Node::add: return build(*n.kids[0]) + build(*n.kids[1]);
        case Node::sub: return build(*n.kids[0]) - build(*n.kids[1]);
        case Node::mul: return build(*n.kids[0]) * build(*n.kids[1]);
        case Node::neg: return -build(*n.kids[0]);
        case Node::floordiv: return floordiv(build(*n.kids[0]), build(*n.kids[1]));
        case Node::mod: return mod(build(*n.kids[0]), build(*n.kids[1]));
        case Node::max: return sym_max(build(*n.kids[0]), build(*n.kids[1]));
        case Node::min: return sym_min(build(*n.kids[0]), build(*n.kids[1]));
    }
    return 0;
}

struct Gen {
    std::mt19937_64 rng{20261121};

    std::int64_t pick(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }

    Tree leaf() {
        auto n = std::make_shared<Node>();
        if (pick(0, 2) == 0) {
            n->kind = Node::constant;
            n->value = pick(-6, 9);
        } else {
            n->kind = Node::symbol;
            n->value = pick(0, 3);
        }
        return n;
    }

    Tree tree(int depth) {
        if (depth == 0 || pick(0, 4) == 0) return leaf();
        auto n = std::make_shared<Node>();
        n->kind = static_cast<Node::Kind>(pick(Node::add, Node::min));
        n->kids.push_back(tree(depth - 1));
        if (n->kind == Node::neg) return n;
        if ((n->kind == Node::floordiv || n->kind == Node::mod) && pick(0, 1) == 0) {
            auto k = std::make_shared<Node>();  // a constant divisor, the common case in shape code
            k->kind = Node::constant;
            k->value = pick(0, 1) ? pick(1, 8) : -pick(1, 8);
            n->kids.push_back(k);
        } else {
            n->kids.push_back(tree(depth - 1));
        }
        return n;
    }

    std::vector<std::int64_t> values(std::int64_t lo, std::int64_t hi) {
        return {pick(lo, hi), pick(lo, hi), pick(lo, hi), pick(lo, hi)};
    }
};

bool always_divides_by_zero(const Node& n, Gen& g) {
    for (int a = 0; a < 8; ++a) {
        try {
            naive(n, g.values(-9, 12));
            return false;
        } catch (const DivByZero&) {
        }
    }
    return true;
}

yobx::SymbolValues as_map(const std::vector<std::int64_t>& v) {
    return {{"s0", v[0]}, {"s1", v[1]}, {"s2", v[2]}, {"s3", v[3]}};
}

}  // namespace

TEST_CASE("law: the simplified expression evaluates like the unsimplified tree, 1000 random expressions") {
    Gen g;
    int checked = 0;
    for (int i = 0; i < 1000; ++i) {
        const Tree t = g.tree(5);
        const auto built = try_build(*t);
        if (!built) {
            REQUIRE(always_divides_by_zero(*t, g));
            continue;
        }
        const SymInt& e = *built;
        INFO(e.to_string());
        for (int a = 0; a < 8; ++a) {
            const auto v = g.values(-9, 12);
            std::int64_t expected;
            try {
                expected = naive(*t, v);
            } catch (const DivByZero&) {
                continue;
            }
            REQUIRE(e.evaluate_with(as_map(v)) == expected);
            ++checked;
        }
    }
    CHECK(checked > 4000);
}

TEST_CASE("law: print then parse gives an identical expression with the same hash, 1000 random expressions") {
    Gen g;
    for (int i = 0; i < 1000; ++i) {
        const auto built = try_build(*g.tree(5));
        if (!built) continue;
        const SymInt& e = *built;
        INFO(e.to_string());
        const SymInt back = yobx::parse_sym(e.to_string());
        REQUIRE(back.identical(e));
        REQUIRE(back.hash() == e.hash());
        REQUIRE(back.to_string() == e.to_string());
    }
}

TEST_CASE("law: hashing agrees with equality, and algebraic rewrites give identical forms") {
    Gen g;
    std::vector<SymInt> all;
    for (int i = 0; i < 1000; ++i) {
        const Tree ta = g.tree(3), tb = g.tree(3), tc = g.tree(3);
        const auto ba = try_build(*ta), bb = try_build(*tb), bc = try_build(*tc);
        if (!ba || !bb || !bc) continue;
        const SymInt &a = *ba, &b = *bb, &c = *bc;
        INFO(a.to_string() << " | " << b.to_string() << " | " << c.to_string());
        // commutativity, associativity, distributivity and inverses
        REQUIRE((a + b).identical(b + a));
        REQUIRE((a * b).identical(b * a));
        REQUIRE(((a + b) + c).identical(a + (b + c)));
        REQUIRE((a * (b + c)).identical(a * b + a * c));
        REQUIRE((a + b - b).identical(a));
        REQUIRE(sym_max(a, b).identical(sym_max(b, a)));
        REQUIRE(sym_max(a, a).identical(a));
        REQUIRE(floordiv(4 * a, 4).identical(a));
        REQUIRE(mod(a + 4 * b, 4).identical(mod(a, 4)));
        REQUIRE((a + b).hash() == (b + a).hash());
        all.push_back(a + b);
    }
    for (std::size_t i = 0; i + 1 < all.size(); ++i) {
        const bool same = all[i].identical(all[i + 1]);
        CHECK(same == static_cast<bool>((all[i] == all[i + 1]).maybe_constant().value_or(false)));
        if (same) CHECK(all[i].hash() == all[i + 1].hash());
    }
}

TEST_CASE("law: random conditions evaluate like their parts and print-parse to identical conditions") {
    Gen g;
    for (int i = 0; i < 1000; ++i) {
        const Tree ta = g.tree(3), tb = g.tree(3), tc = g.tree(2), td = g.tree(2);
        const auto ba = try_build(*ta), bb = try_build(*tb), bc = try_build(*tc), bd = try_build(*td);
        if (!ba || !bb || !bc || !bd) continue;
        const SymInt &a = *ba, &b = *bb, &c = *bc, &d = *bd;
        const int op = static_cast<int>(g.pick(0, 5));
        const SymBool r1 = op == 0 ? a == b : op == 1 ? a != b : op == 2 ? a < b : op == 3 ? a <= b : op == 4 ? a > b : a >= b;
        const SymBool r2 = c <= d;
        const bool conjunction = g.pick(0, 1) == 1;
        const SymBool cond = conjunction ? (r1 && !r2) : (!r1 || r2);
        INFO(cond.to_string());
        REQUIRE(yobx::parse_sym_bool(cond.to_string()).identical(cond));
        for (int k = 0; k < 4; ++k) {
            const auto v = g.values(-9, 12);
            bool expected;
            try {
                const std::int64_t x = naive(*ta, v), y = naive(*tb, v);
                const bool e1 = op == 0 ? x == y : op == 1 ? x != y : op == 2 ? x < y : op == 3 ? x <= y : op == 4 ? x > y : x >= y;
                const bool e2 = naive(*tc, v) <= naive(*td, v);
                expected = conjunction ? (e1 && !e2) : (!e1 || e2);
            } catch (const DivByZero&) {
                continue;
            }
            REQUIRE(cond.evaluate_with(as_map(v)) == expected);
        }
    }
}

TEST_CASE("law: ShapeEnv ranges contain every value, and its simplification keeps values") {
    Gen g;
    int checked = 0;
    for (int i = 0; i < 1000; ++i) {
        yobx::ShapeEnv env;
        std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
        for (const char* n : names) {
            const std::int64_t lo = g.pick(-4, 6), hi = lo + g.pick(0, 9);
            ranges.emplace_back(lo, hi);
            env.create_symbol(n, lo, yobx::ValueRange::between(lo, hi));
        }
        const Tree t = g.tree(4);
        const auto built = try_build(*t);
        if (!built) continue;
        const SymInt& e = *built;
        std::optional<SymInt> simplified;
        try {
            simplified = env.simplify(e);
        } catch (const yobx::value_error&) {  // a divisor the ranges make 0: so does every assignment
        }
        if (!simplified) {
            for (int a = 0; a < 6; ++a) {
                std::vector<std::int64_t> v;
                for (const auto& [lo, hi] : ranges) v.push_back(g.pick(lo, hi));
                CHECK_THROWS_AS(naive(*t, v), DivByZero);
            }
            continue;
        }
        const SymInt simple = *simplified;
        const yobx::ValueRange r = env.bound(e);
        INFO(e.to_string() << "  simplified: " << simple.to_string() << "  range " << r.to_string());
        for (int a = 0; a < 6; ++a) {
            std::vector<std::int64_t> v;
            for (const auto& [lo, hi] : ranges) v.push_back(g.pick(lo, hi));
            std::int64_t expected;
            try {
                expected = naive(*t, v);
            } catch (const DivByZero&) {
                continue;
            }
            REQUIRE(r.contains(expected));
            REQUIRE(simple.evaluate_with(as_map(v)) == expected);
            ++checked;
        }
    }
    CHECK(checked > 3000);
}
