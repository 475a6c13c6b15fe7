// Generated symbolic expressions and the check of the canonical form and the
// ShapeEnv against a naive evaluator: every rewrite law (polynomial division,
// Max/Min lattice laws, the sum laws, range reductions) must keep the value
// at every assignment, print and parse back identically, and a proof of
// equality or order from the ShapeEnv must hold at every assignment in range.
#pragma once

#include "generators.hpp"

#include <yobx/sym.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuzzgen {

/// A plain expression tree, evaluated with Python's semantics written here.
struct SymNode {
    enum Kind { constant, symbol, add, sub, mul, neg, floordiv, mod, max, min } kind = constant;
    std::int64_t value = 0;  // constant, or symbol index
    std::vector<std::shared_ptr<SymNode>> kids;
};
using SymTree = std::shared_ptr<SymNode>;

inline const char* const sym_names[] = {"s0", "s1", "s2", "u0"};  // s*: sizes >= 2, u0: a size >= 0

struct NaiveUndefined {};  // a division by zero, or a value beyond +-2^40

inline std::int64_t naive_floordiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if (a % b != 0 && (a < 0) != (b < 0)) --q;
    return q;
}

inline std::int64_t naive_eval(const SymNode& n, const std::vector<std::int64_t>& v) {
    constexpr std::int64_t limit = std::int64_t{1} << 40;
    const auto small = [&](bool overflowed, const std::int64_t& x) {
        if (overflowed || x > limit || x < -limit) throw NaiveUndefined{};
        return x;
    };
    std::int64_t r = 0;  // read by small() after the builtin wrote it
    switch (n.kind) {
        case SymNode::constant: return n.value;
        case SymNode::symbol: return v[static_cast<std::size_t>(n.value)];
        case SymNode::add: {
            const std::int64_t a = naive_eval(*n.kids[0], v), b = naive_eval(*n.kids[1], v);
            const bool o = __builtin_add_overflow(a, b, &r);
            return small(o, r);
        }
        case SymNode::sub: {
            const std::int64_t a = naive_eval(*n.kids[0], v), b = naive_eval(*n.kids[1], v);
            const bool o = __builtin_sub_overflow(a, b, &r);
            return small(o, r);
        }
        case SymNode::mul: {
            const std::int64_t a = naive_eval(*n.kids[0], v), b = naive_eval(*n.kids[1], v);
            const bool o = __builtin_mul_overflow(a, b, &r);
            return small(o, r);
        }
        case SymNode::neg: return -naive_eval(*n.kids[0], v);
        case SymNode::floordiv:
        case SymNode::mod: {
            const std::int64_t a = naive_eval(*n.kids[0], v), b = naive_eval(*n.kids[1], v);
            if (b == 0) throw NaiveUndefined{};
            const std::int64_t q = naive_floordiv(a, b);
            return n.kind == SymNode::floordiv ? q : a - b * q;
        }
        case SymNode::max: return std::max(naive_eval(*n.kids[0], v), naive_eval(*n.kids[1], v));
        case SymNode::min: return std::min(naive_eval(*n.kids[0], v), naive_eval(*n.kids[1], v));
    }
    return 0;
}

inline yobx::SymInt sym_build(const SymNode& n) {
    switch (n.kind) {
        case SymNode::constant: return n.value;
        case SymNode::symbol: return yobx::SymInt::symbol(sym_names[n.value]);
        case SymNode::add: return sym_build(*n.kids[0]) + sym_build(*n.kids[1]);
        case SymNode::sub: return sym_build(*n.kids[0]) - sym_build(*n.kids[1]);
        case SymNode::mul: return sym_build(*n.kids[0]) * sym_build(*n.kids[1]);
        case SymNode::neg: return -sym_build(*n.kids[0]);
        case SymNode::floordiv: return floordiv(sym_build(*n.kids[0]), sym_build(*n.kids[1]));
        case SymNode::mod: return mod(sym_build(*n.kids[0]), sym_build(*n.kids[1]));
        case SymNode::max: return sym_max(sym_build(*n.kids[0]), sym_build(*n.kids[1]));
        case SymNode::min: return sym_min(sym_build(*n.kids[0]), sym_build(*n.kids[1]));
    }
    return 0;
}

inline SymTree sym_leaf(Bytes& in) {
    auto n = std::make_shared<SymNode>();
    if (in.below(3) == 0) {
        n->value = static_cast<std::int64_t>(in.below(17)) - 6;
    } else {
        n->kind = SymNode::symbol;
        n->value = static_cast<std::int64_t>(in.below(4));
    }
    return n;
}

inline SymTree sym_tree(Bytes& in, int depth);

/// A divisor: a constant, a size, or a sum of a size and a constant (s0 - 1, s1 + 2).
inline SymTree sym_divisor(Bytes& in, int depth) {
    switch (in.below(4)) {
        case 0: {
            auto n = std::make_shared<SymNode>();
            n->value = static_cast<std::int64_t>(in.below(8)) + 1;
            return n;
        }
        case 1: {
            auto n = std::make_shared<SymNode>();
            n->kind = in.coin() ? SymNode::add : SymNode::sub;
            auto s = std::make_shared<SymNode>();
            s->kind = SymNode::symbol;
            s->value = static_cast<std::int64_t>(in.below(3));
            auto c = std::make_shared<SymNode>();
            c->value = static_cast<std::int64_t>(in.below(3)) + 1;
            n->kids = {s, c};
            return n;
        }
        default: return depth > 0 ? sym_tree(in, depth - 1) : sym_leaf(in);
    }
}

inline SymTree sym_tree(Bytes& in, int depth) {
    if (depth == 0 || in.below(5) == 0) return sym_leaf(in);
    auto n = std::make_shared<SymNode>();
    n->kind = static_cast<SymNode::Kind>(SymNode::add + static_cast<int>(in.below(8)));
    n->kids.push_back(sym_tree(in, depth - 1));
    if (n->kind == SymNode::neg) return n;
    if (n->kind == SymNode::floordiv || n->kind == SymNode::mod)
        n->kids.push_back(sym_divisor(in, depth - 1));
    else
        n->kids.push_back(sym_tree(in, depth - 1));
    return n;
}

/// The laws' pairs: a random tree next to a rewrite of it that the laws make equal.
inline SymTree sym_rewrite(Bytes& in, const SymTree& x) {
    const auto node = [](SymNode::Kind k, std::vector<SymTree> kids) {
        auto n = std::make_shared<SymNode>();
        n->kind = k;
        n->kids = std::move(kids);
        return n;
    };
    const SymTree y = sym_tree(in, 2);
    const SymTree d = sym_divisor(in, 1);
    switch (in.below(6)) {
        case 0: return node(SymNode::add, {node(SymNode::mul, {d, node(SymNode::floordiv, {x, d})}), node(SymNode::mod, {x, d})});
        case 1: return node(SymNode::min, {x, node(SymNode::max, {y, x})});
        case 2: return node(SymNode::sub, {node(SymNode::add, {node(SymNode::min, {x, y}), node(SymNode::max, {x, y})}), y});
        case 3: return node(SymNode::floordiv, {node(SymNode::add, {node(SymNode::mul, {x, d}), y}), d});  // not x: a pair to decide
        case 4: return node(SymNode::neg, {node(SymNode::max, {node(SymNode::neg, {x}), node(SymNode::neg, {y})})});
        default: return node(SymNode::sub, {node(SymNode::max, {node(SymNode::add, {y, x}), node(SymNode::add, {y, d})}), y});
    }
}

inline std::optional<yobx::SymInt> sym_try_build(const SymNode& n) {
    try {
        return sym_build(n);
    } catch (const yobx::value_error&) {  // a constant divisor 0, an overflow, a too large expansion: refused cleanly
        return std::nullopt;
    }
}

/// The value of e at v, nullopt when yobx refuses (division by zero, overflow).
inline std::optional<std::int64_t> sym_value(const yobx::SymInt& e, const std::vector<std::int64_t>& v) {
    try {
        return e.evaluate_with({{"s0", v[0]}, {"s1", v[1]}, {"s2", v[2]}, {"u0", v[3]}});
    } catch (const yobx::value_error&) {
        return std::nullopt;
    }
}

inline void check_sym_laws(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const SymTree x = sym_tree(in, 4);
    const SymTree y = in.coin() ? sym_rewrite(in, x) : sym_tree(in, 4);
    const auto ex = sym_try_build(*x), ey = sym_try_build(*y);
    if (!ex || !ey) return;
    for (const yobx::SymInt* e : {&*ex, &*ey}) {
        const yobx::SymInt back = yobx::parse_sym(e->to_string());
        if (!back.identical(*e) || back.to_string() != e->to_string())
            defect("print and parse differ: " + e->to_string() + " read back as " + back.to_string());
    }
    yobx::ShapeEnv env;
    const std::int64_t hints[] = {3, 5, 7};
    for (int i = 0; i < 3; ++i) env.create_symbol(sym_names[i], hints[i], yobx::ValueRange::at_least(2));
    env.create_symbol("u0", std::nullopt, yobx::ValueRange::size());
    std::optional<yobx::SymInt> sx, sy;
    try {
        sx = env.simplify(*ex);
        sy = env.simplify(*ey);
    } catch (const yobx::value_error&) {
    }
    const yobx::SymBool eq = *ex == *ey, le = *ex <= *ey;
    bool equal = false, below = false, never_equal = false;
    try {
        equal = env.statically_known_true(eq);
        below = env.statically_known_true(le);
        never_equal = env.statically_known_true(!eq);
    } catch (const yobx::value_error& e) {  // a divisor the ranges make 0: then so does every assignment in range
        if (std::string(e.what()).find("by zero in simplify") == std::string::npos) throw;
    }
    for (int k = 0; k < 12; ++k) {
        // any integers for the canonical form; sizes in range for the ShapeEnv
        std::vector<std::int64_t> v(4), sized(4);
        for (auto& a : v) a = static_cast<std::int64_t>(in.below(41)) - 20;
        for (int i = 0; i < 3; ++i) sized[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(in.below(k < 4 ? 2 : 40)) + 2;
        sized[3] = static_cast<std::int64_t>(in.below(k < 4 ? 2 : 40));
        for (const auto& [tree, e] : {std::pair{&x, &*ex}, std::pair{&y, &*ey}}) {
            std::int64_t truth;
            try {
                truth = naive_eval(**tree, v);
            } catch (const NaiveUndefined&) {
                continue;
            }
            const auto got = sym_value(*e, v);
            if (got && *got != truth)
                defect("the canonical form " + e->to_string() + " is " + std::to_string(*got) + ", the expression " +
                       std::to_string(truth));
        }
        std::int64_t tx, ty;
        try {
            tx = naive_eval(*x, sized);
            ty = naive_eval(*y, sized);
        } catch (const NaiveUndefined&) {
            continue;
        }
        const std::string at = " at s0=" + std::to_string(sized[0]) + " s1=" + std::to_string(sized[1]) +
                               " s2=" + std::to_string(sized[2]) + " u0=" + std::to_string(sized[3]);
        if (equal && tx != ty) defect("proved " + eq.to_string() + ", false" + at);
        if (never_equal && tx == ty) defect("proved " + (!eq).to_string() + ", false" + at);
        if (below && tx > ty) defect("proved " + le.to_string() + ", false" + at);
        if (sx && sy) {
            const auto vx = sym_value(*sx, sized), vy = sym_value(*sy, sized);
            if ((vx && *vx != tx) || (vy && *vy != ty))
                defect("the ShapeEnv simplifies " + ex->to_string() + " | " + ey->to_string() + " to " + sx->to_string() + " | " +
                       sy->to_string() + ", which differ" + at);
            if (!env.bound(*sx).contains(tx)) defect("the range " + env.bound(*sx).to_string() + " of " + sx->to_string() + " misses " + std::to_string(tx) + at);
        }
    }
}

}  // namespace fuzzgen
