// yobx/detail/sym/settle.hpp — the sum-level laws and their settle loop.
//
// Laws, applied to a sum until none applies (at most max_settle_rounds
// rewrites, else too_large{true}): k*(x//k) + Mod(x, k) == x and its
// polynomial-divisor form (test_sym.cpp: 8*floordiv(x, 8) is "x - Mod(x, 8)",
// s1*floordiv(x, s1) + mod(x, s1) is "x"), and Min(a, b) + Max(a, b) == a + b
// ("s0 + s1"). Every constructor of build.hpp ends here.
#pragma once

#include <yobx/detail/sym/extremum.hpp>

namespace yobx::detail::sym {

/// The most rewrites settle() makes in one sum; beyond, too_large{depth} (a half-settled
/// sum would print a form that parses back differently).
inline constexpr int max_settle_rounds = 1024;

/// Whether a term of p with the quotient q (exponent 1) has a coefficient the divisor's
/// leading coefficient divides and the rest of a monomial its leading monomial divides:
/// settle's cheap test before it computes q's cofactor.
template <class = void>
bool may_take(const Poly& p, const Atom& q) {
    const Poly& d = q.args[1];
    const std::int64_t lc = d.is_constant() ? d.constant : d.terms.front().coef;
    for (const auto& t : p.terms) {
        if (t.coef % lc != 0) continue;
        for (const auto& f : t.mono)
            if (f.exp == 1 && cmp_atom(*f.atom, q) == 0) {
                const Mono& lead = d.is_constant() ? Mono{} : d.terms.front().mono;
                const bool divides = std::all_of(lead.begin(), lead.end(), [&](const Factor& g) {  // each factor of it in t
                    return std::any_of(t.mono.begin(), t.mono.end(),
                                       [&](const Factor& h) { return h.exp >= g.exp && cmp_atom(*h.atom, *g.atom) == 0; });
                });
                if (divides) return true;
                break;
            }
    }
    return false;
}

/// Whether p has a factor x//k for the factor Mod(x, k).
template <class = void>
bool has_quotient_of(const Poly& p, const Atom& m) {
    for (const auto& t : p.terms)
        for (const auto& f : t.mono)
            if (f.atom->kind == AtomKind::floordiv && cmp_poly(f.atom->args[0], m.args[0]) == 0 &&
                cmp_poly(f.atom->args[1], m.args[1]) == 0)
                return true;
    return false;
}

/// The q of q*d*(x//d) in p for the quotient a == x//d: the part of a's cofactor in p
/// that d divides exactly (raw: q*d*(x//d) leaves p exactly); nullopt when there is none.
template <class = void>
std::optional<Poly> taken_multiple(const Poly& p, const Atom& a) {
    Terms cof;
    std::int64_t cc = 0;
    for (const auto& u : p.terms) {
        Mono rest;
        bool has = false;
        for (const auto& g : u.mono) {
            if (!has && g.exp == 1 && cmp_atom(*g.atom, a) == 0)
                has = true;
            else
                rest.push_back(g);
        }
        if (!has) continue;
        if (rest.empty())
            cc = add(cc, u.coef);
        else
            cof.push_back(Term{u.coef, std::move(rest)});
    }
    const Poly& d = a.args[1];
    if (d.is_constant()) {
        Terms q;
        for (const auto& u : cof)
            if (u.coef % d.constant == 0) q.push_back(Term{u.coef / d.constant, u.mono});
        Poly qp = normalized(cc % d.constant == 0 ? cc / d.constant : 0, std::move(q));
        if (is_zero(qp)) return std::nullopt;
        return qp;
    }
    if (auto qr = divide(normalized(cc, std::move(cof)), d, true, false)) return std::move(qr->first);
    return std::nullopt;
}

/// The sum-level laws of the canonical form, applied until none applies:
///  - a multiple of a divisor next to its quotient is the numerator without its
///    remainder: q*d*(x//d) == q*(x - Mod(x, d)), for the part q*d of the
///    cofactor of x//d that d divides exactly (k*(x//k) + Mod(x, k) is then x);
///  - c*Max(a, b) + c*Min(a, b) == c*(a + b) (for the common part of two
///    coefficients of the same sign).
template <class>
Poly settle(Poly p) {
    if (settled_on_sight(p)) return p;  // most sums: no quotient, at most one Max or Min term
    for (int round = 0; round < max_settle_rounds; ++round) {
        const Atom* quotient = nullptr;  // the first x//d with a reducible cofactor
        std::optional<Poly> taken;       // its q
        Scratch<const Atom*> tried;
        std::optional<Poly> rewritten;
        Scratch<const Term*> extremes;            // the terms c*Max(a, b) and c*Min(a, b)
        const Term* extreme[2] = {nullptr, nullptr};  // a Max and a Min term of the same arguments
        for (const auto& t : p.terms) {
            for (const auto& f : t.mono) {
                const Atom* a = f.atom.get();
                // each quotient once per round, whatever may_take says (it scans the whole sum)
                if (a->kind == AtomKind::floordiv && f.exp == 1 && !quotient &&
                    std::none_of(tried.begin(), tried.end(), [&](const Atom* x) { return cmp_atom(*x, *a) == 0; })) {
                    tried.push_back(a);
                    if (may_take(p, *a) && (taken = taken_multiple(p, *a))) quotient = a;
                }
                if ((a->kind == AtomKind::max || a->kind == AtomKind::min) && t.mono.size() == 1 && f.exp == 1 && a->args.size() == 2)
                    extremes.push_back(&t);
            }
        }
        for (std::size_t i = 0; i < extremes.size() && !extreme[0]; ++i)
            for (std::size_t j = i + 1; j < extremes.size(); ++j) {
                const Term& x = *extremes[i];
                const Term& y = *extremes[j];
                const Atom& ax = *x.mono[0].atom;
                const Atom& ay = *y.mono[0].atom;
                if (ax.kind != ay.kind && (x.coef > 0) == (y.coef > 0) && cmp_poly(ax.args[0], ay.args[0]) == 0 &&
                    cmp_poly(ax.args[1], ay.args[1]) == 0) {
                    extreme[0] = &x;
                    extreme[1] = &y;
                    break;
                }
            }
        if (quotient) {
            // p - q*d*(x//d) + q*x - q*Mod(x, d)
            const Poly& x = quotient->args[0];
            const Poly& d = quotient->args[1];
            const Poly f = from_atom(make_atom(AtomKind::floordiv, {}, quotient->args));
            Poly next = add_raw(p, scale_raw(mul_raw(mul_raw(*taken, d), f), -1));
            next = add_raw(next, mul_raw(*taken, x));
            p = add_raw(next, scale_raw(mul_raw(*taken, mod(x, d)), -1));
            continue;
        }
        // c2*m*Mod(y, k) next to c1*m*(y//k), k constant: c2*m*y - c2*k*m*(y//k) (one atom fewer; k does
        // not divide c1 - c2*k, as k does not divide c1 once the rule above is done)
        Scratch<std::pair<const Atom*, bool>> quotient_of;  // has_quotient_of(p, m), once per remainder m
        const auto has_quotient = [&](const Atom& m) {
            for (const auto& [x, has] : quotient_of)
                if (cmp_atom(*x, m) == 0) return has;
            return quotient_of.emplace_back(&m, has_quotient_of(p, m)).second;
        };
        for (const auto& t : p.terms) {
            for (std::size_t i = 0; i < t.mono.size(); ++i) {
                const Atom& m = *t.mono[i].atom;
                if (m.kind != AtomKind::mod || t.mono[i].exp != 1 || !m.args[1].is_constant() || !has_quotient(m)) continue;
                Mono rest = t.mono;
                rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
                const Mono with_quotient = mono_mul(rest, {Factor{make_atom(AtomKind::floordiv, {}, m.args), 1}});
                if (!term_of(p, with_quotient)) continue;
                const Poly cm = rest.empty() ? constant(t.coef) : from_sorted(0, {Term{t.coef, std::move(rest)}});
                Poly next = add_raw(p, scale_raw(from_sorted(0, {Term{t.coef, t.mono}}), -1));
                next = add_raw(next, mul_raw(cm, m.args[0]));
                next = add_raw(next, scale_raw(from_sorted(0, {Term{t.coef, with_quotient}}), neg(m.args[1].constant)));
                rewritten = std::move(next);
                break;
            }
            if (rewritten) break;
        }
        if (rewritten) {
            p = std::move(*rewritten);
            continue;
        }
        if (extreme[0] && extreme[1]) {
            const std::int64_t c1 = extreme[0]->coef, c2 = extreme[1]->coef;
            const std::int64_t c = c1 > 0 ? std::min(c1, c2) : std::max(c1, c2);
            const Atom& m = *extreme[0]->mono[0].atom;
            Poly next = add_raw(p, scale_raw(normalized(0, {Term{c, extreme[0]->mono}, Term{c, extreme[1]->mono}}), -1));
            p = add_raw(next, scale_raw(add_raw(m.args[0], m.args[1]), c));
            continue;
        }
        return p;
    }
    throw too_large{true};
}

}  // namespace yobx::detail::sym
