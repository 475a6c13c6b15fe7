// yobx/detail/sym/extremum.hpp — the Max/Min lattice.
//
// Laws: nested extrema of the same kind flatten (also through k*X + t), constants
// fold, an argument at a constant distance from another or absorbed by it goes
// (Min(x, Max(x, y)) == x), then the common summand, the positive common factor
// and the sign come out: test_sym.cpp: sym_max(s0 + s1, s0 + s2) is
// "s0 + Max(s1, s2)", sym_max(4*s2, 4*s3) is "4*Max(s2, s3)", -sym_max(-s0, -s1)
// is "Min(s0, s1)", sym_min(8*s1, sym_min(s2, sym_min(s3, sym_max(s2, 3)))) is
// "Min(8*s1, s2, s3)". provably_le decides x <= y from the structure alone.
#pragma once

#include <yobx/detail/sym/division.hpp>

namespace yobx::detail::sym {

/// p as an extremum, when p == k*X + t with X a Max or Min atom (the only such
/// factor of p's terms, alone in its term): the effective kind (X's, swapped
/// when k < 0) and the arguments k*x + t (X's own, not copied, when p is X).
struct Spread {
    AtomKind kind;
    Polys built;                    // k*x + t
    const Polys* same = nullptr;    // X's arguments when p is X

    const Polys& args() const { return same ? *same : built; }
};
template <class = void>
std::optional<Spread> spread(const Poly& p) {
    std::optional<std::size_t> at;
    for (std::size_t i = 0; i < p.terms.size(); ++i)
        for (const auto& f : p.terms[i].mono)
            if (f.atom->kind == AtomKind::max || f.atom->kind == AtomKind::min) {
                if (at || p.terms[i].mono.size() != 1 || f.exp != 1) return std::nullopt;
                at = i;
            }
    if (!at) return std::nullopt;
    const Term& x = p.terms[*at];
    const Atom& atom = *x.mono[0].atom;
    Spread s{x.coef > 0 ? atom.kind : (atom.kind == AtomKind::max ? AtomKind::min : AtomKind::max), {}};
    if (x.coef == 1 && p.terms.size() == 1 && p.constant == 0) {  // p is X: 1*x + 0 is x
        s.same = &atom.args;
        return s;
    }
    Terms rest = p.terms;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(*at));
    const Poly t = from_sorted(p.constant, std::move(rest));
    try {
        for (const auto& a : atom.args) s.built.push_back(add(scale(a, x.coef), t));
    } catch (const overflow&) {
        return std::nullopt;
    }
    return s;
}

/// A polynomial with its lone_extremes(), its spread() and its spread's arguments, each
/// made when first asked and kept: provably_le and within ask for the spreads of the same
/// arguments again and again (each argument against each other one, three levels deep).
template <class = void>
struct Spreading {
    const Poly& p;
    std::optional<std::optional<Spread>> spread_;
    Scratch<Spreading> args_;  // the spread's arguments, made once (the vector is not grown after)
    int lone_ = -2;            // lone_extremes(p) once asked (-1: a quotient)

    explicit Spreading(const Poly& q) : p(q) {}
    int lone() {
        if (lone_ == -2) lone_ = lone_extremes(p);
        return lone_;
    }
    const std::optional<Spread>& spread_of() {
        if (!spread_) spread_.emplace(spread(p));
        return *spread_;
    }
    /// The arguments of spread_of(), which holds a spread.
    Scratch<Spreading>& args() {
        if (args_.empty()) {
            const Polys& xs = (*spread_)->args();
            args_.reserve(xs.size());
            for (const auto& e : xs) args_.emplace_back(e);
        }
        return args_;
    }
};

/// Whether settle() leaves p - q as add_raw writes it, and so does negating q: no
/// quotient in either, at most one Max or Min alone in a term between them (settle's
/// own test), and no coefficient of q whose negation overflows. in_p and in_q are
/// lone_extremes(p) and lone_extremes(q): p itself is not read again.
template <class = void>
bool inert_difference(const Poly& q, int in_p, int in_q) {
    if (in_p < 0 || in_q < 0 || in_p + in_q >= 2) return false;
    return std::none_of(q.terms.begin(), q.terms.end(), [](const Term& t) { return t.coef == i64_min; });
}

/// The constant x.p - y.p when it is one (their lone_extremes counted once, by Spreading:
/// the same arguments are compared again and again).
template <class = void>
std::optional<std::int64_t> constant_distance(Spreading<>& x, Spreading<>& y) {
    const Poly& p = x.p;
    const Poly& q = y.p;
    if (inert_difference(q, x.lone(), y.lone())) {  // p - q is constant exactly when the terms are the same: nothing to build
        const bool same = p.terms.size() == q.terms.size() &&
                          std::equal(p.terms.begin(), p.terms.end(), q.terms.begin(), [](const Term& u, const Term& v) {
                              return u.coef == v.coef && cmp_mono(u.mono, v.mono) == 0;
                          });
        if (!same) return std::nullopt;
        std::int64_t d = 0;
        if (__builtin_sub_overflow(p.constant, q.constant, &d)) return std::nullopt;
        return d;
    }
    try {
        const Poly d = sub(p, q);
        if (d.is_constant()) return d.constant;
    } catch (const overflow&) {
    }
    return std::nullopt;
}

/// x <= y for every value of the symbols, seen from the structure: a constant
/// difference, or through the arguments of a Max or Min (`depth` levels).
template <class = void>
bool provably_le(Spreading<>& x, Spreading<>& y, int depth) {
    if (const auto d = constant_distance(x, y)) return *d <= 0;
    if (depth == 0) return false;
    const auto any_all = [&](Scratch<Spreading<>>& es, bool any, bool left) {
        const auto one = [&](Spreading<>& e) { return left ? provably_le(e, y, depth - 1) : provably_le(x, e, depth - 1); };
        return any ? std::any_of(es.begin(), es.end(), one) : std::all_of(es.begin(), es.end(), one);
    };
    if (const auto& sx = x.spread_of(); sx && any_all(x.args(), sx->kind == AtomKind::min, true)) return true;
    if (const auto& sy = y.spread_of(); sy && any_all(y.args(), sy->kind == AtomKind::max, false)) return true;
    return false;
}

/// x <= Max(ys) (is_max) or x >= Min(ys), seen from the structure as provably_le.
template <class = void>
bool within(Spreading<>& x, const Scratch<Spreading<>*>& ys, bool is_max, int depth) {
    for (Spreading<>* y : ys)
        if (is_max ? provably_le(x, *y, depth) : provably_le(*y, x, depth)) return true;
    if (depth == 0) return false;
    const auto& sx = x.spread_of();
    if (!sx) return false;
    auto& es = x.args();
    const auto one = [&](Spreading<>& e) { return within(e, ys, is_max, depth - 1); };
    // in a Max: a Min is below when one argument is, a Max when all are (dually in a Min)
    if ((sx->kind == AtomKind::min) == is_max) return std::any_of(es.begin(), es.end(), one);
    return std::all_of(es.begin(), es.end(), one);
}

/// Max (kind == max) or Min of the arguments, in canonical form: nested ones
/// flattened (also through k*X + t), constants folded, arguments at a constant
/// distance from another or absorbed (Min(x, Max(x, y)) == x) removed; then
/// the common summand, the positive common factor and the sign go out:
/// Max(t + k*a, t + k*b) == t + k*Max(a, b), Max(-a, -b) == -Min(a, b).
template <class = void>
Poly extremum(AtomKind kind, const Polys& args) {
    const bool is_max = kind == AtomKind::max;
    Polys flat;
    std::optional<std::int64_t> best;
    auto take = [&](auto& self, const Poly& p) -> void {
        if (p.is_constant()) {
            best = !best ? p.constant : (is_max ? std::max(*best, p.constant) : std::min(*best, p.constant));
            return;
        }
        if (auto s = spread(p); s && s->kind == kind) {
            for (const auto& inner : s->args()) self(self, inner);
            return;
        }
        flat.push_back(p);
    };
    // Max(x, x) is x as it is written (spreading x could write it differently)
    if (!args.empty() && std::all_of(args.begin(), args.end(), [&](const Poly& a) { return cmp_poly(a, args.front()) == 0; })) return args.front();
    for (const auto& a : args) take(take, a);
    if (best) flat.push_back(constant(*best));
    Scratch<Spreading<>> spreading;  // each argument's spread (and lone_extremes) computed once
    spreading.reserve(flat.size());
    for (const auto& x : flat) spreading.emplace_back(x);
    Scratch<bool> alive(flat.size(), true);
    for (std::size_t i = 0; i < flat.size(); ++i) {
        for (std::size_t j = i + 1; j < flat.size() && alive[i]; ++j) {
            if (!alive[j]) continue;
            const auto d = constant_distance(spreading[i], spreading[j]);
            if (!d) continue;
            if ((*d >= 0) == is_max)
                alive[j] = false;
            else
                alive[i] = false;
        }
    }
    // absorption: an argument at most another one goes from a Max (at least, from a Min):
    // Max(a, Min(a, b)) == a, Min(c, Min(a, b, Max(a, 3))) == Min(a, b, c)
    for (std::size_t i = 0; i < flat.size(); ++i) {
        if (!alive[i]) continue;
        Scratch<Spreading<>*> others;
        for (std::size_t j = 0; j < flat.size(); ++j)
            if (j != i && alive[j]) others.push_back(&spreading[j]);
        if (!others.empty() && within(spreading[i], others, is_max, 3)) alive[i] = false;
    }
    Polys kept;
    for (std::size_t i = 0; i < flat.size(); ++i)
        if (alive[i]) kept.push_back(std::move(flat[i]));
    if (kept.size() == 1) return std::move(kept[0]);
    const auto by_order = [](const Poly& x, const Poly& y) { return cmp_poly(x, y) < 0; };
    const auto same = [](const Poly& x, const Poly& y) { return cmp_poly(x, y) == 0; };
    // what is left is one argument's own family (the others absorbed): that argument as written
    std::sort(kept.begin(), kept.end(), by_order);
    for (const auto& a : args) {
        const auto s = spread(a);
        if (!s || s->kind != kind || s->args().size() != kept.size()) continue;
        Scratch<const Poly*> family;
        for (const auto& x : s->args()) family.push_back(&x);
        std::sort(family.begin(), family.end(), [](const Poly* x, const Poly* y) { return cmp_poly(*x, *y) < 0; });
        if (std::equal(family.begin(), family.end(), kept.begin(), [](const Poly* x, const Poly& y) { return cmp_poly(*x, y) == 0; })) return a;
    }
    try {
        // the common summand: the terms every argument has with the same coefficient,
        // and the smallest constant of the non-constant arguments
        Terms common;
        for (const auto& t : kept.front().terms) {
            bool everywhere = true;
            for (std::size_t i = 1; i < kept.size() && everywhere; ++i)
                everywhere = std::any_of(kept[i].terms.begin(), kept[i].terms.end(), [&](const Term& u) {
                    return u.coef == t.coef && cmp_mono(u.mono, t.mono) == 0;
                });
            if (everywhere) common.push_back(t);
        }
        auto least_constant = [](const Polys& xs) {
            std::optional<std::int64_t> c;
            for (const auto& x : xs)
                if (!x.is_constant()) c = c ? std::min(*c, x.constant) : x.constant;
            return c.value_or(0);
        };
        // kept less the common summand and factor, built only when there is one (kept
        // stays as it is, for the fallback below); kept's arguments are settled, and so
        // are they with a constant added: subtracting nothing is left out
        Polys rest;
        const auto each = [&](const auto& f) {
            if (rest.empty())
                for (const auto& x : kept) rest.push_back(f(x));
            else
                for (auto& x : rest) x = f(x);
        };
        const auto now = [&]() -> const Polys& { return rest.empty() ? kept : rest; };
        Poly t = from_sorted(0, std::move(common));
        if (!t.is_constant()) each([&](const Poly& x) { return sub(x, t); });
        const Poly least = constant(least_constant(now()));
        if (!is_zero(least)) {
            each([&](const Poly& x) { return sub(x, least); });
            t = add(t, least);
        }
        // the positive common factor
        std::int64_t g = 0;
        for (const auto& x : now()) g = gcd(g, content(x));
        if (g > 1) each([&](const Poly& x) { return divide_exact(x, g); });
        // what is left may flatten or absorb further (Max(t - Max(0, a), t + 1) is t + Max(1, -Max(0, a)), t + 1)
        if (!is_zero(t) || g != 1) return add(t, scale(extremum(kind, now()), g));
        // the sign: of Max(A) == -Min(-A), the form whose sorted arguments come last
        Polys negated;
        for (const auto& x : kept) negated.push_back(negate(x));
        const Poly shift = constant(least_constant(negated));
        if (!is_zero(shift))
            for (auto& x : negated) x = sub(x, shift);
        std::sort(negated.begin(), negated.end(), by_order);  // (kept is sorted above)
        // (compared on the non-constant arguments first: Max(-1, s0) stays, Max(-s0, -s1) is -Min(s0, s1);
        // a family its own negation, Min(s0, 5 - s0), is written with Max: 5 - Max(s0, 5 - s0))
        const auto skip = [](Polys& xs) { return xs.begin() + (xs.front().is_constant() ? 1 : 0); };
        const bool flip = std::lexicographical_compare(skip(kept), kept.end(), skip(negated), negated.end(), by_order) ||
                          (std::equal(skip(kept), kept.end(), skip(negated), negated.end(), same) &&
                           (std::lexicographical_compare(kept.begin(), kept.end(), negated.begin(), negated.end(), by_order) ||
                            (!is_max && std::equal(kept.begin(), kept.end(), negated.begin(), negated.end(), same))));
        if (!flip) return from_atom(make_atom(kind, {}, std::move(kept)));  // t is 0, g is 1
        // Max(A) == -(Min(N) + shift) with N = -A - shift
        const AtomKind other = is_max ? AtomKind::min : AtomKind::max;
        return negate(add(from_atom(make_atom(other, {}, std::move(negated))), shift));
    } catch (const overflow&) {  // the factoring overflows: the arguments as they are (sorted)
        return from_atom(make_atom(kind, {}, std::move(kept)));
    }
}

}  // namespace yobx::detail::sym
