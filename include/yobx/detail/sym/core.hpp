// yobx/detail/sym/core.hpp — the canonical form's representation: checked
// int64 arithmetic, atoms, factors, terms, polynomials, and their total order.
//
// Laws: every operation on coefficients is checked (add, sub, mul, pow throw
// `overflow`; floordiv and pymod follow Python: floordiv(-7, 2) == -4,
// pymod(7, -2) == -1, and throw `zero_division`). Atoms are ordered kind first,
// symbols by natural name order (s2 < s10), the others by their arguments;
// monomials and polynomials lexicographically, so `equal` is a hash check and a
// structural walk (test_sym.cpp: sym_max(s1, s0) prints "Max(s0, s1)").
// The steps of the canonical form, in the order sym_expr.hpp includes them:
// core, build, division, extremum, settle, walk, print, cond.
//
// Every function over polynomials, atoms and conditions is a template,
// `template <class = void>`, called as a plain function (`add(p, q)`): the
// compiler instantiates a template only where it is used, so a file that
// includes <yobx/sym.hpp> and uses nothing does not compile the laws (the
// same goes for the members of SymInt, SymBool and the ShapeEnv). A function
// declared ahead of its definition takes the default at its declaration and
// is defined with `template <class>`. Only the int64 helpers here stay plain
// functions. docs/performance.md has the measurements.
//
// Storage: the arrays of terms, factors beyond the first, argument lists and the
// laws' scratch arrays, and the atoms, come from CachedAllocator
// (detail/block_cache.hpp), which keeps freed arrays of 1 to 8 elements per
// thread: the laws build and drop small sums at every step. A symbol's name is
// ordered through a key computed when its atom is made (NameKey).
#pragma once

#include <yobx/detail/block_cache.hpp>
#include <yobx/detail/small_vector.hpp>

#include <algorithm>
#include <array>
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
using Mono = SmallVector<Factor, 1, CachedAllocator<Factor>>;  // sorted by atom, distinct atoms, exp >= 1; one factor inline
struct Term {
    std::int64_t coef = 0;  // never 0
    Mono mono;              // never empty
};
/// A sum's terms: arrays of a few terms come and go at every operation, kept per thread
/// for the next one (detail/block_cache.hpp).
using Terms = std::vector<Term, CachedAllocator<Term>>;
/// The short-lived arrays of the laws (arguments, flags, pointers), kept per thread as well.
template <class T>
using Scratch = std::vector<T, CachedAllocator<T>>;

/// constant + sum of terms, terms in canonical (printing) order.
///
/// Most polynomials the laws destroy are moved-from or constants: their term array holds
/// no storage. The destructor sees that inline and skips the vector's destructor, an
/// out-of-line call the compiler does not inline (it destroys the terms); that call was
/// a sixth of the time of parsing (docs/performance.md). Hence `terms` in a union, and
/// the special members written out.
struct Poly {
    std::int64_t constant = 0;
    union {
        Terms terms;
    };
    std::size_t hash = 0;  // 0: not computed (most sums built on the way are never compared); hash_of() reads it

    Poly() noexcept { ::new (static_cast<void*>(&terms)) Terms(); }
    Poly(const Poly& o) : constant(o.constant), hash(o.hash) { ::new (static_cast<void*>(&terms)) Terms(o.terms); }
    Poly(Poly&& o) noexcept : constant(o.constant), hash(o.hash) { ::new (static_cast<void*>(&terms)) Terms(std::move(o.terms)); }
    Poly& operator=(const Poly& o) {
        terms = o.terms;
        constant = o.constant;
        hash = o.hash;
        return *this;
    }
    Poly& operator=(Poly&& o) noexcept {
        terms = std::move(o.terms);
        constant = o.constant;
        hash = o.hash;
        return *this;
    }
    ~Poly() {
        if (terms.capacity() != 0) terms.~Terms();  // no storage: nothing to release
    }

    bool is_constant() const noexcept { return terms.empty(); }
};

/// A symbol's name as two integers that order as cmp_name orders names, when the name is
/// short enough: the text before its final digits (1 to 8 bytes, big-endian, zero-padded)
/// and its number (digit count, value; no leading zero, at most 15 digits). {0, 0}
/// otherwise: such names are compared by cmp_name.
struct NameKey {
    std::uint64_t text = 0;
    std::uint64_t number = 0;
};

template <class = void>
NameKey name_key(std::string_view s) {
    std::size_t i = s.size();
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
    const std::size_t digits = s.size() - i;
    if (i == 0 || i > 8 || digits > 15 || (digits > 1 && s[i] == '0')) return {};
    NameKey k;
    for (std::size_t j = 0; j < 8; ++j) {
        const auto c = j < i ? static_cast<unsigned char>(s[j]) : 0u;
        if (j < i && c == 0) return {};
        k.text = (k.text << 8) | c;
    }
    std::uint64_t v = 0;
    for (std::size_t j = i; j < s.size(); ++j) v = v * 10 + static_cast<std::uint64_t>(s[j] - '0');
    k.number = (static_cast<std::uint64_t>(digits) << 60) | v;
    return k;
}

/// An atom's arguments and the argument lists of the laws.
using Polys = Scratch<Poly>;

struct Atom {
    AtomKind kind = AtomKind::symbol;
    std::string name;        // symbol
    NameKey key;             // symbol: name_key(name)
    Polys args;  // FloorDiv/Mod: {numerator, divisor}; Max/Min: sorted, distinct
    std::size_t hash = 0;
};

// ----------------------------------------------------------------- ordering

/// Natural order of names: s2 < s10, then plain text order.
template <class = void>
int cmp_name(std::string_view a, std::string_view b) {
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

/// cmp_name as a comparator: the order of free_symbols() (std::sort, std::includes).
struct NameLess {
    bool operator()(std::string_view a, std::string_view b) const { return cmp_name(a, b) < 0; }
};

inline int cmp_i64(std::int64_t a, std::int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

template <class = void>
int cmp_poly(const Poly& a, const Poly& b);

template <class = void>
int cmp_atom(const Atom& a, const Atom& b) {
    if (&a == &b) return 0;
    if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
    if (a.kind == AtomKind::symbol) {
        if (a.key.text == 0 || b.key.text == 0) return cmp_name(a.name, b.name);
        if (a.key.text != b.key.text) return a.key.text < b.key.text ? -1 : 1;
        return a.key.number == b.key.number ? 0 : (a.key.number < b.key.number ? -1 : 1);
    }
    if (a.args.size() != b.args.size()) return a.args.size() < b.args.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.args.size(); ++i)
        if (const int c = cmp_poly(a.args[i], b.args[i]); c != 0) return c;
    return 0;
}

/// Lexicographic order of monomials, highest first (SymPy's `lex`): s0*s1, s0, s1.
template <class = void>
int cmp_mono(const Mono& a, const Mono& b) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (const int c = cmp_atom(*a[i].atom, *b[i].atom); c != 0) return c;
        if (a[i].exp != b[i].exp) return a[i].exp > b[i].exp ? -1 : 1;
    }
    if (a.size() != b.size()) return a.size() > b.size() ? -1 : 1;
    return 0;
}

template <class>
int cmp_poly(const Poly& a, const Poly& b) {
    if (&a == &b) return 0;
    if (a.terms.size() != b.terms.size()) return a.terms.size() < b.terms.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.terms.size(); ++i) {
        if (const int c = cmp_mono(a.terms[i].mono, b.terms[i].mono); c != 0) return c;
        if (const int c = cmp_i64(a.terms[i].coef, b.terms[i].coef); c != 0) return c;
    }
    return cmp_i64(a.constant, b.constant);
}

/// p's term with the monomial m, or null: a binary search, the terms being in monomial order.
template <class = void>
const Term* term_of(const Poly& p, const Mono& m) {
    const auto at = std::lower_bound(p.terms.begin(), p.terms.end(), m, [](const Term& u, const Mono& w) { return cmp_mono(u.mono, w) < 0; });
    return at != p.terms.end() && cmp_mono(at->mono, m) == 0 ? &*at : nullptr;
}

template <class = void>
std::size_t hash_of(const Poly& p);

template <class = void>
bool equal(const Poly& a, const Poly& b) { return hash_of(a) == hash_of(b) && cmp_poly(a, b) == 0; }

}  // namespace yobx::detail::sym
