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

// ------------------------------------------------------------------------------------
// The laws of docs/symbolic.md, each on random expressions (pure canonical form unless a
// ShapeEnv is named), with the values checked against the naive evaluator.

namespace {

/// A random tree over s0..s2 only (s3 stays free for the summands that must not cancel).
Tree tree_without_s3(Gen& g, int depth) {
    for (;;) {
        Tree t = g.tree(depth);
        bool uses_s3 = false;
        auto visit = [&](auto& self, const Node& n) -> void {
            if (n.kind == Node::symbol && n.value == 3) uses_s3 = true;
            for (const auto& k : n.kids) self(self, *k);
        };
        visit(visit, *t);
        if (!uses_s3) return t;
    }
}

Tree node(Node::Kind k, std::vector<Tree> kids) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->kids = std::move(kids);
    return n;
}
Tree leaf_constant(std::int64_t v) {
    auto n = std::make_shared<Node>();
    n->kind = Node::constant;
    n->value = v;
    return n;
}
Tree leaf_symbol(std::int64_t i) {
    auto n = std::make_shared<Node>();
    n->kind = Node::symbol;
    n->value = i;
    return n;
}

/// A random tree without // and Mod.
Tree polynomial(Gen& g, int depth) {
    for (;;) {
        Tree t = g.tree(depth);
        bool plain = true;
        auto visit = [&](auto& self, const Node& n) -> void {
            if (n.kind == Node::floordiv || n.kind == Node::mod) plain = false;
            for (const auto& k : n.kids) self(self, *k);
        };
        visit(visit, *t);
        if (plain) return t;
    }
}

/// A divisor: a constant 2..8, a symbol, or a symbol plus or minus a constant.
Tree divisor(Gen& g) {
    switch (g.pick(0, 2)) {
        case 0: return leaf_constant(g.pick(2, 8));
        case 1: return leaf_symbol(g.pick(0, 3));
        default: return node(g.pick(0, 1) ? Node::add : Node::sub, {leaf_symbol(g.pick(0, 3)), leaf_constant(g.pick(1, 3))});
    }
}

/// lhs and rhs are identical, and both evaluate like the naive trees where these are defined.
void require_law(Gen& g, const Tree& lhs, const Tree& rhs, int line = __builtin_LINE()) {
    const auto a = try_build(*lhs), b = try_build(*rhs);
    INFO("the law at line " << line);
    if (!a || !b) return;
    INFO(a->to_string() << "  vs  " << b->to_string());
    REQUIRE(a->identical(*b));
    REQUIRE(yobx::parse_sym(a->to_string()).identical(*a));
    for (int k = 0; k < 4; ++k) {
        const auto v = g.values(-9, 12);
        std::int64_t left, right;
        try {
            left = naive(*lhs, v);
            right = naive(*rhs, v);
        } catch (const DivByZero&) {
            continue;
        }
        REQUIRE(left == right);
        REQUIRE(a->evaluate_with(as_map(v)) == left);
    }
}

}  // namespace

TEST_CASE("law (class 2): a divisor of several terms divides exactly what it divides, 500 random expressions") {
    Gen g;
    for (int i = 0; i < 500; ++i) {
        // a quotient without // and Mod: the sum laws rewrite d*(x//k) and may hide the product
        const Tree a = polynomial(g, 2), r = g.tree(2), d = divisor(g);
        const Tree ad = node(Node::mul, {a, d});
        require_law(g, node(Node::floordiv, {ad, d}), a);                                              // (a*d)//d == a
        require_law(g, node(Node::mod, {node(Node::add, {ad, r}), d}), node(Node::mod, {r, d}));     // Mod(a*d + r, d)
        require_law(g, node(Node::floordiv, {node(Node::add, {ad, r}), d}), node(Node::add, {a, node(Node::floordiv, {r, d})}));
    }
}

TEST_CASE("law (class 3): Max/Min absorption, common summand, positive factor, sign and Min + Max, 500 random expressions") {
    Gen g;
    for (int i = 0; i < 500; ++i) {
        const Tree x = g.tree(2), y = g.tree(2);
        const auto bx = try_build(*x), by = try_build(*y);
        const auto lattice_free = [](const std::optional<SymInt>& e) {
            return e && e->to_string().find("Max(") == std::string::npos && e->to_string().find("Min(") == std::string::npos;
        };
        // absorption, for an x without Max or Min of its own (nested lattices may stay undecided)
        if (lattice_free(bx)) {
            require_law(g, node(Node::min, {x, node(Node::max, {y, x})}), x);
            require_law(g, node(Node::max, {x, node(Node::min, {y, x})}), x);
        }
        // a summand of a symbol the arguments do not use, with a constant
        const Tree a = tree_without_s3(g, 2), b = tree_without_s3(g, 2);
        const Tree t = node(Node::add, {node(Node::mul, {leaf_constant(g.pick(1, 4)), leaf_symbol(3)}), leaf_constant(g.pick(-5, 5))});
        require_law(g, node(Node::max, {node(Node::add, {t, a}), node(Node::add, {b, t})}), node(Node::add, {t, node(Node::max, {a, b})}));
        require_law(g, node(Node::min, {node(Node::add, {t, a}), node(Node::add, {b, t})}), node(Node::add, {node(Node::min, {a, b}), t}));
        // the positive factor, on arguments without // and Mod (k*(x//k) is written x - Mod(x, k))
        const Tree k = leaf_constant(g.pick(2, 8)), px = polynomial(g, 2), py = polynomial(g, 2);
        require_law(g, node(Node::max, {node(Node::mul, {k, px}), node(Node::mul, {k, py})}), node(Node::mul, {k, node(Node::max, {px, py})}));
        require_law(g, node(Node::neg, {node(Node::max, {node(Node::neg, {x}), node(Node::neg, {y})})}), node(Node::min, {x, y}));
        // Min(a, b) + Max(a, b): decided when neither a nor b holds a Max or Min (which flattens)
        if (lattice_free(bx) && lattice_free(by))
            require_law(g, node(Node::add, {node(Node::min, {x, y}), node(Node::max, {x, y})}), node(Node::add, {x, y}));
    }
}

TEST_CASE("law (class 4): k*(x//k) + Mod(x, k) == x for constant, symbolic and several-term k, 500 random expressions") {
    Gen g;
    for (int i = 0; i < 500; ++i) {
        const Tree x = g.tree(3), k = divisor(g);
        const Tree q = node(Node::floordiv, {x, k}), m = node(Node::mod, {x, k});
        require_law(g, node(Node::add, {node(Node::mul, {k, q}), m}), x);
        require_law(g, node(Node::sub, {x, m}), node(Node::mul, {k, q}));
        require_law(g, node(Node::sub, {x, node(Node::mul, {q, k})}), m);
    }
}

TEST_CASE("law (classes 1 and 4, ShapeEnv): numerators placed by the ranges, whatever their constant, and nested quotients by a size") {
    Gen g;
    int checked = 0;
    for (int i = 0; i < 300; ++i) {
        yobx::ShapeEnv env;
        for (const char* n : names) env.create_symbol(n, 5, yobx::ValueRange::at_least(2));
        const std::int64_t si = g.pick(0, 3);
        const SymInt s = SymInt::symbol(names[si]);
        const Tree qt = g.tree(2);
        const auto q = try_build(*qt);
        if (!q) continue;
        try {
            (void)env.simplify(*q);
        } catch (const yobx::value_error&) {  // a divisor the ranges make 0
            continue;
        }
        const std::int64_t c = g.pick(1, 2), k = g.pick(2, 8);
        INFO(s.to_string() << " q = " << q->to_string());
        // Mod(s - c, s) is s - c and (q*s - c)//s is q - 1 for s >= 2 > c - 1
        REQUIRE(env.simplify(mod(s - c, s)).identical(env.simplify(s - c)));
        REQUIRE(env.statically_known_true(floordiv(s - c, s) == 0));
        REQUIRE(env.statically_known_true(floordiv(*q * s - c, s) == *q - 1));
        REQUIRE(env.statically_known_true(mod(*q * s - 1, s) == s - 1));
        // ((s**2)//k)//s == s//k and ((q*s)//k)//s == q//k
        REQUIRE(env.statically_known_true(floordiv(floordiv(s * s, k), s) == floordiv(s, k)));
        REQUIRE(env.statically_known_true(floordiv(floordiv(*q * s, k), s) == floordiv(*q, k)));
        for (int a = 0; a < 4; ++a) {  // and the values, at sizes in range
            const auto v = g.values(2, 30);
            try {
                const std::int64_t qv = naive(*qt, v), sv = v[static_cast<std::size_t>(si)];
                REQUIRE(py_floordiv(qv * sv - c, sv) == qv - 1);
                REQUIRE(py_floordiv(py_floordiv(qv * sv, k), sv) == py_floordiv(qv, k));
                ++checked;
            } catch (const DivByZero&) {
            }
        }
    }
    CHECK(checked > 800);
}

TEST_CASE("law (class 2): through remainders and common factors: Mod(Mod(x, j*d), d), Mod(a*d + r, d), (D*x)//(c*D), 500 random expressions") {
    Gen g;
    for (int i = 0; i < 500; ++i) {
        const Tree x = g.tree(2), j = polynomial(g, 1), d = divisor(g);
        // a remainder by a multiple of d, inside a remainder by d
        require_law(g, node(Node::mod, {node(Node::mod, {x, node(Node::mul, {j, d})}), d}), node(Node::mod, {x, d}));
        // a multiple of d whose cofactor holds quotients and remainders, plus symbols
        const Tree a = g.tree(2), r = polynomial(g, 1);
        require_law(g, node(Node::mod, {node(Node::add, {node(Node::mul, {a, d}), r}), d}), node(Node::mod, {r, d}));
        // a common factor of numerator and divisor
        const Tree dd = divisor(g), c = leaf_constant(g.pick(2, 8));
        require_law(g, node(Node::floordiv, {node(Node::mul, {dd, x}), node(Node::mul, {c, dd})}), node(Node::floordiv, {x, c}));
        require_law(g, node(Node::mod, {node(Node::mul, {dd, x}), node(Node::mul, {c, dd})}), node(Node::mul, {dd, node(Node::mod, {x, c})}));
    }
}

TEST_CASE("law (class 4): nested quotients (x//a + c)//k == (x + c*a)//(a*k) for constant a, k >= 1 and polynomials x, c, 500 random expressions") {
    Gen g;
    for (int i = 0; i < 500; ++i) {
        // x without // and Mod: x//a is then one quotient (Mod(s1, 4)//2 is s1//2 - 2*(s1//4), two)
        const Tree x = polynomial(g, 2), c = polynomial(g, 2), a = leaf_constant(g.pick(2, 8)), k = leaf_constant(g.pick(2, 8));
        require_law(g, node(Node::floordiv, {node(Node::add, {node(Node::floordiv, {x, a}), c}), k}),
                    node(Node::floordiv, {node(Node::add, {x, node(Node::mul, {c, a})}), node(Node::mul, {a, k})}));
    }
}
