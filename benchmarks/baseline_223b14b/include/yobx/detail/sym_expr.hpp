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
/// A product or power whose expansion would exceed max_terms terms, or (depth) a
/// rewriting beyond max_rewrite_depth nested divisions or max_settle_rounds rewrites of a sum.
struct too_large {
    bool depth = false;
};

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

/// Rewrites a sum into the canonical form's sum-level laws (defined below).
inline Poly settle(Poly p);

/// a + b without the sum-level laws (settle); the building block of add().
inline Poly add_raw(const Poly& a, const Poly& b) {
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

inline Poly scale_raw(const Poly& a, std::int64_t k) {
    if (k == 0) return constant(0);
    if (k == 1) return a;
    std::vector<Term> out = a.terms;
    for (auto& t : out) t.coef = mul(t.coef, k);
    return from_sorted(mul(a.constant, k), std::move(out));
}

inline Poly add(const Poly& a, const Poly& b) { return settle(add_raw(a, b)); }
inline Poly scale(const Poly& a, std::int64_t k) { return k == 1 ? a : settle(scale_raw(a, k)); }

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

inline Poly mul_raw(const Poly& a, const Poly& b) {
    if (a.is_constant()) return scale_raw(b, a.constant);
    if (b.is_constant()) return scale_raw(a, b.constant);
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

inline Poly mul(const Poly& a, const Poly& b) { return settle(mul_raw(a, b)); }

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

/// The gcd of the coefficients of p's terms (p's constant left out).
inline std::int64_t terms_content(const Poly& p) {
    std::int64_t g = 0;
    for (const auto& t : p.terms) g = gcd(g, t.coef);
    return g;
}

/// gcd of all coefficients and the constant (0 for the zero polynomial).
inline std::int64_t content(const Poly& p) { return gcd(terms_content(p), p.constant); }

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
inline Poly mod(const Poly& a, const Poly& b);

inline std::optional<std::pair<Poly, Poly>> divide(const Poly& a, const Poly& d, bool exact, bool settled = true);

inline bool is_zero(const Poly& p) { return p.is_constant() && p.constant == 0; }

/// p / d when d divides p exactly (integer coefficients), nullopt otherwise or when
/// the division would overflow (or throws overflow): a constant d divides every coefficient, a divisor of
/// terms leaves no remainder.
inline std::optional<Poly> exact_quotient(const Poly& p, const Poly& d) {
    if (d.is_constant()) {
        if (d.constant == 0 || p.constant % d.constant != 0) return std::nullopt;
        for (const auto& t : p.terms)
            if (t.coef % d.constant != 0) return std::nullopt;
        if (d.constant == -1) return negate(p);  // throws overflow on INT64_MIN
        std::vector<Term> out = p.terms;
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
inline std::optional<std::pair<Poly, Poly>> drop_mods(const Poly& a, const Poly& d, bool for_mod) {
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
inline const Atom* lone_quotient(const Poly& p) {
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
inline const Atom* floored_multiple(const Poly& p, std::int64_t k) {
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
inline Poly divide_terms_floor(const Poly& p, std::int64_t g) {
    std::vector<Term> out = p.terms;
    for (auto& t : out) t.coef /= g;
    return settle(from_sorted(floordiv(p.constant, g), std::move(out)));
}

/// x + c*a for p == x//a + c, inner the quotient x//a (lone_quotient(p)): the numerator
/// of (x//a + c)//k == (x + c*a)//(a*k) (P + x//a == (P*a + x)//a for an integer P, and
/// floor(floor(y)/k) == floor(y/k) for a real y and k >= 1).
inline Poly unnested(const Poly& p, const Atom& inner) {
    const Poly c = sub(p, from_atom(make_atom(AtomKind::floordiv, {}, inner.args)));
    return add(inner.args[0], mul(c, inner.args[1]));
}

inline Poly floordiv_by_constant(const Poly& a, std::int64_t k) {
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
    std::vector<Term> q, r;
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

/// The greatest monomial dividing every term of a and b (empty when either has a constant).
inline Mono common_monomial(const Poly& a, const Poly& b) {
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
inline Poly divide_monomial(const Poly& p, const Mono& m) {
    std::vector<Term> out;
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
inline bool plain_divisor(const Poly& d);

inline std::optional<std::pair<Poly, Poly>> divide(const Poly& a, const Poly& d, bool exact, bool settled) {
    if (!plain_divisor(d)) return std::nullopt;
    const Term& lead = d.terms.front();
    const std::int64_t lc = lead.coef;
    return unless_too_large([&]() -> std::optional<std::pair<Poly, Poly>> {
        Poly r = a;
        std::vector<Term> q;
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
inline bool plain_divisor(const Poly& d) {
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

/// p with each Mod(y, k) factor written y - k*(y//k), y's own Mod factors too (raw).
inline Poly expand_mods(const Poly& p) {
    Poly expanded = constant(p.constant);
    for (const auto& t : p.terms) {
        Poly term = constant(t.coef);
        for (const auto& f : t.mono) {
            Poly x = from_sorted(0, {Term{1, {Factor{f.atom, 1}}}});
            if (f.atom->kind == AtomKind::mod) {
                const Poly& k = f.atom->args[1];
                x = add_raw(expand_mods(f.atom->args[0]), scale_raw(mul_raw(k, from_atom(make_atom(AtomKind::floordiv, {}, f.atom->args))), -1));
            }
            for (std::int64_t e = 0; e < f.exp; ++e) term = mul_raw(term, x);
        }
        expanded = add_raw(expanded, term);
    }
    return expanded;
}

/// expand_mods(p), nullopt when p has no Mod factor or the expansion is too large: what
/// the divisions through remainders below divide.
inline std::optional<Poly> mods_expanded(const Poly& p) {
    const bool has_mod = std::any_of(p.terms.begin(), p.terms.end(), [](const Term& t) {
        return std::any_of(t.mono.begin(), t.mono.end(), [](const Factor& f) { return f.atom->kind == AtomKind::mod; });
    });
    if (!has_mod) return std::nullopt;
    return unless_too_large([&]() -> std::optional<Poly> { return expand_mods(p); });
}

/// expanded (num's mods_expanded) == q*d + r, nullopt when nothing is taken out or when
/// r holds a quotient or remainder that num does not (see dividing_through_mods).
inline std::optional<std::pair<Poly, Poly>> divides_through_mods(const Poly& num, const Poly& expanded, const Poly& d) {
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
inline std::optional<Cancelled> common_monomial_through_mods(const Poly& expanded, const Poly& d) {
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
inline std::optional<PrimitivePart> primitive_part_divides(const Poly& num, const std::optional<Poly>& expanded, const Poly& d) {
    const std::int64_t c = content(d);
    if (c <= 1 || d.terms.size() + (d.constant != 0) < 2) return std::nullopt;
    Poly D = divide_exact(d, c);
    auto q = unless_too_large([&] { return exact_quotient(num, D); });
    if (!q && expanded) q = unless_too_large([&] { return exact_quotient(*expanded, D); });
    if (!q) return std::nullopt;
    return PrimitivePart{std::move(*q), c, std::move(D)};
}

inline Poly floordiv(const Poly& a, const Poly& b) {
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
    return from_atom(make_atom(AtomKind::floordiv, {}, {std::move(num), std::move(den)}));
}

inline Poly mod(const Poly& a, const Poly& b);

inline Poly mod_by_constant(const Poly& a, std::int64_t k) {
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
    std::vector<Term> r;
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
    return from_atom(make_atom(AtomKind::mod, {}, {std::move(rest), constant(k)}));
}

inline Poly mod(const Poly& a, const Poly& b) {
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
    return scale(from_atom(make_atom(AtomKind::mod, {}, {std::move(num), std::move(den)})), g);
}

/// p as an extremum, when p == k*X + t with X a Max or Min atom (the only such
/// factor of p's terms, alone in its term): the effective kind (X's, swapped
/// when k < 0) and the arguments k*x + t.
struct Spread {
    AtomKind kind;
    std::vector<Poly> args;
};
inline std::optional<Spread> spread(const Poly& p) {
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
    std::vector<Term> rest = p.terms;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(*at));
    const Poly t = from_sorted(p.constant, std::move(rest));
    Spread s{x.coef > 0 ? atom.kind : (atom.kind == AtomKind::max ? AtomKind::min : AtomKind::max), {}};
    try {
        for (const auto& a : atom.args) s.args.push_back(add(scale(a, x.coef), t));
    } catch (const overflow&) {
        return std::nullopt;
    }
    return s;
}

/// The constant p - q when it is one.
inline std::optional<std::int64_t> constant_distance(const Poly& p, const Poly& q) {
    try {
        const Poly d = sub(p, q);
        if (d.is_constant()) return d.constant;
    } catch (const overflow&) {
    }
    return std::nullopt;
}

/// x <= y for every value of the symbols, seen from the structure: a constant
/// difference, or through the arguments of a Max or Min (`depth` levels).
inline bool provably_le(const Poly& x, const Poly& y, int depth) {
    if (const auto d = constant_distance(x, y)) return *d <= 0;
    if (depth == 0) return false;
    const auto sx = spread(x);
    const auto sy = spread(y);
    const auto any_all = [&](const std::vector<Poly>& xs, bool any, bool left) {
        const auto one = [&](const Poly& e) { return left ? provably_le(e, y, depth - 1) : provably_le(x, e, depth - 1); };
        return any ? std::any_of(xs.begin(), xs.end(), one) : std::all_of(xs.begin(), xs.end(), one);
    };
    if (sx && any_all(sx->args, sx->kind == AtomKind::min, true)) return true;
    if (sy && any_all(sy->args, sy->kind == AtomKind::max, false)) return true;
    return false;
}

/// x <= Max(ys) (is_max) or x >= Min(ys), seen from the structure as provably_le.
inline bool within(const Poly& x, const std::vector<const Poly*>& ys, bool is_max, int depth) {
    for (const Poly* y : ys)
        if (is_max ? provably_le(x, *y, depth) : provably_le(*y, x, depth)) return true;
    if (depth == 0) return false;
    const auto sx = spread(x);
    if (!sx) return false;
    const auto one = [&](const Poly& e) { return within(e, ys, is_max, depth - 1); };
    // in a Max: a Min is below when one argument is, a Max when all are (dually in a Min)
    if ((sx->kind == AtomKind::min) == is_max) return std::any_of(sx->args.begin(), sx->args.end(), one);
    return std::all_of(sx->args.begin(), sx->args.end(), one);
}

/// Max (kind == max) or Min of the arguments, in canonical form: nested ones
/// flattened (also through k*X + t), constants folded, arguments at a constant
/// distance from another or absorbed (Min(x, Max(x, y)) == x) removed; then
/// the common summand, the positive common factor and the sign go out:
/// Max(t + k*a, t + k*b) == t + k*Max(a, b), Max(-a, -b) == -Min(a, b).
inline Poly extremum(AtomKind kind, const std::vector<Poly>& args) {
    const bool is_max = kind == AtomKind::max;
    std::vector<Poly> flat;
    std::optional<std::int64_t> best;
    auto take = [&](auto& self, const Poly& p) -> void {
        if (p.is_constant()) {
            best = !best ? p.constant : (is_max ? std::max(*best, p.constant) : std::min(*best, p.constant));
            return;
        }
        if (auto s = spread(p); s && s->kind == kind) {
            for (const auto& inner : s->args) self(self, inner);
            return;
        }
        flat.push_back(p);
    };
    // Max(x, x) is x as it is written (spreading x could write it differently)
    if (!args.empty() && std::all_of(args.begin(), args.end(), [&](const Poly& a) { return equal(a, args.front()); })) return args.front();
    for (const auto& a : args) take(take, a);
    if (best) flat.push_back(constant(*best));
    std::vector<bool> alive(flat.size(), true);
    for (std::size_t i = 0; i < flat.size(); ++i) {
        for (std::size_t j = i + 1; j < flat.size() && alive[i]; ++j) {
            if (!alive[j]) continue;
            const auto d = constant_distance(flat[i], flat[j]);
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
        std::vector<const Poly*> others;
        for (std::size_t j = 0; j < flat.size(); ++j)
            if (j != i && alive[j]) others.push_back(&flat[j]);
        if (!others.empty() && within(flat[i], others, is_max, 3)) alive[i] = false;
    }
    std::vector<Poly> kept;
    for (std::size_t i = 0; i < flat.size(); ++i)
        if (alive[i]) kept.push_back(std::move(flat[i]));
    if (kept.size() == 1) return std::move(kept[0]);
    const auto by_order = [](const Poly& x, const Poly& y) { return cmp_poly(x, y) < 0; };
    const auto same = [](const Poly& x, const Poly& y) { return cmp_poly(x, y) == 0; };
    // what is left is one argument's own family (the others absorbed): that argument as written
    std::sort(kept.begin(), kept.end(), by_order);
    for (const auto& a : args) {
        const auto s = spread(a);
        if (!s || s->kind != kind || s->args.size() != kept.size()) continue;
        std::vector<Poly> family = s->args;
        std::sort(family.begin(), family.end(), by_order);
        if (std::equal(family.begin(), family.end(), kept.begin(), same)) return a;
    }
    const std::vector<Poly> plain = kept;
    try {
        // the common summand: the terms every argument has with the same coefficient,
        // and the smallest constant of the non-constant arguments
        std::vector<Term> common;
        for (const auto& t : kept.front().terms) {
            bool everywhere = true;
            for (std::size_t i = 1; i < kept.size() && everywhere; ++i)
                everywhere = std::any_of(kept[i].terms.begin(), kept[i].terms.end(), [&](const Term& u) {
                    return u.coef == t.coef && cmp_mono(u.mono, t.mono) == 0;
                });
            if (everywhere) common.push_back(t);
        }
        auto least_constant = [](const std::vector<Poly>& xs) {
            std::optional<std::int64_t> c;
            for (const auto& x : xs)
                if (!x.is_constant()) c = c ? std::min(*c, x.constant) : x.constant;
            return c.value_or(0);
        };
        Poly t = from_sorted(0, std::move(common));
        for (auto& x : kept) x = sub(x, t);
        const Poly least = constant(least_constant(kept));
        for (auto& x : kept) x = sub(x, least);
        t = add(t, least);
        // the positive common factor
        std::int64_t g = 0;
        for (const auto& x : kept) g = gcd(g, content(x));
        if (g > 1)
            for (auto& x : kept) x = divide_exact(x, g);
        // what is left may flatten or absorb further (Max(t - Max(0, a), t + 1) is t + Max(1, -Max(0, a)), t + 1)
        if (!is_zero(t) || g != 1) return add(t, scale(extremum(kind, kept), g));
        // the sign: of Max(A) == -Min(-A), the form whose sorted arguments come last
        std::vector<Poly> negated;
        for (const auto& x : kept) negated.push_back(negate(x));
        const Poly shift = constant(least_constant(negated));
        for (auto& x : negated) x = sub(x, shift);
        std::sort(kept.begin(), kept.end(), by_order);
        std::sort(negated.begin(), negated.end(), by_order);
        // (compared on the non-constant arguments first: Max(-1, s0) stays, Max(-s0, -s1) is -Min(s0, s1);
        // a family its own negation, Min(s0, 5 - s0), is written with Max: 5 - Max(s0, 5 - s0))
        const auto skip = [](std::vector<Poly>& xs) { return xs.begin() + (xs.front().is_constant() ? 1 : 0); };
        const bool flip = std::lexicographical_compare(skip(kept), kept.end(), skip(negated), negated.end(), by_order) ||
                          (std::equal(skip(kept), kept.end(), skip(negated), negated.end(),
                                      [](const Poly& x, const Poly& y) { return cmp_poly(x, y) == 0; }) &&
                           (std::lexicographical_compare(kept.begin(), kept.end(), negated.begin(), negated.end(), by_order) ||
                            (!is_max && std::equal(kept.begin(), kept.end(), negated.begin(), negated.end(), same))));
        if (!flip) return add(t, scale(from_atom(make_atom(kind, {}, std::move(kept))), g));
        // Max(A) == -(Min(N) + shift) with N = -A - shift
        const AtomKind other = is_max ? AtomKind::min : AtomKind::max;
        return sub(t, scale(add(from_atom(make_atom(other, {}, std::move(negated))), shift), g));
    } catch (const overflow&) {  // the factoring overflows: the arguments as they are
        std::vector<Poly> xs = plain;
        std::sort(xs.begin(), xs.end(), by_order);
        return from_atom(make_atom(kind, {}, std::move(xs)));
    }
}

/// The most rewrites settle() makes in one sum; beyond, too_large{depth} (a half-settled
/// sum would print a form that parses back differently).
inline constexpr int max_settle_rounds = 1024;

/// Whether a term of p with the quotient q (exponent 1) has a coefficient the divisor's
/// leading coefficient divides and the rest of a monomial its leading monomial divides:
/// settle's cheap test before it computes q's cofactor.
inline bool may_take(const Poly& p, const Atom& q) {
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
inline bool has_quotient_of(const Poly& p, const Atom& m) {
    for (const auto& t : p.terms)
        for (const auto& f : t.mono)
            if (f.atom->kind == AtomKind::floordiv && cmp_poly(f.atom->args[0], m.args[0]) == 0 &&
                cmp_poly(f.atom->args[1], m.args[1]) == 0)
                return true;
    return false;
}

/// The sum-level laws of the canonical form, applied until none applies:
///  - a multiple of a divisor next to its quotient is the numerator without its
///    remainder: q*d*(x//d) == q*(x - Mod(x, d)), for the part q*d of the
///    cofactor of x//d that d divides exactly (k*(x//k) + Mod(x, k) is then x);
///  - c*Max(a, b) + c*Min(a, b) == c*(a + b) (for the common part of two
///    coefficients of the same sign).
inline Poly settle(Poly p) {
    {  // most sums have nothing to rewrite: no quotient, and at most one Max or Min term
        bool quotient = false;
        int extremes = 0;
        for (const auto& t : p.terms)
            for (const auto& f : t.mono) {
                quotient = quotient || f.atom->kind == AtomKind::floordiv;
                extremes += (f.atom->kind == AtomKind::max || f.atom->kind == AtomKind::min) && t.mono.size() == 1;
            }
        if (!quotient && extremes < 2) return p;
    }
    for (int round = 0; round < max_settle_rounds; ++round) {
        const Atom* quotient = nullptr;  // the first x//d with a reducible cofactor
        std::optional<Poly> taken;       // its q
        std::vector<const Atom*> tried;
        std::optional<Poly> rewritten;
        std::vector<const Term*> extremes;            // the terms c*Max(a, b) and c*Min(a, b)
        const Term* extreme[2] = {nullptr, nullptr};  // a Max and a Min term of the same arguments
        for (const auto& t : p.terms) {
            for (const auto& f : t.mono) {
                const Atom* a = f.atom.get();
                if (a->kind == AtomKind::floordiv && f.exp == 1 && !quotient && may_take(p, *a) &&
                    std::none_of(tried.begin(), tried.end(), [&](const Atom* x) { return cmp_atom(*x, *a) == 0; })) {
                    tried.push_back(a);
                    // the cofactor of a in p
                    std::vector<Term> cof;
                    std::int64_t cc = 0;
                    for (const auto& u : p.terms) {
                        Mono rest;
                        bool has = false;
                        for (const auto& g : u.mono) {
                            if (!has && g.exp == 1 && cmp_atom(*g.atom, *a) == 0)
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
                    const Poly& d = a->args[1];
                    if (d.is_constant()) {
                        std::vector<Term> q;
                        for (const auto& u : cof)
                            if (u.coef % d.constant == 0) q.push_back(Term{u.coef / d.constant, u.mono});
                        Poly qp = normalized(cc % d.constant == 0 ? cc / d.constant : 0, std::move(q));
                        if (!is_zero(qp)) taken = std::move(qp);
                    } else if (auto qr = divide(normalized(cc, std::move(cof)), d, true, false)) {  // raw: q*d*(x//d) leaves p exactly
                        taken = std::move(qr->first);
                    }
                    if (taken) quotient = a;
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
        for (const auto& t : p.terms) {
            for (std::size_t i = 0; i < t.mono.size(); ++i) {
                const Atom& m = *t.mono[i].atom;
                if (m.kind != AtomKind::mod || t.mono[i].exp != 1 || !m.args[1].is_constant() || !has_quotient_of(p, m)) continue;
                Mono rest = t.mono;
                rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
                const Mono with_quotient = mono_mul(rest, {Factor{make_atom(AtomKind::floordiv, {}, m.args), 1}});
                const bool paired = std::any_of(p.terms.begin(), p.terms.end(), [&](const Term& u) { return cmp_mono(u.mono, with_quotient) == 0; });
                if (!paired) continue;
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
