// yobx/sym/shape_env/simplify.hpp — ShapeEnv::simplify's laws: what the
// ranges, replacements and divisibility facts rewrite.
//
// Laws: a symbol with a replacement is replaced; Max/Min drop an argument
// another provably dominates (Max(s0, 1) is s0 for s0 >= 1); num//den is q and
// Mod(num, den) is num - q*den when the ranges prove q*den <= num < (q+1)*den
// (Mod(s0, s0 + 1) is s0 for s0 >= 0); (x//a + c)//b is (x + c*a)//(a*b) for
// b >= 0; terms known to be multiples of k vanish from Mod(., k) and
// c*(p//k) is (c/k)*p when k divides c and p (Mod(3*s0 + 2, 4) is 2 when 8
// divides s0). test_shape_env.cpp holds these examples.
#pragma once

#include <yobx/sym/shape_env/env.hpp>

namespace yobx {

template <class>
auto ShapeEnv::simplified(const Poly& p) const -> Poly {
    Simplifier s{*this, false};
    return detail::sym::rebuild(p, s);
}

template <class>
auto ShapeEnv::simplified(const Cond& c) const -> Cond {
    if (!c.node) return c;
    const auto& n = *c.node;
    switch (n.kind) {
        case BoolKind::and_:
        case BoolKind::or_: {
            std::vector<Cond> args;
            for (const auto& a : n.args) args.push_back(simplified(Cond{false, a}));
            return detail::sym::junction(n.kind, args);
        }
        default: return detail::sym::relation(n.kind, simplified(n.diff));
    }
}

template <class>
auto ShapeEnv::simplify_atom(AtomKind kind, const Polys& args) const -> Poly {
    Poly p = detail::sym::PlainAtoms::make(kind, args);
    std::int64_t k = 1;
    const detail::sym::Atom* a = detail::sym::lone_atom(p, k);
    if (a == nullptr || a->kind != kind) {
        // the canonical form made new atoms (Max(s0 - 1, -1) is Max(0, s0) - 1): simplify those too
        if (p.is_constant() || depth_ >= max_depth) return p;
        const detail::Nesting nested(depth_);
        Simplifier atoms_only{*this, true};
        return detail::sym::rebuild(p, atoms_only);
    }
    if (auto r = atom_laws(*a)) return detail::sym::scale(*r, k);
    return p;
}

/// What the ranges, replacements and facts make of the atom a as it stands: nullopt when
/// no law applies (a stays).
template <class>
auto ShapeEnv::atom_laws(const detail::sym::Atom& atom) const -> std::optional<Poly> {
    const AtomKind kind = atom.kind;
    switch (kind) {
        case AtomKind::max:
        case AtomKind::min: {
            // drop an argument another one provably dominates
            const auto& xs = atom.args;
            detail::sym::Scratch<bool> alive(xs.size(), true);
            for (std::size_t i = 0; i < xs.size(); ++i)
                for (std::size_t j = 0; j < xs.size() && alive[i]; ++j) {
                    if (i == j || !alive[j]) continue;
                    const Poly d = kind == AtomKind::max ? detail::sym::sub(xs[i], xs[j]) : detail::sym::sub(xs[j], xs[i]);
                    if (decide_relation(BoolKind::le, d) == std::optional<bool>(true)) alive[i] = false;
                }
            if (std::find(alive.begin(), alive.end(), false) == alive.end()) return std::nullopt;
            Polys kept;
            for (std::size_t i = 0; i < xs.size(); ++i)
                if (alive[i]) kept.push_back(xs[i]);
            return detail::sym::extremum(kind, kept);
        }
        case AtomKind::floordiv:
        case AtomKind::mod: {
            const Poly& num = atom.args[0];
            const Poly& den = atom.args[1];
            namespace ds = detail::sym;
            // q*den <= num < (q + 1)*den for a q the ranges prove: num//den == q and
            // Mod(num, den) == num - q*den, whatever the sign of num's constant
            if (const auto q = quotient_in_range(num, den)) {
                if (kind == AtomKind::floordiv) return ds::constant(*q);
                return ds::sub(num, ds::scale(den, *q));
            }
            // (x//a + c)//b == (x + c*a)//(a*b) for b >= 1 (b == 0 is outside the domain), c any
            // terms without a quotient
            const detail::sym::Atom* in = ds::lone_quotient(num);
            if (kind == AtomKind::floordiv && in && bound_of(den).lower >= 0) {
                return simplified(ds::floordiv(ds::unnested(num, *in), ds::mul(in->args[1], den)));
            }
            // Mod(x//a + c, b) == x//a + c - b*((x//a + c)//b) for b >= 0, whose quotient the rule above simplifies
            if (kind == AtomKind::mod && in && !den.is_constant() && bound_of(den).lower >= 0)
                return ds::sub(num, ds::mul(den, simplify_atom(AtomKind::floordiv, {num, den})));
            if (kind == AtomKind::mod && den.is_constant()) {
                // terms known to be multiples of the divisor vanish: Mod(3*s0 + 2, 4) is 2 when 8 divides s0
                detail::sym::Terms kept;
                for (const auto& t : num.terms) {
                    detail::sym::Poly one = detail::sym::from_sorted(0, {t});
                    if (!divisible(one, den.constant)) kept.push_back(t);
                }
                if (kept.size() != num.terms.size())
                    return detail::sym::mod(detail::sym::from_sorted(num.constant, std::move(kept)), den);
            }
            return std::nullopt;
        }
        default: return std::nullopt;
    }
}

/// The q with q*den <= num < (q + 1)*den, when the ranges prove it for den >= 1:
/// from num's range for a constant den, else q in {0, -1, 1}.
template <class>
auto ShapeEnv::quotient_in_range(const Poly& num, const Poly& den) const -> std::optional<std::int64_t> {
    namespace ds = detail::sym;
    const ValueRange d = bound_of(den);
    if (d.lower < 1) return std::nullopt;
    if (den.is_constant()) {
        const ValueRange n = bound_of(num);
        if (infinite(n.lower) || infinite(n.upper)) return std::nullopt;
        const std::int64_t q = ds::floordiv(n.lower, den.constant);
        if (q == ds::floordiv(n.upper, den.constant)) return q;
        return std::nullopt;
    }
    const auto proven = [&](const Poly& le_zero) { return decide_relation(BoolKind::le, le_zero) == std::optional<bool>(true); };
    for (const std::int64_t q : {0, -1, 1}) {
        try {
            if (!proven(ds::sub(ds::scale(den, q), num))) continue;                             // q*den - num <= 0
            if (proven(ds::add(ds::sub(num, ds::scale(den, q + 1)), ds::constant(1)))) return q;  // num - (q+1)*den + 1 <= 0
        } catch (const detail::sym::overflow&) {
        }
    }
    return std::nullopt;
}

/// c*(p//k) is (c/k)*p when k divides both c and p.
template <class>
auto ShapeEnv::simplify_term(const Poly& t) const -> std::optional<Poly> {
    std::int64_t c = 1;
    const detail::sym::Atom* a = detail::sym::lone_atom(t, c);
    if (a == nullptr || a->kind != AtomKind::floordiv || !a->args[1].is_constant()) return std::nullopt;
    const std::int64_t k = a->args[1].constant;
    if (k <= 0 || c % k != 0 || !divisible(a->args[0], k)) return std::nullopt;
    return detail::sym::scale(a->args[0], c / k);
}

/// gcd of what each term is known to be a multiple of (coefficient times symbol divisors); 0 if no terms.
template <class>
auto ShapeEnv::term_divisor(const Poly& p) const -> std::int64_t {
    std::int64_t g = 0;
    for (const auto& t : p.terms) {
        std::int64_t m = t.coef;
        try {
            for (const auto& f : t.mono)
                if (f.atom->kind == AtomKind::symbol)
                    if (const SymbolInfo* i = find(f.atom->name)) m = detail::sym::mul(m, detail::sym::pow(i->divisor, f.exp));
        } catch (const detail::sym::overflow&) {
            m = t.coef;
        }
        g = detail::sym::gcd(g, m);
    }
    return g;
}

template <class>
auto ShapeEnv::divisible(const Poly& p, std::int64_t k) const -> bool {
    if (k == 0) return false;
    const std::int64_t g = detail::sym::gcd(term_divisor(p), p.constant);
    return g % k == 0;
}

}  // namespace yobx
