// yobx/detail/sym_expr.hpp — the canonical form behind SymInt and SymBool.
//
// An integer expression is a polynomial with int64 coefficients over *atoms*:
// symbols, FloorDiv, Mod, Max and Min (whose arguments are canonical
// polynomials in turn). Every constructor below returns the canonical form,
// so two equal expressions are the same structure and hash the same. The
// arithmetic is checked: an overflow throws `overflow`, a zero divisor
// `zero_division`; the public layer turns both into messages naming the
// expression.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::detail::sym {

struct overflow {};
struct zero_division {
    bool modulo = false;  // Mod rather than FloorDiv
};
/// A product or power whose expansion would exceed max_terms terms.
struct too_large {};

inline constexpr std::size_t max_terms = 4096;
inline constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();

inline std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (__builtin_add_overflow(a, b, &r)) throw overflow{};
    return r;
}
inline std::int64_t sub(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) throw overflow{};
    return r;
}
inline std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) throw overflow{};
    return r;
}
inline std::int64_t neg(std::int64_t a) { return sub(0, a); }

/// Python's `a // b` (rounds toward minus infinity).
inline std::int64_t floordiv(std::int64_t a, std::int64_t b) {
    if (b == 0) throw zero_division{false};
    if (b == -1) return neg(a);
    std::int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}
/// Python's `a % b` (the sign of b).
inline std::int64_t pymod(std::int64_t a, std::int64_t b) {
    if (b == 0) throw zero_division{true};
    if (b == -1) return 0;
    std::int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
/// gcd of |a| and |b| without the UB of abs(INT64_MIN); 2^63 is reported as 2^62.
inline std::int64_t gcd(std::int64_t a, std::int64_t b) {
    std::uint64_t x = a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
    std::uint64_t y = b < 0 ? 0 - static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
    while (y != 0) {
        const std::uint64_t t = x % y;
        x = y;
        y = t;
    }
    if (x > static_cast<std::uint64_t>(i64_max)) x >>= 1;
    return static_cast<std::int64_t>(x);
}
inline std::int64_t pow(std::int64_t base, std::int64_t e) {
    std::int64_t r = 1;
    while (e > 0) {
        if (e & 1) r = mul(r, base);
        e >>= 1;
        if (e > 0) base = mul(base, base);
    }
    return r;
}

inline std::size_t mix(std::size_t seed, std::size_t v) {
    return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

enum class AtomKind : std::uint8_t { symbol, floordiv, mod, max, min };

struct Atom;
using AtomPtr = std::shared_ptr<const Atom>;

struct Factor {
    AtomPtr atom;
    std::int64_t exp = 1;
};
using Mono = std::vector<Factor>;  // sorted by atom, distinct atoms, exp >= 1
struct Term {
    std::int64_t coef = 0;  // never 0
    Mono mono;              // never empty
};

/// constant + sum of terms, terms in canonical (printing) order.
struct Poly {
    std::int64_t constant = 0;
    std::vector<Term> terms;
    std::size_t hash = 0;

    bool is_constant() const noexcept { return terms.empty(); }
};

struct Atom {
    AtomKind kind = AtomKind::symbol;
    std::string name;        // symbol
    std::vector<Poly> args;  // FloorDiv/Mod: {numerator, divisor}; Max/Min: sorted, distinct
    std::size_t hash = 0;
};

// ----------------------------------------------------------------- ordering

/// Natural order of names: s2 < s10, then plain text order.
inline int cmp_name(std::string_view a, std::string_view b) {
    auto split = [](std::string_view s) {
        std::size_t i = s.size();
        while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
        std::string_view digits = s.substr(i);
        while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
        return std::pair{s.substr(0, i), digits};
    };
    const auto [pa, da] = split(a);
    const auto [pb, db] = split(b);
    if (const int c = pa.compare(pb); c != 0) return c < 0 ? -1 : 1;
    if (da.size() != db.size()) return da.size() < db.size() ? -1 : 1;
    if (const int c = da.compare(db); c != 0) return c < 0 ? -1 : 1;
    const int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

inline int cmp_i64(std::int64_t a, std::int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

int cmp_poly(const Poly& a, const Poly& b);

inline int cmp_atom(const Atom& a, const Atom& b) {
    if (&a == &b) return 0;
    if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
    if (a.kind == AtomKind::symbol) return cmp_name(a.name, b.name);
    if (a.args.size() != b.args.size()) return a.args.size() < b.args.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.args.size(); ++i)
        if (const int c = cmp_poly(a.args[i], b.args[i]); c != 0) return c;
    return 0;
}

/// Lexicographic order of monomials, highest first (SymPy's `lex`): s0*s1, s0, s1.
inline int cmp_mono(const Mono& a, const Mono& b) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (const int c = cmp_atom(*a[i].atom, *b[i].atom); c != 0) return c;
        if (a[i].exp != b[i].exp) return a[i].exp > b[i].exp ? -1 : 1;
    }
    if (a.size() != b.size()) return a.size() > b.size() ? -1 : 1;
    return 0;
}

inline int cmp_poly(const Poly& a, const Poly& b) {
    if (&a == &b) return 0;
    if (a.terms.size() != b.terms.size()) return a.terms.size() < b.terms.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.terms.size(); ++i) {
        if (const int c = cmp_mono(a.terms[i].mono, b.terms[i].mono); c != 0) return c;
        if (const int c = cmp_i64(a.terms[i].coef, b.terms[i].coef); c != 0) return c;
    }
    return cmp_i64(a.constant, b.constant);
}

inline bool equal(const Poly& a, const Poly& b) { return a.hash == b.hash && cmp_poly(a, b) == 0; }

// ------------------------------------------------------------ construction

inline std::size_t hash_mono(const Mono& m) {
    std::size_t h = 0x51;
    for (const auto& f : m) h = mix(mix(h, f.atom->hash), static_cast<std::size_t>(f.exp));
    return h;
}

inline void finish(Poly& p) {
    std::size_t h = mix(0x7a, static_cast<std::size_t>(p.constant));
    for (const auto& t : p.terms) h = mix(mix(h, static_cast<std::size_t>(t.coef)), hash_mono(t.mono));
    p.hash = h;
}

inline Poly constant(std::int64_t c) {
    Poly p;
    p.constant = c;
    finish(p);
    return p;
}

/// Terms already sorted and merged.
inline Poly from_sorted(std::int64_t c, std::vector<Term> terms) {
    Poly p;
    p.constant = c;
    p.terms = std::move(terms);
    finish(p);
    return p;
}

/// Sorts terms, merges equal monomials, drops zero coefficients.
inline Poly normalized(std::int64_t c, std::vector<Term> terms) {
    std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return cmp_mono(x.mono, y.mono) < 0; });
    std::vector<Term> out;
    out.reserve(terms.size());
    for (auto& t : terms) {
        if (!out.empty() && cmp_mono(out.back().mono, t.mono) == 0) {
            out.back().coef = add(out.back().coef, t.coef);
            if (out.back().coef == 0) out.pop_back();
        } else if (t.coef != 0) {
            out.push_back(std::move(t));
        }
    }
    return from_sorted(c, std::move(out));
}

inline AtomPtr make_atom(AtomKind kind, std::string name, std::vector<Poly> args) {
    auto a = std::make_shared<Atom>();
    a->kind = kind;
    std::size_t h = mix(0x3c, static_cast<std::size_t>(kind));
    if (kind == AtomKind::symbol) h = mix(h, std::hash<std::string>{}(name));
    for (const auto& p : args) h = mix(h, p.hash);
    a->name = std::move(name);
    a->args = std::move(args);
    a->hash = h;
    return a;
}

inline Poly from_atom(AtomPtr a) {
    std::vector<Term> t(1);
    t[0].coef = 1;
    t[0].mono.push_back(Factor{std::move(a), 1});
    return from_sorted(0, std::move(t));
}

inline Poly symbol(std::string_view name) { return from_atom(make_atom(AtomKind::symbol, std::string(name), {})); }

/// The atom if p is `coef*atom + constant` (one term, one factor, exponent 1), with coef; else null.
inline const Atom* term_atom(const Poly& p, std::int64_t& coef) {
    if (p.terms.size() != 1) return nullptr;
    const Term& t = p.terms[0];
    if (t.mono.size() != 1 || t.mono[0].exp != 1) return nullptr;
    coef = t.coef;
    return t.mono[0].atom.get();
}

/// The atom if p is exactly `coef*atom` (no constant), with coef; else null.
inline const Atom* lone_atom(const Poly& p, std::int64_t& coef) { return p.constant == 0 ? term_atom(p, coef) : nullptr; }

/// The atom if p is exactly `1*atom`, else null.
inline const Atom* single_atom(const Poly& p) {
    std::int64_t coef = 0;
    const Atom* a = lone_atom(p, coef);
    return coef == 1 ? a : nullptr;
}

inline Poly add(const Poly& a, const Poly& b) {
    if (a.is_constant() && b.is_constant()) return constant(add(a.constant, b.constant));
    std::vector<Term> out;
    out.reserve(a.terms.size() + b.terms.size());
    std::size_t i = 0, j = 0;
    while (i < a.terms.size() || j < b.terms.size()) {
        const int c = i == a.terms.size()   ? 1
                      : j == b.terms.size() ? -1
                                            : cmp_mono(a.terms[i].mono, b.terms[j].mono);
        if (c < 0) {
            out.push_back(a.terms[i++]);
        } else if (c > 0) {
            out.push_back(b.terms[j++]);
        } else {
            const std::int64_t s = add(a.terms[i].coef, b.terms[j].coef);
            if (s != 0) out.push_back(Term{s, a.terms[i].mono});
            ++i;
            ++j;
        }
    }
    return from_sorted(add(a.constant, b.constant), std::move(out));
}

inline Poly scale(const Poly& a, std::int64_t k) {
    if (k == 0) return constant(0);
    if (k == 1) return a;
    std::vector<Term> out = a.terms;
    for (auto& t : out) t.coef = mul(t.coef, k);
    return from_sorted(mul(a.constant, k), std::move(out));
}

inline Poly negate(const Poly& a) { return scale(a, -1); }
inline Poly sub(const Poly& a, const Poly& b) { return add(a, negate(b)); }

inline Mono mono_mul(const Mono& a, const Mono& b) {
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

inline Poly mul(const Poly& a, const Poly& b) {
    if (a.is_constant()) return scale(b, a.constant);
    if (b.is_constant()) return scale(a, b.constant);
    const std::size_t na = a.terms.size() + 1, nb = b.terms.size() + 1;
    if (na * nb > max_terms * 4) throw too_large{};
    std::vector<Term> out;
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

inline Poly power(const Poly& a, std::int64_t e) {
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

/// gcd of all coefficients and the constant (0 for the zero polynomial).
inline std::int64_t content(const Poly& p) {
    std::int64_t g = p.constant;
    for (const auto& t : p.terms) g = gcd(g, t.coef);
    return gcd(g, 0);
}

/// Divides every coefficient by g (which divides them all).
inline Poly divide_exact(const Poly& p, std::int64_t g) {
    if (g == 1) return p;
    std::vector<Term> out = p.terms;
    for (auto& t : out) t.coef /= g;
    return from_sorted(p.constant / g, std::move(out));
}

inline bool leading_negative(const Poly& p) {
    return p.is_constant() ? p.constant < 0 : p.terms.front().coef < 0;
}

inline Poly floordiv(const Poly& a, const Poly& b);

inline Poly floordiv_by_constant(const Poly& a, std::int64_t k) {
    if (k == 0) throw zero_division{false};
    if (a.is_constant()) return constant(floordiv(a.constant, k));
    if (k < 0) return floordiv_by_constant(negate(a), neg(k));
    if (k == 1) return a;
    // (k*q + r)//k == q + r//k for integer q: pull out the multiples of k.
    std::vector<Term> q, r;
    for (const auto& t : a.terms) {
        const std::int64_t qv = floordiv(t.coef, k), rv = pymod(t.coef, k);
        if (qv != 0) q.push_back(Term{qv, t.mono});
        if (rv != 0) r.push_back(Term{rv, t.mono});
    }
    Poly quotient = from_sorted(floordiv(a.constant, k), std::move(q));
    if (r.empty()) return quotient;  // the constant's remainder is < k
    Poly rest = from_sorted(pymod(a.constant, k), std::move(r));
    // floor(g*x / (g*m)) == floor(x / m)
    const std::int64_t g = gcd(content(rest), k);
    rest = divide_exact(rest, g);
    k /= g;
    // floor((x//k1 + c) / k) == (x + c*k1) // (k1*k)
    std::int64_t coef = 0;
    if (const Atom* inner = term_atom(rest, coef); inner && coef == 1 && inner->kind == AtomKind::floordiv &&
                                                   inner->args[1].is_constant() && inner->args[1].constant > 0) {
        const std::int64_t k1 = inner->args[1].constant;
        return add(quotient, floordiv_by_constant(add(inner->args[0], constant(mul(rest.constant, k1))), mul(k1, k)));
    }
    return add(quotient, from_atom(make_atom(AtomKind::floordiv, {}, {std::move(rest), constant(k)})));
}

/// m / d if the monomial d divides m.
inline std::optional<Mono> mono_divide(const Mono& m, const Mono& d) {
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

/// Splits a into d*quotient + rest where d = c*m is a single term: the terms of a
/// that c*m divides go to the quotient (floor((d*q + r)/d) == q + floor(r/d)).
inline std::pair<Poly, Poly> split_by_term(const Poly& a, const Term& d) {
    std::vector<Term> q, r;
    std::int64_t qc = 0;
    for (const auto& t : a.terms) {
        if (t.coef % d.coef == 0) {
            if (auto m = mono_divide(t.mono, d.mono)) {
                if (m->empty())
                    qc = add(qc, t.coef / d.coef);
                else
                    q.push_back(Term{t.coef / d.coef, std::move(*m)});
                continue;
            }
        }
        r.push_back(t);
    }
    return {normalized(qc, std::move(q)), from_sorted(a.constant, std::move(r))};
}

inline bool is_zero(const Poly& p) { return p.is_constant() && p.constant == 0; }

inline Poly floordiv(const Poly& a, const Poly& b) {
    if (b.is_constant()) return floordiv_by_constant(a, b.constant);
    if (is_zero(a)) return a;
    const std::int64_t g = gcd(content(a), content(b));
    Poly num = divide_exact(a, g), den = divide_exact(b, g);
    if (leading_negative(den)) {  // floor(a/b) == floor(-a/-b)
        num = negate(num);
        den = negate(den);
    }
    if (den.constant == 0 && den.terms.size() == 1) {  // (s0*s1)//s1 == s0
        auto [q, r] = split_by_term(num, den.terms[0]);
        if (!is_zero(q)) return add(q, is_zero(r) ? r : floordiv(r, den));
    }
    return from_atom(make_atom(AtomKind::floordiv, {}, {std::move(num), std::move(den)}));
}

inline Poly mod(const Poly& a, const Poly& b);

inline Poly mod_by_constant(const Poly& a, std::int64_t k) {
    if (k == 0) throw zero_division{true};
    if (a.is_constant()) return constant(pymod(a.constant, k));
    if (k < 0) return negate(mod_by_constant(negate(a), neg(k)));  // a % -k == -((-a) % k)
    if (k == 1) return constant(0);
    std::vector<Term> r;
    for (const auto& t : a.terms)
        if (const std::int64_t rv = pymod(t.coef, k); rv != 0) r.push_back(Term{rv, t.mono});
    if (r.empty()) return constant(pymod(a.constant, k));
    Poly rest = from_sorted(pymod(a.constant, k), std::move(r));
    // Mod(g*x, g*m) == g*Mod(x, m)
    const std::int64_t g = gcd(content(rest), k);
    rest = divide_exact(rest, g);
    k /= g;
    if (const Atom* inner = single_atom(rest);
        inner && inner->kind == AtomKind::mod && inner->args[1].is_constant() && inner->args[1].constant > 0) {
        const std::int64_t k1 = inner->args[1].constant;
        if (k1 % k == 0) return scale(mod_by_constant(inner->args[0], k), g);  // Mod(Mod(x, 6), 3) == Mod(x, 3)
        if (k % k1 == 0) return scale(rest, g);                               // Mod(Mod(x, 3), 6) == Mod(x, 3)
    }
    return scale(from_atom(make_atom(AtomKind::mod, {}, {std::move(rest), constant(k)})), g);
}

inline Poly mod(const Poly& a, const Poly& b) {
    if (b.is_constant()) return mod_by_constant(a, b.constant);
    if (is_zero(a)) return a;
    const std::int64_t g = gcd(content(a), content(b));
    Poly num = divide_exact(a, g), den = divide_exact(b, g);
    if (den.constant == 0 && den.terms.size() == 1) {  // Mod(s0*s1 + s2, s1) == Mod(s2, s1)
        auto [q, r] = split_by_term(num, den.terms[0]);
        if (!is_zero(q)) return scale(mod(r, den), g);
    }
    if (leading_negative(den))  // Mod(a, -b) == -Mod(-a, b)
        return negate(scale(from_atom(make_atom(AtomKind::mod, {}, {negate(num), negate(den)})), g));
    return scale(from_atom(make_atom(AtomKind::mod, {}, {std::move(num), std::move(den)})), g);
}

/// Max (kind == max) or Min of the arguments: nested ones flattened, constants
/// folded, duplicates and arguments at a constant distance from another removed.
inline Poly extremum(AtomKind kind, const std::vector<Poly>& args) {
    const bool is_max = kind == AtomKind::max;
    std::vector<Poly> flat;
    std::optional<std::int64_t> best;
    auto take = [&](const Poly& p) {
        if (p.is_constant())
            best = !best ? p.constant : (is_max ? std::max(*best, p.constant) : std::min(*best, p.constant));
        else
            flat.push_back(p);
    };
    for (const auto& a : args) {
        if (const Atom* at = single_atom(a); at && at->kind == kind)
            for (const auto& inner : at->args) take(inner);
        else
            take(a);
    }
    if (best) flat.push_back(constant(*best));
    std::vector<bool> alive(flat.size(), true);
    for (std::size_t i = 0; i < flat.size(); ++i) {
        for (std::size_t j = i + 1; j < flat.size() && alive[i]; ++j) {
            if (!alive[j]) continue;
            std::optional<std::int64_t> d;
            try {
                const Poly diff = sub(flat[i], flat[j]);
                if (diff.is_constant()) d = diff.constant;
            } catch (const overflow&) {
            }
            if (!d) continue;
            if ((*d >= 0) == is_max)
                alive[j] = false;
            else
                alive[i] = false;
        }
    }
    std::vector<Poly> kept;
    for (std::size_t i = 0; i < flat.size(); ++i)
        if (alive[i]) kept.push_back(std::move(flat[i]));
    if (kept.size() == 1) return std::move(kept[0]);
    std::sort(kept.begin(), kept.end(), [](const Poly& x, const Poly& y) { return cmp_poly(x, y) < 0; });
    return from_atom(make_atom(kind, {}, std::move(kept)));
}

/// Rebuilds p bottom-up through the canonical constructors. `visitor.symbol(atom_ptr)`
/// returns the replacement of a symbol (or nullopt to keep it), `visitor.atom(kind, args)`
/// builds FloorDiv/Mod/Max/Min from rebuilt arguments, and `visitor.term(coef, factors)`
/// may rewrite a whole term before it is multiplied out (nullopt to keep it).
template <class Visitor>
Poly rebuild(const Poly& p, Visitor& visitor);

template <class Visitor>
Poly rebuild_atom(const AtomPtr& a, Visitor& visitor) {
    if (a->kind == AtomKind::symbol) {
        if (auto r = visitor.symbol(a)) return std::move(*r);
        return from_atom(a);
    }
    std::vector<Poly> args;
    args.reserve(a->args.size());
    for (const auto& x : a->args) args.push_back(rebuild(x, visitor));
    return visitor.atom(a->kind, args);
}

template <class Visitor>
Poly rebuild(const Poly& p, Visitor& visitor) {
    Poly acc = constant(p.constant);
    for (const auto& t : p.terms) {
        Poly term = constant(t.coef);
        for (const auto& f : t.mono) term = mul(term, power(rebuild_atom(f.atom, visitor), f.exp));
        if (auto r = visitor.term(term)) term = std::move(*r);
        acc = add(acc, term);
    }
    return acc;
}

/// The canonical constructors, for rebuild().
struct PlainAtoms {
    static Poly make(AtomKind kind, const std::vector<Poly>& args) {
        switch (kind) {
            case AtomKind::floordiv: return floordiv(args[0], args[1]);
            case AtomKind::mod: return mod(args[0], args[1]);
            default: return extremum(kind, args);
        }
    }
    Poly atom(AtomKind kind, const std::vector<Poly>& args) { return make(kind, args); }
    std::optional<Poly> term(const Poly&) { return std::nullopt; }
};

/// Evaluates p; value_of(const Atom& symbol) gives each symbol's value.
template <class ValueOf>
std::int64_t evaluate(const Poly& p, ValueOf& value_of);

template <class ValueOf>
std::int64_t evaluate_atom(const Atom& a, ValueOf& value_of) {
    switch (a.kind) {
        case AtomKind::symbol: return value_of(a);
        case AtomKind::floordiv: return floordiv(evaluate(a.args[0], value_of), evaluate(a.args[1], value_of));
        case AtomKind::mod: return pymod(evaluate(a.args[0], value_of), evaluate(a.args[1], value_of));
        default: {
            std::int64_t r = evaluate(a.args[0], value_of);
            for (std::size_t i = 1; i < a.args.size(); ++i) {
                const std::int64_t v = evaluate(a.args[i], value_of);
                r = a.kind == AtomKind::max ? std::max(r, v) : std::min(r, v);
            }
            return r;
        }
    }
}

template <class ValueOf>
std::int64_t evaluate(const Poly& p, ValueOf& value_of) {
    std::int64_t acc = p.constant;
    for (const auto& t : p.terms) {
        std::int64_t v = t.coef;
        for (const auto& f : t.mono) v = mul(v, pow(evaluate_atom(*f.atom, value_of), f.exp));
        acc = add(acc, v);
    }
    return acc;
}

/// Calls f(const Atom&) on every symbol of p (with repetitions).
template <class F>
void for_each_symbol(const Poly& p, F& f) {
    for (const auto& t : p.terms)
        for (const auto& fac : t.mono) {
            if (fac.atom->kind == AtomKind::symbol)
                f(*fac.atom);
            else
                for (const auto& a : fac.atom->args) for_each_symbol(a, f);
        }
}

// ---------------------------------------------------------------- printing

inline void print_int(std::string& out, std::int64_t v) {
    if (v == i64_min)
        out += "(-9223372036854775807 - 1)";  // the literal 9223372036854775808 is not an int64
    else
        out += std::to_string(v);
}

void print_poly(std::string& out, const Poly& p);

inline bool is_bare_atom(const Poly& p) {
    const Atom* a = single_atom(p);
    return a != nullptr && a->kind != AtomKind::floordiv;
}

inline void print_atom(std::string& out, const Atom& a) {
    switch (a.kind) {
        case AtomKind::symbol: out += a.name; return;
        case AtomKind::floordiv: {
            const Poly& n = a.args[0];
            const Poly& d = a.args[1];
            const bool bare_n = is_bare_atom(n) || (n.is_constant() && n.constant >= 0);
            const bool bare_d = is_bare_atom(d) || (d.is_constant() && d.constant > 0);
            if (!bare_n) out += '(';
            print_poly(out, n);
            out += bare_n ? "//" : ")//";
            if (!bare_d) out += '(';
            print_poly(out, d);
            if (!bare_d) out += ')';
            return;
        }
        default: {
            out += a.kind == AtomKind::mod ? "Mod(" : (a.kind == AtomKind::max ? "Max(" : "Min(");
            for (std::size_t i = 0; i < a.args.size(); ++i) {
                if (i > 0) out += ", ";
                print_poly(out, a.args[i]);
            }
            out += ')';
            return;
        }
    }
}

/// One term; `first` decides between a leading `-` and ` + ` / ` - `.
inline void print_term(std::string& out, std::int64_t coef, const Mono& mono, bool first) {
    std::uint64_t mag;
    bool minus = false;
    if (coef == i64_min) {
        if (!first) out += " + ";
        out += "(-9223372036854775807 - 1)*";
        mag = 0;  // printed already
    } else {
        minus = coef < 0;
        mag = static_cast<std::uint64_t>(minus ? -coef : coef);
        if (first)
            out += minus ? "-" : "";
        else
            out += minus ? " - " : " + ";
        if (mag != 1) {
            out += std::to_string(mag);
            out += '*';
        }
    }
    // `-s0//2` would read as (-s0)//2: a FloorDiv factor is bare only when it is
    // the whole term with coefficient 1 (or subtracted, `x - s0//2`).
    const bool alone = mono.size() == 1 && mono[0].exp == 1 && mag == 1 && !(first && minus);
    for (std::size_t i = 0; i < mono.size(); ++i) {
        if (i > 0) out += '*';
        const bool paren = mono[i].atom->kind == AtomKind::floordiv && !(alone && i == 0);
        if (paren) out += '(';
        print_atom(out, *mono[i].atom);
        if (paren) out += ')';
        if (mono[i].exp != 1) {
            out += "**";
            out += std::to_string(mono[i].exp);
        }
    }
}

inline void print_poly(std::string& out, const Poly& p) {
    if (p.is_constant()) {
        print_int(out, p.constant);
        return;
    }
    for (std::size_t i = 0; i < p.terms.size(); ++i) print_term(out, p.terms[i].coef, p.terms[i].mono, i == 0);
    if (p.constant == 0) return;
    if (p.constant == i64_min) {
        out += " + ";
        print_int(out, p.constant);
    } else if (p.constant < 0) {
        out += " - ";
        out += std::to_string(-p.constant);
    } else {
        out += " + ";
        out += std::to_string(p.constant);
    }
}

inline std::string to_string(const Poly& p) {
    std::string s;
    print_poly(s, p);
    return s;
}

// ------------------------------------------------------------------ bools

/// A condition in canonical form. Relations are `diff == 0`, `diff != 0` or
/// `diff <= 0` (`<`, `>`, `>=` are rewritten, integers make `a < b` into
/// `a - b + 1 <= 0`); And/Or hold sorted, distinct arguments.
enum class BoolKind : std::uint8_t { eq, ne, le, and_, or_ };

struct BoolNode;
using BoolPtr = std::shared_ptr<const BoolNode>;

struct BoolNode {
    BoolKind kind = BoolKind::eq;
    Poly diff;
    std::vector<BoolPtr> args;
    std::size_t hash = 0;
};

/// A condition: constant (node null) or a node.
struct Cond {
    bool value = false;
    BoolPtr node;
};

inline int cmp_bool(const BoolNode& a, const BoolNode& b) {
    if (&a == &b) return 0;
    if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
    if (const int c = cmp_poly(a.diff, b.diff); c != 0) return c;
    if (a.args.size() != b.args.size()) return a.args.size() < b.args.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.args.size(); ++i)
        if (const int c = cmp_bool(*a.args[i], *b.args[i]); c != 0) return c;
    return 0;
}

inline Cond make_node(BoolKind kind, Poly diff, std::vector<BoolPtr> args) {
    auto n = std::make_shared<BoolNode>();
    std::size_t h = mix(0x2b, static_cast<std::size_t>(kind));
    h = mix(h, diff.hash);
    for (const auto& a : args) h = mix(h, a->hash);
    n->kind = kind;
    n->diff = std::move(diff);
    n->args = std::move(args);
    n->hash = h;
    return Cond{false, std::move(n)};
}

/// `d == 0` (kind eq), `d != 0` (ne) or `d <= 0` (le), canonical.
inline Cond relation(BoolKind kind, const Poly& d) {
    if (d.is_constant()) {
        const bool v = kind == BoolKind::eq ? d.constant == 0 : kind == BoolKind::ne ? d.constant != 0 : d.constant <= 0;
        return Cond{v, nullptr};
    }
    std::int64_t g = 0;
    for (const auto& t : d.terms) g = gcd(g, t.coef);
    if (kind == BoolKind::le) {
        // g*P + c <= 0  <=>  P <= floor(-c/g)  <=>  P + (-floor(-c/g)) <= 0
        std::vector<Term> terms = d.terms;
        for (auto& t : terms) t.coef /= g;
        return make_node(kind, from_sorted(neg(floordiv(neg(d.constant), g)), std::move(terms)), {});
    }
    if (d.constant % g != 0) return Cond{kind == BoolKind::ne, nullptr};  // g*P == c has no integer solution
    Poly n = divide_exact(d, g);
    if (leading_negative(n)) n = negate(n);
    return make_node(kind, std::move(n), {});
}

inline Cond negation(const Cond& c);

inline Cond junction(BoolKind kind, const std::vector<Cond>& args) {
    const bool is_and = kind == BoolKind::and_;
    std::vector<BoolPtr> flat;
    for (const auto& a : args) {
        if (!a.node) {
            if (a.value != is_and) return Cond{a.value, nullptr};  // False in And, True in Or
            continue;
        }
        if (a.node->kind == kind)
            flat.insert(flat.end(), a.node->args.begin(), a.node->args.end());
        else
            flat.push_back(a.node);
    }
    std::sort(flat.begin(), flat.end(), [](const BoolPtr& x, const BoolPtr& y) { return cmp_bool(*x, *y) < 0; });
    flat.erase(std::unique(flat.begin(), flat.end(), [](const BoolPtr& x, const BoolPtr& y) { return cmp_bool(*x, *y) == 0; }),
               flat.end());
    if (flat.empty()) return Cond{is_and, nullptr};
    if (flat.size() == 1) return Cond{false, flat[0]};
    return make_node(kind, Poly{}, std::move(flat));
}

inline Cond negation(const Cond& c) {
    if (!c.node) return Cond{!c.value, nullptr};
    const BoolNode& n = *c.node;
    switch (n.kind) {
        case BoolKind::eq: return relation(BoolKind::ne, n.diff);
        case BoolKind::ne: return relation(BoolKind::eq, n.diff);
        case BoolKind::le: return relation(BoolKind::le, add(negate(n.diff), constant(1)));  // d > 0  <=>  1 - d <= 0
        default: {
            std::vector<Cond> args;
            for (const auto& a : n.args) args.push_back(negation(Cond{false, a}));
            return junction(n.kind == BoolKind::and_ ? BoolKind::or_ : BoolKind::and_, args);
        }
    }
}

template <class ValueOf>
bool evaluate(const BoolNode& n, ValueOf& value_of) {
    switch (n.kind) {
        case BoolKind::eq: return evaluate(n.diff, value_of) == 0;
        case BoolKind::ne: return evaluate(n.diff, value_of) != 0;
        case BoolKind::le: return evaluate(n.diff, value_of) <= 0;
        case BoolKind::and_:
            for (const auto& a : n.args)
                if (!evaluate(*a, value_of)) return false;
            return true;
        default:
            for (const auto& a : n.args)
                if (evaluate(*a, value_of)) return true;
            return false;
    }
}

void print_bool(std::string& out, const BoolNode& n);

/// `Eq(A, B)`, `A <= B`, `A < B`, ... with the positive terms on one side and
/// the negated negative terms on the other, the leading term on the left.
inline void print_relation(std::string& out, const BoolNode& n) {
    const Poly& d = n.diff;
    std::vector<Term> pos, negs;
    std::int64_t pc = 0, nc = 0;
    try {
        for (const auto& t : d.terms) {
            if (t.coef > 0)
                pos.push_back(t);
            else
                negs.push_back(Term{neg(t.coef), t.mono});
        }
        if (d.constant > 0)
            pc = d.constant;
        else
            nc = neg(d.constant);
    } catch (const overflow&) {  // INT64_MIN coefficient: print `d <= 0` as is
        const char* open = n.kind == BoolKind::eq ? "Eq(" : n.kind == BoolKind::ne ? "Ne(" : "";
        out += open;
        print_poly(out, d);
        out += n.kind == BoolKind::le ? " <= 0" : ", 0)";
        return;
    }
    const bool leading_left = d.terms.front().coef > 0;
    std::string op = "<=";
    if (n.kind == BoolKind::le && !pos.empty() && pc == 1) {  // A + 1 <= B  reads  A < B
        pc = 0;
        op = "<";
    }
    std::string a, b;
    print_poly(a, from_sorted(pc, std::move(pos)));
    print_poly(b, from_sorted(nc, std::move(negs)));
    if (!leading_left) {
        std::swap(a, b);
        op = op == "<" ? ">" : ">=";
    }
    if (n.kind == BoolKind::le) {
        out += a + " " + op + " " + b;
    } else {
        out += n.kind == BoolKind::eq ? "Eq(" : "Ne(";
        out += a + ", " + b + ")";
    }
}

inline void print_bool(std::string& out, const BoolNode& n) {
    if (n.kind == BoolKind::eq || n.kind == BoolKind::ne || n.kind == BoolKind::le) {
        print_relation(out, n);
        return;
    }
    for (std::size_t i = 0; i < n.args.size(); ++i) {
        if (i > 0) out += n.kind == BoolKind::and_ ? " & " : " | ";
        const bool paren = n.args[i]->kind != BoolKind::eq && n.args[i]->kind != BoolKind::ne;
        if (paren) out += '(';
        print_bool(out, *n.args[i]);
        if (paren) out += ')';
    }
}

template <class F>
void for_each_symbol(const BoolNode& n, F& f) {
    for_each_symbol(n.diff, f);
    for (const auto& a : n.args) for_each_symbol(*a, f);
}

/// The distinct symbol names of a Poly or BoolNode, in natural order (s2 before s10).
template <class Node>
std::vector<std::string> symbol_names(const Node& n) {
    std::vector<std::string> names;
    auto f = [&](const Atom& a) { names.push_back(a.name); };
    for_each_symbol(n, f);
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return cmp_name(a, b) < 0; });
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

}  // namespace yobx::detail::sym
