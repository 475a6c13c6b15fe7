// yobx/sym/shape_env/bounds.hpp — ShapeEnv's ranges: the interval of an
// expression from the ranges of its symbols.
//
// Laws: interval arithmetic over [lo, hi] with infinite ends that saturate
// (bound_add, bound_mul, bound_pow), term by term (bound_of); atoms bounded
// by their arguments (Max, Min, FloorDiv, Mod: Mod(x, k) in [0, k - 1] for
// k >= 1). When a side stays open, finer bounds: an atom repeated in several
// terms written lo + y from its bound (shifted_bound: s*s - s + 1 >= 3 for
// s >= 2), a floor
// division relaxed to its quotient and a remainder (relaxed_bound:
// x - (6*x)//7 >= 1 for x >= 1), a Max or Min distributed over the rest of the
// sum (distributed_bound: Max(3, p) - p - 3 <= 0), and the exact range of a
// sum of floor divisions and remainders by constants in one symbol, from one
// period of its values (univariate_bound: h//4 - h//8 >= 1 for h >= 4).
// test_shape_env.cpp holds these examples.
#pragma once

#include <yobx/sym/shape_env/env.hpp>

namespace yobx {

inline auto ShapeEnv::sat(bool positive) -> std::int64_t { return positive ? ValueRange::inf : ValueRange::neg_inf; }

inline auto ShapeEnv::infinite(std::int64_t v) -> bool { return v == ValueRange::inf || v == ValueRange::neg_inf; }

inline auto ShapeEnv::bound_add(std::int64_t a, std::int64_t b) -> std::int64_t {
    if (infinite(a)) return a;
    if (infinite(b)) return b;
    std::int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return sat(a > 0);
    return r;
}

inline auto ShapeEnv::bound_mul(std::int64_t a, std::int64_t b) -> std::int64_t {
    if (a == 0 || b == 0) return 0;
    const bool positive = (a > 0) == (b > 0);
    if (infinite(a) || infinite(b)) return sat(positive);
    std::int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return sat(positive);
    return r;
}

inline auto ShapeEnv::bound_pow(std::int64_t a, std::int64_t e) -> std::int64_t {  // e >= 1
    const bool negative = a < 0 && e % 2 == 1;
    if (infinite(a)) return negative ? ValueRange::neg_inf : ValueRange::inf;
    const std::int64_t m = a < 0 ? -a : a;
    if (m <= 1) return negative ? -m : m;
    std::int64_t r = 1;
    for (std::int64_t i = 0; i < e; ++i)  // m >= 2: overflows within 63 steps
        if (__builtin_mul_overflow(r, m, &r)) return negative ? ValueRange::neg_inf : ValueRange::inf;
    return negative ? -r : r;
}

inline auto ShapeEnv::range_add(ValueRange a, ValueRange b) -> ValueRange {
    return {a.lower == ValueRange::neg_inf || b.lower == ValueRange::neg_inf ? ValueRange::neg_inf : bound_add(a.lower, b.lower),
            a.upper == ValueRange::inf || b.upper == ValueRange::inf ? ValueRange::inf : bound_add(a.upper, b.upper)};
}

inline auto ShapeEnv::range_mul(ValueRange a, ValueRange b) -> ValueRange {
    const std::int64_t c[4] = {bound_mul(a.lower, b.lower), bound_mul(a.lower, b.upper), bound_mul(a.upper, b.lower),
                               bound_mul(a.upper, b.upper)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

inline auto ShapeEnv::range_pow(ValueRange a, std::int64_t e) -> ValueRange {
    const std::int64_t x = bound_pow(a.lower, e), y = bound_pow(a.upper, e);
    if (a.lower >= 0 || e % 2 == 1) return {std::min(x, y), std::max(x, y)};
    if (a.upper <= 0) return {y, x};
    return {0, std::max(x, y)};
}

inline auto ShapeEnv::bound_floordiv(std::int64_t a, std::int64_t k) -> std::int64_t {  // k >= 1
    if (infinite(a)) return a;
    if (k == ValueRange::inf) return a >= 0 ? 0 : -1;
    return detail::sym::floordiv(a, k);
}

template <class>
auto ShapeEnv::bound_of(const Poly& p, std::optional<BoolKind> question) const -> ValueRange {
    // the finer bounds' budget, counted from the outermost call: spent only past it
    thread_local int depth = 0;
    thread_local int finer = 0;
    if (depth == 0) finer = 0;
    const detail::Nesting nested(depth);
    ValueRange acc = ValueRange::exactly(p.constant);
    for (const auto& t : p.terms) {
        ValueRange r = ValueRange::exactly(t.coef);
        for (const auto& f : t.mono) r = range_mul(r, range_pow(bound_atom(*f.atom), f.exp));
        acc = range_add(acc, r);
    }
    // each finer bound only while a side is still open, the question (if any) not answered,
    // and within the budget
    const auto open = [&] {
        return (acc.lower == ValueRange::neg_inf || acc.upper == ValueRange::inf) &&
               !(question && decide_constant(*question, acc.lower, acc.upper)) && finer++ < max_finer_bounds;
    };
    const auto narrow_to = [&](ValueRange s) { acc = {std::max(acc.lower, s.lower), std::min(acc.upper, s.upper)}; };
    if (open() && repeats_an_atom(p)) narrow_to(shifted_bound(p));
    if (open()) narrow_to(relaxed_bound(p));
    if (open()) narrow_to(distributed_bound(p));
    // for a question still open (also between two finite ends), the exact range of a sum with
    // a floor division or a remainder in one symbol; not for a range asked without a question:
    // on Swin-T that doubled the time of the walk (the bounds of every nested argument)
    const auto divides = [](const detail::sym::Term& t) {
        return std::any_of(t.mono.begin(), t.mono.end(), [](const detail::sym::Factor& f) {
            return f.atom->kind == AtomKind::floordiv || f.atom->kind == AtomKind::mod;
        });
    };
    if (question && p.terms.size() >= 2 && std::any_of(p.terms.begin(), p.terms.end(), divides) &&
        !decide_constant(*question, acc.lower, acc.upper) && finer++ < max_finer_bounds)
        narrow_to(univariate_bound(p));
    return acc;
}

/// p's exact range when p is quasi-linear in one symbol s of this env whose range has a
/// lower end: a sum of constant multiples of s and of floor divisions and remainders by
/// positive constants of such sums (nested), each term of degree one. Then p(s + L) - p(s)
/// is one constant for L the period of p (the lcm over its terms of the products of the
/// divisors down each chain), so the values over one period from s's lower end, and that
/// step, give the range (`h//4 + Mod(3*(h//4), 4)`, h//4 rounded up to a multiple of 4, is
/// at least 4 for h >= 4, where its terms alone bound it by 1; `h//4 - h//8` is at least 1).
/// Unknown for any other p, a period above max_period or a value that overflows.
template <class>
auto ShapeEnv::univariate_bound(const Poly& p) const -> ValueRange {
    namespace ds = detail::sym;
    const ds::Atom* symbol = nullptr;
    // q's period, 0 when q is not quasi-linear in one symbol or its period exceeds max_period
    const auto period = [&](const auto& self, const ds::Poly& q) -> std::int64_t {
        std::int64_t l = 1;
        for (const auto& t : q.terms) {
            if (t.mono.size() != 1 || t.mono[0].exp != 1) return 0;
            const ds::Atom& a = *t.mono[0].atom;
            std::int64_t m = 1;
            if (a.kind == AtomKind::symbol) {
                if (symbol != nullptr && symbol->name != a.name) return 0;
                symbol = &a;
            } else if (a.kind == AtomKind::floordiv || a.kind == AtomKind::mod) {
                const ds::Poly& k = a.args[1];
                if (!k.is_constant() || k.constant < 1 || k.constant > max_period) return 0;
                const std::int64_t inner = self(self, a.args[0]);
                if (inner == 0) return 0;
                m = inner * k.constant;  // both at most max_period
            } else {
                return 0;
            }
            if (m > max_period) return 0;
            l = std::lcm(l, m);  // both at most max_period
            if (l > max_period) return 0;
        }
        return l;
    };
    const std::int64_t l = period(period, p);
    if (l == 0 || symbol == nullptr) return ValueRange::unknown();
    const ValueRange r = bound_atom(*symbol);
    if (r.lower == ValueRange::neg_inf) return ValueRange::unknown();
    if (const auto known = univariate_cache_.find(p); known != univariate_cache_.end()) return known->second;
    const auto answer = [&](ValueRange v) {
        univariate_cache_.emplace(p, v);
        return v;
    };
    try {
        std::int64_t x = 0;
        const auto value_of = [&x](const ds::Atom&) { return x; };
        const auto at = [&](std::int64_t s) {
            x = s;
            return ds::evaluate(p, value_of);
        };
        // the smallest and the largest value over [from, from + count)
        const auto over = [&](std::int64_t from, std::int64_t count) {
            ValueRange v{ValueRange::inf, ValueRange::neg_inf};
            for (std::int64_t i = 0; i < count; ++i) {
                const std::int64_t y = at(ds::add(from, i));
                v = {std::min(v.lower, y), std::max(v.upper, y)};
            }
            return v;
        };
        std::int64_t width = 0;
        if (r.upper != ValueRange::inf && !__builtin_sub_overflow(r.upper, r.lower, &width) && width < 2 * l)
            return answer(over(r.lower, width + 1));  // few enough values: all of them
        const ValueRange first = over(r.lower, l);
        const std::int64_t step = ds::sub(at(ds::add(r.lower, l)), at(r.lower));
        if (r.upper == ValueRange::inf)
            return answer({step >= 0 ? first.lower : ValueRange::neg_inf, step <= 0 ? first.upper : ValueRange::inf});
        const ValueRange last = over(ds::add(ds::sub(r.upper, l), 1), l);  // each residue's value nearest the upper end
        return answer({step >= 0 ? first.lower : last.lower, step <= 0 ? first.upper : last.upper});
    } catch (const ds::overflow&) {
        return answer(ValueRange::unknown());
    }
}

/// The term-by-term range of p, with the ranges `given` for the atoms listed there
/// (by address: the placeholders shifted_bound and relaxed_bound introduce) and
/// bound_atom's for the others.
template <class>
auto ShapeEnv::bound_with(const Poly& p, const std::vector<std::pair<const detail::sym::Atom*, ValueRange>>& given) const -> ValueRange {
    ValueRange acc = ValueRange::exactly(p.constant);
    for (const auto& t : p.terms) {
        ValueRange r = ValueRange::exactly(t.coef);
        for (const auto& f : t.mono) {
            const auto it = std::find_if(given.begin(), given.end(), [&](const auto& e) { return e.first == f.atom.get(); });
            r = range_mul(r, range_pow(it == given.end() ? bound_atom(*f.atom) : it->second, f.exp));
        }
        acc = range_add(acc, r);
    }
    return acc;
}

/// p's range with a term c*Max(a...) or c*Min(a...) distributed over the rest r:
/// c*Max(a) + r is Max(c*a_i + r) for c > 0 (Min for c < 0), so its range is
/// the Max (or Min) of the ranges of c*a_i + r, where r's atoms may meet a_i's
/// (`Max(3, p) - p - 3` is Max(-p, -3): at most 0 for p >= 0, where Max(3, p) and
/// -p alone bound nothing). Unknown when p has no such term.
template <class>
auto ShapeEnv::distributed_bound(const Poly& p) const -> ValueRange {
    namespace ds = detail::sym;
    thread_local int depth = 0;
    if (depth >= max_distributed_depth) return ValueRange::unknown();
    const auto lattice = [](const ds::Term& t) {
        if (t.mono.size() != 1 || t.mono[0].exp != 1) return false;
        const ds::Atom& a = *t.mono[0].atom;
        return (a.kind == AtomKind::max || a.kind == AtomKind::min) && a.args.size() <= 4;
    };
    const auto it = std::find_if(p.terms.begin(), p.terms.end(), lattice);
    if (it == p.terms.end()) return ValueRange::unknown();
    const detail::Nesting deeper(depth);
    try {
        ds::Terms others;
        for (auto t = p.terms.begin(); t != p.terms.end(); ++t)
            if (t != it) others.push_back(*t);
        const ds::Poly rest = ds::from_sorted(p.constant, std::move(others));
        const ds::Atom& a = *it->mono[0].atom;
        // c*Max is a Max of the c*a_i when c > 0, and so is c*Min when c < 0
        const bool is_max = (a.kind == AtomKind::max) == (it->coef > 0);
        ValueRange acc;
        for (std::size_t i = 0; i < a.args.size(); ++i) {
            const ValueRange r = bound_of(ds::add_raw(rest, ds::scale_raw(a.args[i], it->coef)));
            if (i == 0) acc = r;
            else if (is_max) acc = {std::max(acc.lower, r.lower), std::max(acc.upper, r.upper)};
            else acc = {std::min(acc.lower, r.lower), std::min(acc.upper, r.upper)};
        }
        return acc;
    } catch (const ds::overflow&) {
        return ValueRange::unknown();
    } catch (const ds::too_large&) {
        return ValueRange::unknown();
    }
}

/// p's range with each term c*(q//k), k >= 1 a constant and q sharing an atom with
/// another term, written c*(q - r)/k for its remainder r in [0, k - 1]: L*p, L the
/// lcm of those k, is a sum in which q's atoms meet the other terms' (`x - (6*x)//7`,
/// the ceiling of x/7, is `(x + r)/7`: at least 1 for x >= 1, where x and -(6*x)//7
/// alone bound nothing). Unknown when p has no such term or a number overflows.
template <class>
auto ShapeEnv::relaxed_bound(const Poly& p) const -> ValueRange {
    namespace ds = detail::sym;
    const auto divisor = [&](const ds::Term& t) -> std::int64_t {
        if (t.mono.size() != 1 || t.mono[0].exp != 1) return 0;
        const ds::Atom& a = *t.mono[0].atom;
        if (a.kind != AtomKind::floordiv || !a.args[1].is_constant() || a.args[1].constant < 1) return 0;
        const bool meets = std::any_of(a.args[0].terms.begin(), a.args[0].terms.end(), [&](const ds::Term& qt) {
            return std::any_of(qt.mono.begin(), qt.mono.end(), [&](const ds::Factor& f) {
                return std::any_of(p.terms.begin(), p.terms.end(), [&](const ds::Term& u) {
                    return &u != &t && std::any_of(u.mono.begin(), u.mono.end(), [&](const ds::Factor& g) { return ds::cmp_atom(*g.atom, *f.atom) == 0; });
                });
            });
        });
        return meets ? a.args[1].constant : 0;
    };
    try {
        std::int64_t l = 1;
        for (const auto& t : p.terms)
            if (const std::int64_t k = divisor(t)) l = ds::mul(l / std::gcd(l, k), k);
        if (l == 1) return ValueRange::unknown();
        ds::Poly out = ds::constant(ds::mul(p.constant, l));
        std::vector<std::pair<const ds::Atom*, ValueRange>> remainders;  // r in [0, k - 1]
        std::vector<ds::AtomPtr> keep;
        for (const auto& t : p.terms) {
            const std::int64_t k = divisor(t);
            if (k == 0) {
                out = ds::add_raw(out, ds::scale_raw(ds::from_sorted(0, {t}), l));
                continue;
            }
            keep.push_back(ds::make_atom(AtomKind::symbol, "#r" + std::to_string(keep.size()), {}));
            remainders.emplace_back(keep.back().get(), ValueRange{0, k - 1});
            const ds::Poly q_minus_r = ds::add_raw(t.mono[0].atom->args[0], ds::scale_raw(ds::from_atom(keep.back()), -1));
            out = ds::add_raw(out, ds::scale_raw(q_minus_r, ds::mul(t.coef, l / k)));
        }
        const ValueRange acc = bound_with(out, remainders);
        // p is an integer: its bounds are those of L*p divided by L, rounded inwards
        return {acc.lower == ValueRange::neg_inf ? acc.lower : ds::neg(ds::floordiv(ds::neg(acc.lower), l)),
                acc.upper == ValueRange::inf ? acc.upper : ds::floordiv(acc.upper, l)};
    } catch (const ds::overflow&) {
        return ValueRange::unknown();
    } catch (const ds::too_large&) {
        return ValueRange::unknown();
    }
}

/// Whether an atom of p is in two terms or has a power: then the term-by-term bound is loose.
template <class>
auto ShapeEnv::repeats_an_atom(const Poly& p) -> bool {
    for (std::size_t i = 0; i < p.terms.size(); ++i)
        for (const auto& f : p.terms[i].mono)
            if (f.exp > 1 || std::any_of(p.terms.begin() + static_cast<std::ptrdiff_t>(i) + 1, p.terms.end(), [&](const auto& u) {
                    return std::any_of(u.mono.begin(), u.mono.end(), [&](const auto& g) { return g.atom == f.atom || detail::sym::cmp_atom(*g.atom, *f.atom) == 0; });
                }))
                return true;
    return false;
}

/// p's range with each atom x written lo + y (or hi - y) for its bound [lo, hi] and
/// y >= 0, expanded: the term-by-term bound of the result is tight at the corner,
/// where the one of p is not (s*s - s + 1 is 3 + 3*t + t*t for s == 2 + t >= 2:
/// at least 3, where s*s and -s alone bound nothing). Unknown when the expansion
/// overflows or exceeds max_shifted_terms.
template <class>
auto ShapeEnv::shifted_bound(const Poly& p) const -> ValueRange {
    namespace ds = detail::sym;
    std::vector<std::pair<const ds::Atom*, ds::Poly>> subst;  // atom -> its shifted form
    std::vector<std::pair<const ds::Atom*, ValueRange>> fresh;  // fresh atom -> range of y
    try {
        ds::Poly out = ds::constant(p.constant);
        for (const auto& t : p.terms) {
            ds::Poly term = ds::constant(t.coef);
            for (const auto& f : t.mono) {
                auto it = std::find_if(subst.begin(), subst.end(), [&](const auto& e) { return ds::cmp_atom(*e.first, *f.atom) == 0; });
                if (it == subst.end()) {
                    const ValueRange r = bound_atom(*f.atom);
                    ds::Poly x = ds::from_sorted(0, {ds::Term{1, {ds::Factor{f.atom, 1}}}});
                    if (r.lower != ValueRange::neg_inf || r.upper != ValueRange::inf) {
                        const bool low = r.lower != ValueRange::neg_inf;
                        const ds::AtomPtr y = ds::make_atom(AtomKind::symbol, "#" + std::to_string(fresh.size()), {});
                        const std::int64_t width = low ? (r.upper == ValueRange::inf ? ValueRange::inf : ds::sub(r.upper, r.lower))
                                                       : ValueRange::inf;
                        fresh.emplace_back(y.get(), ValueRange{0, width});
                        const ds::Poly yp = ds::from_atom(y);
                        x = low ? ds::add_raw(ds::constant(r.lower), yp) : ds::add_raw(ds::constant(r.upper), ds::scale_raw(yp, -1));
                    } else {
                        fresh.emplace_back(f.atom.get(), r);
                    }
                    subst.emplace_back(f.atom.get(), std::move(x));
                    it = subst.end() - 1;
                }
                if (it->second.constant == 0 && it->second.terms.size() == 1) {  // a monomial (y, -y, the atom): raised at once
                    term = ds::mul_raw(term, ds::power(it->second, f.exp));
                    continue;
                }
                for (std::int64_t e = 0; e < f.exp; ++e) {  // at least one more term each time: ends within max_shifted_terms
                    term = ds::mul_raw(term, it->second);
                    if (term.terms.size() > max_shifted_terms) return ValueRange::unknown();
                }
            }
            out = ds::add_raw(out, term);
            if (out.terms.size() > max_shifted_terms) return ValueRange::unknown();
        }
        return bound_with(out, fresh);
    } catch (const ds::overflow&) {
        return ValueRange::unknown();
    } catch (const ds::too_large&) {
        return ValueRange::unknown();
    }
}

template <class>
auto ShapeEnv::bound_atom(const detail::sym::Atom& a) const -> ValueRange {
    switch (a.kind) {
        case AtomKind::symbol: {
            const SymbolInfo* i = find(a.name);
            return i ? i->range : ValueRange::unknown();
        }
        case AtomKind::max:
        case AtomKind::min: {
            ValueRange r = bound_of(a.args[0]);
            for (std::size_t i = 1; i < a.args.size(); ++i) {
                const ValueRange x = bound_of(a.args[i]);
                if (a.kind == AtomKind::max)
                    r = {std::max(r.lower, x.lower), std::max(r.upper, x.upper)};
                else
                    r = {std::min(r.lower, x.lower), std::min(r.upper, x.upper)};
            }
            return r;
        }
        case AtomKind::floordiv: {
            const ValueRange n = bound_of(a.args[0]), d = bound_of(a.args[1]);
            if (d.lower < 1 || n.lower < 0) return ValueRange::unknown();
            return {bound_floordiv(n.lower, d.upper), bound_floordiv(n.upper, d.lower)};
        }
        default: {  // mod
            const ValueRange n = bound_of(a.args[0]), d = bound_of(a.args[1]);
            if (d.lower >= 1) {
                const std::int64_t hi = d.upper == ValueRange::inf ? ValueRange::inf : d.upper - 1;
                if (n.lower >= 0) return {0, std::min(n.upper, hi)};
                return {0, hi};
            }
            if (d.upper <= -1) return {d.lower == ValueRange::neg_inf ? ValueRange::neg_inf : d.lower + 1, 0};
            return ValueRange::unknown();
        }
    }
}

}  // namespace yobx
