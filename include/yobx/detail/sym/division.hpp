// yobx/detail/sym/division.hpp — exact and floor division, and Mod.
//
// Laws (Python's floor semantics, divisor != 0 else zero_division):
// - a constant divisor: common content out (floordiv(4*s0, 4) is s0), multiples
//   of k out of the numerator (mod(s0 + 4*s1, 4) is Mod(s0, 4)), nested quotients
//   merged (floordiv(floordiv(s0, 2) + s1, 3) is (s0 + 2*s1)//6);
// - a polynomial divisor: the exact quotient of the numerator's part it divides
//   (floordiv(s0*s1 + s0, s0) is s1 + 1), with several divisors, through
//   remainders (mod(s1*(s1 - 1) + s2, s1 - 1) is Mod(s2, s1 - 1)) and primitive
//   parts (floordiv((s0 + 1)*x, 3*s0 + 3) is x//3);
// - nested Mod by a multiple: mod(mod(x, 5*(s2 + 1)), s2 + 1) is Mod(x, s2 + 1).
// Rewriting depth is bounded (Deeper: max_rewrite_depth, else too_large{true}).
// Examples from test_sym.cpp.
#pragma once

#include <yobx/detail/sym/build.hpp>

namespace yobx::detail::sym {

template <class = void>
Poly floordiv(const Poly& a, const Poly& b);
template <class = void>
Poly mod(const Poly& a, const Poly& b);

template <class = void>
std::optional<std::pair<Poly, Poly>> divide(const Poly& a, const Poly& d, bool exact, bool settled = true);

/// p / d when d divides p exactly (integer coefficients), nullopt otherwise or when
/// the division would overflow (or throws overflow): a constant d divides every coefficient, a divisor of
/// terms leaves no remainder.
template <class = void>
std::optional<Poly> exact_quotient(const Poly& p, const Poly& d) {
    if (d.is_constant()) {
        if (d.constant == 0 || p.constant % d.constant != 0) return std::nullopt;
        for (const auto& t : p.terms)
            if (t.coef % d.constant != 0) return std::nullopt;
        if (d.constant == -1) return negate(p);  // throws overflow on INT64_MIN
        Terms out = p.terms;
        for (auto& t : out) t.coef /= d.constant;
        return settle(from_sorted(p.constant / d.constant, std::move(out)));
    }
    if (equal(p, d)) return constant(1);
    auto qr = divide(p, d, true);
    if (!qr || !is_zero(qr->second)) return std::nullopt;
    return std::move(qr->first);
}

/// A remainder whose multiple is a multiple of d, inside a numerator divided by d, is
/// its numerator: c*m*Mod(y, k) == c*m*y - d*(m*j*(y//k)) when c*k == j*d for a
/// polynomial j (Mod(Mod(x, 2*s0), s0) == Mod(x, s0), Mod(x + Mod(x, 2), 2) == 0).
/// Returns {a', q} with a == a' - d*q when a has such a factor, nullopt otherwise.
/// A symbolic k by a constant d only `for_mod` (q dropped): in a quotient, q would
/// keep k*(y//k), which the sum laws do not take back for a k with quotients.
template <class = void>
std::optional<std::pair<Poly, Poly>> drop_mods(const Poly& a, const Poly& d, bool for_mod) {
    for (const auto& t : a.terms)
        for (std::size_t i = 0; i < t.mono.size(); ++i) {
            const Atom& m = *t.mono[i].atom;
            if (m.kind != AtomKind::mod || t.mono[i].exp != 1) continue;
            const Poly& k = m.args[1];
            std::optional<Poly> j;
            try {
                if (equal(k, d))
                    j = constant(t.coef);
                else if (d.is_constant() ? k.is_constant() || for_mod : !k.is_constant())
                    j = exact_quotient(scale(k, t.coef), d);
            } catch (const overflow&) {
                continue;
            }
            if (!j || is_zero(*j)) continue;
            Mono rest = t.mono;
            rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
            const Poly mp = rest.empty() ? constant(1) : from_sorted(0, {Term{1, std::move(rest)}});
            const Poly& y = m.args[0];
            // a' = a - c*m*Mod(y, k) + c*m*y, q = m*j*(y//k)
            Poly next = sub(a, from_sorted(0, {Term{t.coef, t.mono}}));
            next = add(next, scale(mul(mp, y), t.coef));
            return std::pair{std::move(next), mul(mul(mp, *j), floordiv(y, k))};
        }
    return std::nullopt;
}

/// x//k1 if p is 1*(x//k1) + c, with no quotient in c's terms; else null.
template <class = void>
const Atom* lone_quotient(const Poly& p) {
    const Atom* found = nullptr;
    for (const auto& t : p.terms)
        for (const auto& f : t.mono) {
            if (f.atom->kind != AtomKind::floordiv) continue;
            if (found || t.coef != 1 || t.mono.size() != 1 || f.exp != 1) return nullptr;
            found = f.atom.get();
        }
    return found;
}

/// How deep divisions by divisors of several terms may nest while they rewrite (per thread).
inline constexpr int max_rewrite_depth = 256;
inline thread_local int rewrite_depth = 0;
struct Deeper {
    Deeper() {
        if (rewrite_depth >= max_rewrite_depth) throw too_large{true};
        ++rewrite_depth;
    }
    ~Deeper() { --rewrite_depth; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
};

/// The remainder Mod(x, b) of a term -Mod(x, b) of p, b > 1 a constant dividing k, when
/// p + Mod(x, b) - x has every coefficient a multiple of b: p is then b*(x//b + m) for a
/// polynomial m, and p + Mod(x, b) is x + b*m (p//k == (p + Mod(x, b))//k). Else null.
template <class = void>
const Atom* floored_multiple(const Poly& p, std::int64_t k) {
    for (const auto& t : p.terms) {
        if (t.coef != -1 || t.mono.size() != 1 || t.mono.front().exp != 1) continue;
        const Atom& m = *t.mono.front().atom;
        if (m.kind != AtomKind::mod || !m.args[1].is_constant()) continue;
        const std::int64_t b = m.args[1].constant;
        if (b <= 1 || k % b != 0) continue;
        try {
            const Poly rest = add_raw(add_raw(p, from_sorted(0, {Term{1, t.mono}})), scale_raw(m.args[0], -1));
            if (content(rest) % b == 0) return &m;
        } catch (const overflow&) {
        }
    }
    return nullptr;
}

/// {c//g, the terms of p divided by g} for g dividing every coefficient of a term of p
/// (not necessarily its constant c): floor((g*y + c)/(g*m)) == floor((y + c//g)/m).
template <class = void>
Poly divide_terms_floor(const Poly& p, std::int64_t g) {
    Terms out = p.terms;
    for (auto& t : out) t.coef /= g;
    return settle(from_sorted(floordiv(p.constant, g), std::move(out)));
}

/// x + c*a for p == x//a + c, inner the quotient x//a (lone_quotient(p)): the numerator
/// of (x//a + c)//k == (x + c*a)//(a*k) (P + x//a == (P*a + x)//a for an integer P, and
/// floor(floor(y)/k) == floor(y/k) for a real y and k >= 1).
template <class = void>
Poly unnested(const Poly& p, const Atom& inner) {
    const Poly c = sub(p, from_atom(make_atom(AtomKind::floordiv, {}, inner.args)));
    return add(inner.args[0], mul(c, inner.args[1]));
}

template <class = void>
Poly floordiv_by_constant(const Poly& a, std::int64_t k) {
    if (k == 0) throw zero_division{false};
    if (a.is_constant()) return constant(floordiv(a.constant, k));
    if (k < 0) return floordiv_by_constant(negate(a), neg(k));
    if (k == 1) return a;
    if (const Atom* m = floored_multiple(a, k)) {  // b*(x//b + m) // (b*j) == (x + b*m) // (b*j)
        const Deeper deeper;
        return floordiv_by_constant(add(a, from_atom(make_atom(AtomKind::mod, {}, m->args))), k);
    }
    if (auto r = drop_mods(a, constant(k), false)) return sub(floordiv_by_constant(r->first, k), r->second);
    // (k*q + r)//k == q + r//k for integer q: pull out the multiples of k.
    Terms q, r;
    for (const auto& t : a.terms) {
        const std::int64_t qv = floordiv(t.coef, k), rv = pymod(t.coef, k);
        if (qv != 0) q.push_back(Term{qv, t.mono});
        if (rv != 0) r.push_back(Term{rv, t.mono});
    }
    Poly quotient = settle(from_sorted(floordiv(a.constant, k), std::move(q)));
    if (r.empty()) return quotient;  // the constant's remainder is < k
    Poly raw = from_sorted(pymod(a.constant, k), std::move(r));
    Poly rest = settle(raw);
    if (!equal(rest, raw)) return add(quotient, floordiv_by_constant(rest, k));  // the sum laws changed it: again
    // floor((g*x + c) / (g*m)) == floor((x + c//g) / m), g dividing the coefficients of x
    if (const std::int64_t g = gcd(terms_content(rest), k); g > 1) return add(quotient, floordiv_by_constant(divide_terms_floor(rest, g), k / g));
    // floor((x//k1 + c) / k) == (x + c*k1) // (k1*k); c: the terms without a quotient
    if (const Atom* inner = lone_quotient(rest)) {
        const Deeper deeper;  // x is smaller than rest, but c*k1 may make quotients again
        return add(quotient, floordiv(unnested(rest, *inner), mul(inner->args[1], constant(k))));
    }
    return add(quotient, from_atom(make_atom(AtomKind::floordiv, {}, pair_of(std::move(rest), constant(k)))));
}

/// m / d if the monomial d divides m.
template <class = void>
std::optional<Mono> mono_divide(const Mono& m, const Mono& d) {
    Mono out;
    std::size_t j = 0;
    for (const auto& f : m) {
        if (j < d.size() && cmp_atom(*f.atom, *d[j].atom) == 0) {
            if (f.exp < d[j].exp) return std::nullopt;
            if (f.exp > d[j].exp) out.push_back(Factor{f.atom, f.exp - d[j].exp});
            ++j;
        } else {
            out.push_back(f);
        }
    }
    if (j != d.size()) return std::nullopt;
    return out;
}

/// The greatest monomial dividing every term of a and b (empty when either has a constant).
template <class = void>
Mono common_monomial(const Poly& a, const Poly& b) {
    if (a.constant != 0 || b.constant != 0 || a.terms.empty() || b.terms.empty()) return {};
    Mono m = a.terms.front().mono;
    auto meet = [&m](const Mono& x) {
        Mono out;
        std::size_t j = 0;
        for (const auto& f : m) {
            while (j < x.size() && cmp_atom(*x[j].atom, *f.atom) < 0) ++j;
            if (j < x.size() && cmp_atom(*x[j].atom, *f.atom) == 0) out.push_back(Factor{f.atom, std::min(f.exp, x[j].exp)});
        }
        m = std::move(out);
    };
    for (const auto& t : a.terms) meet(t.mono);
    for (const auto& t : b.terms) meet(t.mono);
    return m;
}

/// p with every monomial divided by m (which divides them all).
template <class = void>
Poly divide_monomial(const Poly& p, const Mono& m) {
    Terms out;
    std::int64_t c = p.constant;
    for (const auto& t : p.terms) {
        Mono q = *mono_divide(t.mono, m);
        if (q.empty())
            c = add(c, t.coef);
        else
            out.push_back(Term{t.coef, std::move(q)});
    }
    return settle(normalized(c, std::move(out)));
}

/// f(), or nullopt when f overflows int64 or max_terms (a rewriting nested too deep
/// still throws).
template <class F>
auto unless_too_large(F f) -> decltype(f()) {
    try {
        return f();
    } catch (const overflow&) {
        return std::nullopt;
    } catch (const too_large& t) {
        if (t.depth) throw;
        return std::nullopt;
    }
}

/// The most division steps a quotient by a divisor of several terms may take;
/// beyond, the division is left undone (the expression stays as it is).
inline constexpr std::size_t max_division_steps = 256;

/// Division of a by d (not constant, positive leading coefficient lc, leading
/// monomial M): a == q*d + r, taking out of a each term c*M*m with q-part
/// floor(c/lc)*m (`exact`: only when lc divides c), highest term first. Then no
/// term of r is reducible, which makes r unique. nullopt when nothing is taken
/// out, or when the work would exceed max_division_steps, max_terms or int64.
/// `settled`: q and r through the sum laws (else as the division leaves them).
template <class = void>
bool plain_divisor(const Poly& d);

template <class = void>
std::optional<std::pair<Poly, Poly>> divide_any(const Poly& a, const Poly& d, bool exact, bool settled);

template <class>
std::optional<std::pair<Poly, Poly>> divide(const Poly& a, const Poly& d, bool exact, bool settled) {
    if (!plain_divisor(d)) return std::nullopt;
    return divide_any(a, d, exact, settled);
}

/// divide() for any divisor, its atoms taken as independent unknowns: a quotient with
/// no remainder is exact for every value they take, which is what floordiv() uses it
/// for when the divisor holds quotients or remainders (a count of windows
/// `(h - (6*h)//7)*(w - (6*w)//7)` divides `batch` times itself).
template <class>
std::optional<std::pair<Poly, Poly>> divide_any(const Poly& a, const Poly& d, bool exact, bool settled) {
    const Term& lead = d.terms.front();
    const std::int64_t lc = lead.coef;
    return unless_too_large([&]() -> std::optional<std::pair<Poly, Poly>> {
        Poly r = a;
        Terms q;
        std::int64_t qc = 0;
        std::size_t steps = 0;
        for (;;) {
            std::optional<Term> step;
            for (const auto& t : r.terms) {
                if (exact ? t.coef % lc != 0 : floordiv(t.coef, lc) == 0) continue;
                if (auto m = mono_divide(t.mono, lead.mono)) {
                    step = Term{floordiv(t.coef, lc), std::move(*m)};
                    break;
                }
            }
            if (!step) break;
            if (++steps > max_division_steps) return std::nullopt;
            Poly qt = step->mono.empty() ? constant(step->coef) : from_sorted(0, {*step});
            r = add_raw(r, scale_raw(mul_raw(qt, d), -1));
            if (r.terms.size() > max_terms) return std::nullopt;
            if (step->mono.empty())
                qc = add(qc, step->coef);
            else
                q.push_back(std::move(*step));
        }
        if (steps == 0) return std::nullopt;
        Poly quotient = normalized(qc, std::move(q));
        if (!settled) return std::pair{std::move(quotient), std::move(r)};
        return std::pair{settle(std::move(quotient)), settle(std::move(r))};
    });
}

/// Whether every factor of d is a symbol: the divisors divide() takes (the sum laws
/// could write a remainder by a divisor with quotients back into a reducible one).
template <class>
bool plain_divisor(const Poly& d) {
    for (const auto& t : d.terms)
        for (const auto& f : t.mono)
            if (f.atom->kind != AtomKind::symbol) return false;
    return true;
}

/// num == q*d + r once each Mod(y, k) of num is written y - k*(y//k) (expand_mods): the sum laws
/// turn (s0 + s0//s2)*(s2 - 1) into s0*s2 - Mod(s0, s2) - s0//s2, where d no longer
/// divides term by term. nullopt when nothing is taken out, or when r holds a
/// quotient or remainder that num does not (one the expansion made). The sum laws
/// may write r's quotients back as remainders, so a quotient or remainder of r by d
/// must not take this way again with a remainder (it could cycle): it is taken with
/// a remainder only outside such a rewrite (dividing_through_mods).
inline thread_local bool dividing_through_mods = false;

struct ThroughMods {
    ThroughMods() { dividing_through_mods = true; }
    ~ThroughMods() { dividing_through_mods = false; }
    ThroughMods(const ThroughMods&) = delete;
    ThroughMods& operator=(const ThroughMods&) = delete;
};

/// p with each Mod(y, k) factor written y - k*(y//k) (raw), y as it is: expanding y's own
/// remainders too made a chain Mod(Mod(Mod(x, a), b), c)... exponential in its depth (the
/// sum laws rebuilt each inner remainder from its expansion, through this division again).
/// Another factor is multiplied in with its exponent at once (s0**873043223 is one
/// product, not 873043223); a Mod(y, k)**e with e > max_terms is refused as too
/// large (y - k*(y//k) has two terms or more), as power() refuses such powers.
template <class = void>
Poly expand_mods(const Poly& p) {
    Poly expanded = constant(p.constant);
    for (const auto& t : p.terms) {
        Poly term = constant(t.coef);
        for (const auto& f : t.mono) {
            if (f.atom->kind != AtomKind::mod) {
                term = mul_raw(term, from_sorted(0, {Term{1, {f}}}));
                continue;
            }
            if (f.exp > static_cast<std::int64_t>(max_terms)) throw too_large{};
            const Poly& k = f.atom->args[1];
            const Poly x = add_raw(f.atom->args[0], scale_raw(mul_raw(k, from_atom(make_atom(AtomKind::floordiv, {}, f.atom->args))), -1));
            for (std::int64_t e = 0; e < f.exp; ++e) term = mul_raw(term, x);
        }
        expanded = add_raw(expanded, term);
    }
    return expanded;
}

/// expand_mods(p), nullopt when p has no Mod factor or the expansion is too large: what
/// the divisions through remainders below divide.
template <class = void>
std::optional<Poly> mods_expanded(const Poly& p) {
    const bool has_mod = std::any_of(p.terms.begin(), p.terms.end(), [](const Term& t) {
        return std::any_of(t.mono.begin(), t.mono.end(), [](const Factor& f) { return f.atom->kind == AtomKind::mod; });
    });
    if (!has_mod) return std::nullopt;
    return unless_too_large([&]() -> std::optional<Poly> { return expand_mods(p); });
}

/// expanded (num's mods_expanded) == q*d + r, nullopt when nothing is taken out or when
/// r holds a quotient or remainder that num does not (see dividing_through_mods).
template <class = void>
std::optional<std::pair<Poly, Poly>> divides_through_mods(const Poly& num, const Poly& expanded, const Poly& d) {
    auto qr = divide(expanded, d, false);
    if (!qr) return std::nullopt;
    if (!is_zero(qr->second)) {
        if (dividing_through_mods) return std::nullopt;
        // a remainder keeps no quotient or remainder the expansion made (the division
        // only moved them around): every atom of it a symbol or an atom of num
        for (const auto& t : qr->second.terms)
            for (const auto& f : t.mono)
                if (f.atom->kind != AtomKind::symbol && std::none_of(num.terms.begin(), num.terms.end(), [&](const Term& u) {
                        return std::any_of(u.mono.begin(), u.mono.end(), [&](const Factor& g) { return cmp_atom(*g.atom, *f.atom) == 0; });
                    }))
                    return std::nullopt;
    }
    return qr;
}

struct Cancelled {
    Poly num, den;
    Mono m;
};

/// {num/m, d/m, m} for the greatest monomial m dividing d and num's expansion (mods_expanded):
/// s0*Mod(-3*s3, s0) + 3*s0*s3 is -s0**2*((-3*s3)//s0), which s0 divides; nullopt when there
/// is no such m.
template <class = void>
std::optional<Cancelled> common_monomial_through_mods(const Poly& expanded, const Poly& d) {
    const Mono m = common_monomial(expanded, d);
    if (m.empty()) return std::nullopt;
    return unless_too_large([&]() -> std::optional<Cancelled> { return Cancelled{divide_monomial(expanded, m), divide_monomial(d, m), m}; });
}

/// num == D*quotient for the primitive part D == d/c of d (several terms, content c > 1).
struct PrimitivePart {
    Poly quotient;
    std::int64_t content;
    Poly part;
};

/// The PrimitivePart of d when it divides num exactly, or num's expansion (mods_expanded: the
/// sum laws write (s0 + s1)*(x//s1) as s0*(x//s1) + x - Mod(x, s1)); nullopt otherwise
/// (c == 1 is an exact division by d itself).
template <class = void>
std::optional<PrimitivePart> primitive_part_divides(const Poly& num, const std::optional<Poly>& expanded, const Poly& d) {
    const std::int64_t c = content(d);
    if (c <= 1 || d.terms.size() + (d.constant != 0) < 2) return std::nullopt;
    Poly D = divide_exact(d, c);
    auto q = unless_too_large([&] { return exact_quotient(num, D); });
    if (!q && expanded) q = unless_too_large([&] { return exact_quotient(*expanded, D); });
    if (!q) return std::nullopt;
    return PrimitivePart{std::move(*q), c, std::move(D)};
}

template <class>
Poly floordiv(const Poly& a, const Poly& b) {
    if (b.is_constant()) return floordiv_by_constant(a, b.constant);
    if (is_zero(a)) return a;
    const Deeper deeper;
    const std::int64_t g = gcd(content(a), content(b));
    Poly num = divide_exact(a, g), den = divide_exact(b, g);
    // floor(m*x / (m*y)) == floor(x/y): a common monomial leaves both sides (where m != 0, as the divisor is)
    if (const Mono m = common_monomial(num, den); !m.empty()) return floordiv(divide_monomial(num, m), divide_monomial(den, m));
    if (leading_negative(den)) {  // floor(a/b) == floor(-a/-b)
        num = negate(num);
        den = negate(den);
    }
    const std::optional<Poly> expanded = mods_expanded(num);
    // floor(D*x / (c*D)) == floor(x/c) for the primitive part D of a divisor of several terms
    if (auto x = primitive_part_divides(num, expanded, den)) return floordiv_by_constant(x->quotient, x->content);
    // floor((q*d + r)/d) == q + floor(r/d) for a polynomial q (an exact quotient first)
    auto qr = divide(num, den, false);
    if (qr && is_zero(qr->second)) return qr->first;
    if (auto r = drop_mods(num, den, false)) return sub(floordiv(r->first, den), r->second);
    if (qr) return add(qr->first, floordiv(qr->second, den));
    if (expanded) {
        if (auto through = divides_through_mods(num, *expanded, den)) {
            if (is_zero(through->second)) return through->first;
            const ThroughMods once;
            return add(through->first, floordiv(through->second, den));
        }
        if (auto c = common_monomial_through_mods(*expanded, den)) return floordiv(c->num, c->den);
    }
    // floor(q*d / d) == q for a divisor with quotients or remainders, when it divides exactly
    if (!plain_divisor(den))
        if (auto exact = divide_any(num, den, true, true); exact && is_zero(exact->second)) return exact->first;
    return from_atom(make_atom(AtomKind::floordiv, {}, pair_of(std::move(num), std::move(den))));
}

template <class>
Poly mod(const Poly& a, const Poly& b);

template <class = void>
Poly mod_by_constant(const Poly& a, std::int64_t k) {
    if (k == 0) throw zero_division{true};
    if (a.is_constant()) return constant(pymod(a.constant, k));
    if (k < 0) return negate(mod_by_constant(negate(a), neg(k)));  // a % -k == -((-a) % k)
    if (k == 1) return constant(0);
    if (const Atom* m = floored_multiple(a, k)) {  // Mod(p, k) == Mod(p + Mod(x, b), k) - Mod(x, b), as for p//k
        const Deeper deeper;
        const Poly mp = from_atom(make_atom(AtomKind::mod, {}, m->args));
        return sub(mod_by_constant(add(a, mp), k), mp);
    }
    if (auto r = drop_mods(a, constant(k), true)) return mod_by_constant(r->first, k);
    Terms r;
    for (const auto& t : a.terms)
        if (const std::int64_t rv = pymod(t.coef, k); rv != 0) r.push_back(Term{rv, t.mono});
    if (r.empty()) return constant(pymod(a.constant, k));
    Poly raw = from_sorted(pymod(a.constant, k), std::move(r));
    Poly rest = settle(raw);
    if (!equal(rest, raw)) return mod_by_constant(rest, k);  // the sum laws changed it: again
    // Mod(g*x + c, g*m) == g*Mod(x + c//g, m) + Mod(c, g), g dividing the coefficients of x
    if (const std::int64_t g = gcd(terms_content(rest), k); g > 1)
        return add(scale(mod_by_constant(divide_terms_floor(rest, g), k / g), g), constant(pymod(rest.constant, g)));
    if (const Atom* inner = single_atom(rest);
        inner && inner->kind == AtomKind::mod && inner->args[1].is_constant() && inner->args[1].constant > 0 &&
        k % inner->args[1].constant == 0)
        return rest;  // Mod(Mod(x, 3), 6) == Mod(x, 3)
    // Mod(x//a + c, k) == x//a + c - k*((x + c*a)//(a*k)): a remainder of a quotient is a difference of
    // quotients (c as in floordiv_by_constant, so that k*(y//k) + Mod(y, k) stays y)
    if (lone_quotient(rest)) return sub(rest, scale(floordiv_by_constant(rest, k), k));
    return from_atom(make_atom(AtomKind::mod, {}, pair_of(std::move(rest), constant(k))));
}

template <class>
Poly mod(const Poly& a, const Poly& b) {
    if (b.is_constant()) return mod_by_constant(a, b.constant);
    if (is_zero(a)) return a;
    const Deeper deeper;
    const std::int64_t g = gcd(content(a), content(b));
    Poly num = divide_exact(a, g), den = divide_exact(b, g);
    // Mod(m*x, m*y) == m*Mod(x, y) for any m != 0 (Python's sign rule included)
    if (const Mono m = common_monomial(num, den); !m.empty())
        return mul(from_sorted(0, {Term{g, m}}), mod(divide_monomial(num, m), divide_monomial(den, m)));
    if (leading_negative(den))  // Mod(a, -b) == -Mod(-a, b)
        return negate(scale(mod(negate(num), negate(den)), g));
    const std::optional<Poly> expanded = mods_expanded(num);
    // Mod(D*x, c*D) == D*Mod(x, c) for the primitive part D of a divisor of several terms
    if (auto x = primitive_part_divides(num, expanded, den)) return scale(mul(x->part, mod_by_constant(x->quotient, x->content)), g);
    // Mod(q*d + r, d) == Mod(r, d) for a polynomial q (an exact quotient first)
    auto qr = divide(num, den, false);
    if (qr && is_zero(qr->second)) return constant(0);
    if (auto r = drop_mods(num, den, true)) return scale(mod(r->first, den), g);
    if (qr) return scale(mod(qr->second, den), g);
    if (expanded) {
        if (auto through = divides_through_mods(num, *expanded, den)) {
            if (is_zero(through->second)) return constant(0);
            const ThroughMods once;
            return scale(mod(through->second, den), g);
        }
        if (auto c = common_monomial_through_mods(*expanded, den))  // Mod(m*x, m*y) == m*Mod(x, y)
            return mul(from_sorted(0, {Term{g, c->m}}), mod(c->num, c->den));
    }
    return scale(from_atom(make_atom(AtomKind::mod, {}, pair_of(std::move(num), std::move(den)))), g);
}

}  // namespace yobx::detail::sym
