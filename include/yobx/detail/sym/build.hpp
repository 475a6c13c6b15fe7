// yobx/detail/sym/build.hpp — construction of canonical sums and products.
//
// Laws: terms sorted by monomial, equal monomials merged, zero coefficients
// dropped (normalized); a + b merges two sorted term lists (add_raw), k*a scales
// every coefficient, a*b multiplies out (at most max_terms terms, else
// too_large); then the sum-level laws of settle.hpp apply (add, scale, mul):
// test_sym.cpp: 2*(s0 + 1) - 2 is "2*s0", s0 - s0 is "0". Also the content
// (gcd of coefficients) and the one-atom views (term_atom, lone_atom,
// single_atom) the later steps read polynomials through.
#pragma once

#include <yobx/detail/sym/core.hpp>

namespace yobx::detail::sym {

// ------------------------------------------------------------ construction

template <class = void>
std::size_t hash_mono(const Mono& m) {
    std::size_t h = 0x51;
    for (const auto& f : m) h = mix(mix(h, f.atom->hash), static_cast<std::size_t>(f.exp));
    return h;
}

/// p's hash, computed from its terms (p.hash when stored: seal()).
template <class>
std::size_t hash_of(const Poly& p) {
    if (p.hash != 0) return p.hash;
    std::size_t h = mix(0x7a, static_cast<std::size_t>(p.constant));
    for (const auto& t : p.terms) h = mix(mix(h, static_cast<std::size_t>(t.coef)), hash_mono(t.mono));
    return h;
}

/// Ends the construction of p: its hash is not known yet (computed when p is compared, or
/// stored by seal()). Every constructor ends here, also one that changes p in place.
template <class = void>
void finish(Poly& p) { p.hash = 0; }

/// Stores p's hash in it, before p is shared (an atom's arguments, a SymInt, a condition):
/// later reads are free, and nothing is written to a shared polynomial.
template <class = void>
Poly& seal(Poly& p) {
    p.hash = 0;
    p.hash = hash_of(p);
    return p;
}

template <class = void>
Poly constant(std::int64_t c) {
    Poly p;
    p.constant = c;
    finish(p);
    return p;
}

/// Terms already sorted and merged.
template <class = void>
Poly from_sorted(std::int64_t c, Terms&& terms) {
    Poly p;
    p.constant = c;
    p.terms = std::move(terms);
    finish(p);
    return p;
}

/// Sorts terms, merges equal monomials, drops zero coefficients.
template <class = void>
Poly normalized(std::int64_t c, Terms terms) {
    std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return cmp_mono(x.mono, y.mono) < 0; });
    // merged in place: terms[0, kept) is the result so far
    std::size_t kept = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        Term& t = terms[i];
        if (kept > 0 && cmp_mono(terms[kept - 1].mono, t.mono) == 0) {
            terms[kept - 1].coef = add(terms[kept - 1].coef, t.coef);
            if (terms[kept - 1].coef == 0) --kept;
        } else if (t.coef != 0) {
            if (kept != i) terms[kept] = std::move(t);
            ++kept;
        }
    }
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(kept), terms.end());
    return from_sorted(c, std::move(terms));
}

/// The argument list {a, b}, moved in (a braced list would copy its elements).
template <class = void>
Polys pair_of(Poly&& a, Poly&& b) {
    Polys args;
    args.reserve(2);
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return args;
}

template <class = void>
AtomPtr make_atom(AtomKind kind, std::string name, Polys args) {
    auto a = std::allocate_shared<Atom>(CachedAllocator<Atom>{});  // the block kept per thread
    a->kind = kind;
    std::size_t h = mix(0x3c, static_cast<std::size_t>(kind));
    if (kind == AtomKind::symbol) {
        h = mix(h, std::hash<std::string>{}(name));
        a->key = name_key(name);
    }
    for (auto& p : args) h = mix(h, seal(p).hash);
    a->name = std::move(name);
    a->args = std::move(args);
    a->hash = h;
    return a;
}

template <class = void>
Poly from_atom(AtomPtr a) {
    Poly p;
    Term& t = p.terms.emplace_back();
    t.coef = 1;
    t.mono.push_back(Factor{std::move(a), 1});
    finish(p);
    return p;
}

/// The atom of the symbol `name`. The last few are kept per thread (64 slots), so that
/// the same symbol read or made again shares one atom, which comparisons see by address.
template <class = void>
AtomPtr symbol_atom(std::string_view name) {
    thread_local std::array<AtomPtr, 64> recent;
    AtomPtr& slot = recent[std::hash<std::string_view>{}(name) % recent.size()];
    const auto same = [&](const std::string& known) {  // a short name: no call to memcmp
        if (known.size() != name.size()) return false;
        for (std::size_t i = 0; i < name.size(); ++i)
            if (known[i] != name[i]) return false;
        return true;
    };
    if (!slot || !same(slot->name)) slot = make_atom(AtomKind::symbol, std::string(name), {});
    return slot;
}

template <class = void>
Poly symbol(std::string_view name) { return from_atom(symbol_atom(name)); }

/// The atom if p is `coef*atom + constant` (one term, one factor, exponent 1), with coef; else null.
template <class = void>
const Atom* term_atom(const Poly& p, std::int64_t& coef) {
    if (p.terms.size() != 1) return nullptr;
    const Term& t = p.terms[0];
    if (t.mono.size() != 1 || t.mono[0].exp != 1) return nullptr;
    coef = t.coef;
    return t.mono[0].atom.get();
}

/// The atom if p is exactly `coef*atom` (no constant), with coef; else null.
template <class = void>
const Atom* lone_atom(const Poly& p, std::int64_t& coef) { return p.constant == 0 ? term_atom(p, coef) : nullptr; }

/// The atom if p is exactly `1*atom`, else null.
template <class = void>
const Atom* single_atom(const Poly& p) {
    std::int64_t coef = 0;
    const Atom* a = lone_atom(p, coef);
    return coef == 1 ? a : nullptr;
}

/// Rewrites a sum into the canonical form's sum-level laws (defined below).
template <class = void>
Poly settle(Poly p);

/// The terms of p that are a Max or Min alone, or -1 when p holds a quotient: what
/// settle() looks at first (settled_on_sight, and constant_distance for two sums).
template <class = void>
int lone_extremes(const Poly& p) {
    int extremes = 0;
    for (const auto& t : p.terms)
        for (const auto& f : t.mono) {
            if (f.atom->kind == AtomKind::floordiv) return -1;
            extremes += (f.atom->kind == AtomKind::max || f.atom->kind == AtomKind::min) && t.mono.size() == 1;
        }
    return extremes;
}

/// Whether settle() leaves p as it is on sight (its first test): no quotient, and at
/// most one Max or Min alone in a term. Then so it does p's multiples.
template <class = void>
bool settled_on_sight(const Poly& p) {
    const int extremes = lone_extremes(p);
    return extremes >= 0 && extremes < 2;
}

template <class = void>
bool is_zero(const Poly& p) { return p.is_constant() && p.constant == 0; }

template <class = void>
Poly scale_raw(Poly a, std::int64_t k) {
    if (k == 0) return constant(0);
    if (k == 1) return a;
    for (auto& t : a.terms) t.coef = mul(t.coef, k);
    a.constant = mul(a.constant, k);
    finish(a);
    return a;
}

/// a + k*b without the sum-level laws (settle); the building block of add() and sub().
/// k*b's coefficients are computed as scale_raw computes them, without building k*b.
template <class = void>
Poly add_raw(const Poly& a, const Poly& b, std::int64_t k = 1) {
    if (k == 0 || is_zero(b)) return a;
    if (is_zero(a)) return scale_raw(b, k);
    const auto times_k = [k](std::int64_t c) { return k == 1 ? c : mul(c, k); };
    if (a.is_constant() && b.is_constant()) return constant(add(a.constant, times_k(b.constant)));
    Terms out;
    out.reserve(a.terms.size() + b.terms.size());
    std::size_t i = 0, j = 0;
    while (i < a.terms.size() || j < b.terms.size()) {
        const int c = i == a.terms.size()   ? 1
                      : j == b.terms.size() ? -1
                                            : cmp_mono(a.terms[i].mono, b.terms[j].mono);
        if (c < 0) {
            out.push_back(a.terms[i++]);
        } else if (c > 0) {
            out.push_back(Term{times_k(b.terms[j].coef), b.terms[j].mono});
            ++j;
        } else {
            const std::int64_t s = add(a.terms[i].coef, times_k(b.terms[j].coef));
            if (s != 0) out.push_back(Term{s, a.terms[i].mono});
            ++i;
            ++j;
        }
    }
    return from_sorted(add(a.constant, times_k(b.constant)), std::move(out));
}

template <class = void>
Poly add(const Poly& a, const Poly& b) { return settle(add_raw(a, b)); }
template <class = void>
Poly scale(const Poly& a, std::int64_t k) {
    if (k == 0) return constant(0);  // without copying a first (scale_raw takes its own)
    return k == 1 ? a : settle(scale_raw(a, k));
}

template <class = void>
Poly negate(const Poly& a) { return scale(a, -1); }
/// a - b: a + negate(b), with the negation not built when settle() would leave it as
/// written (settled_on_sight: one polynomial built instead of two, the same result).
template <class = void>
Poly sub(const Poly& a, const Poly& b) {
    if (settled_on_sight(b)) return settle(add_raw(a, b, -1));
    return add(a, negate(b));
}

template <class = void>
Mono mono_mul(const Mono& a, const Mono& b) {
    Mono out;
    out.reserve(a.size() + b.size());
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        const int c = i == a.size() ? 1 : j == b.size() ? -1 : cmp_atom(*a[i].atom, *b[j].atom);
        if (c < 0) {
            out.push_back(a[i++]);
        } else if (c > 0) {
            out.push_back(b[j++]);
        } else {
            out.push_back(Factor{a[i].atom, add(a[i].exp, b[j].exp)});
            ++i;
            ++j;
        }
    }
    return out;
}

template <class = void>
Poly mul_raw(const Poly& a, const Poly& b) {
    if (a.is_constant()) return scale_raw(b, a.constant);
    if (b.is_constant()) return scale_raw(a, b.constant);
    const std::size_t na = a.terms.size() + 1, nb = b.terms.size() + 1;
    if (na * nb > max_terms * 4) throw too_large{};
    Terms out;
    out.reserve(na * nb);
    for (const auto& x : a.terms)
        for (const auto& y : b.terms) out.push_back(Term{mul(x.coef, y.coef), mono_mul(x.mono, y.mono)});
    if (b.constant != 0)
        for (const auto& x : a.terms) out.push_back(Term{mul(x.coef, b.constant), x.mono});
    if (a.constant != 0)
        for (const auto& y : b.terms) out.push_back(Term{mul(y.coef, a.constant), y.mono});
    Poly p = normalized(mul(a.constant, b.constant), std::move(out));
    if (p.terms.size() > max_terms) throw too_large{};
    return p;
}

template <class = void>
Poly mul(const Poly& a, const Poly& b) { return settle(mul_raw(a, b)); }

template <class = void>
Poly power(const Poly& a, std::int64_t e) {
    if (e == 0) return constant(1);
    if (a.is_constant()) return constant(pow(a.constant, e));
    if (a.constant == 0 && a.terms.size() == 1) {  // c*m: no expansion needed
        Term t = a.terms[0];
        t.coef = pow(t.coef, e);
        for (auto& f : t.mono) f.exp = mul(f.exp, e);
        return from_sorted(0, {std::move(t)});
    }
    if (e > static_cast<std::int64_t>(max_terms)) throw too_large{};
    Poly r = a;
    for (std::int64_t i = 1; i < e; ++i) r = mul(r, a);
    return r;
}

/// The gcd of the coefficients of p's terms (p's constant left out).
template <class = void>
std::int64_t terms_content(const Poly& p) {
    std::int64_t g = 0;
    for (const auto& t : p.terms) g = gcd(g, t.coef);
    return g;
}

/// gcd of all coefficients and the constant (0 for the zero polynomial).
template <class = void>
std::int64_t content(const Poly& p) { return gcd(terms_content(p), p.constant); }

/// Divides every coefficient by g (which divides them all).
template <class = void>
Poly divide_exact(const Poly& p, std::int64_t g) {
    if (g == 1) return p;
    Terms out = p.terms;
    for (auto& t : out) t.coef /= g;
    return from_sorted(p.constant / g, std::move(out));
}

template <class = void>
bool leading_negative(const Poly& p) {
    return p.is_constant() ? p.constant < 0 : p.terms.front().coef < 0;
}

}  // namespace yobx::detail::sym
