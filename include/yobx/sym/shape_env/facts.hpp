// yobx/sym/shape_env/facts.hpp — what ShapeEnv::check records: a bound on one
// symbol narrows its range (s0 >= 4; a bound on a quotient narrows the
// numerator's symbol: s0//4 >= 1 gives s0 >= 4), an equality s == expr, s not in
// expr, becomes a replacement of a fresh symbol before a named one, then of the
// greatest such symbol (Eq(s0, s1) replaces s1 by s0), Eq(Mod(s0, k), 0) records divisibility by k; anything else is
// kept as a fact for decide.hpp. test_shape_env.cpp holds these examples.
#pragma once

#include <yobx/sym/shape_env/env.hpp>

namespace yobx {

template <class>
auto ShapeEnv::narrow(const std::string& name, ValueRange r) -> void {
    SymbolInfo& i = symbols_.at(name);
    ValueRange n{std::max(i.range.lower, r.lower), std::min(i.range.upper, r.upper)};
    const std::int64_t k = i.divisor;
    if (k > 1) {  // round the bounds to multiples of the divisor
        if (n.lower != ValueRange::neg_inf) n.lower = detail::sym::mul(-detail::sym::floordiv(-n.lower, k), k);
        if (n.upper != ValueRange::inf) n.upper = detail::sym::mul(detail::sym::floordiv(n.upper, k), k);
    }
    if (n.empty())
        throw runtime_error("check failed: the range of " + name + " becomes empty (" + i.range.to_string() + " narrowed to " +
                            r.to_string() + (k > 1 ? " with multiples of " + std::to_string(k) : std::string()) + ")");
    i.range = n;
    univariate_cache_.clear();
}

/// The symbol of this env if p is `coef*symbol + constant`, with coef.
template <class>
auto ShapeEnv::term_symbol(const Poly& p, std::int64_t& coef) const -> const detail::sym::Atom* {
    const detail::sym::Atom* a = detail::sym::term_atom(p, coef);
    return a != nullptr && a->kind == AtomKind::symbol && find(a->name) != nullptr ? a : nullptr;
}

template <class>
auto ShapeEnv::add_fact(const Cond& c) -> void {
    if (!c.node) return;
    const auto& n = *c.node;
    switch (n.kind) {
        case BoolKind::and_:
            for (const auto& a : n.args) add_fact(simplified(Cond{false, a}));
            return;
        case BoolKind::eq:
            if (try_replacement(n.diff) || try_divisibility(n.diff)) return;
            break;
        case BoolKind::le: {
            std::int64_t coef = 0;
            if (const auto* s = term_symbol(n.diff, coef)) {
                // canonical Le has coefficient +-1 here: s + c <= 0 or -s + c <= 0
                const std::int64_t c0 = n.diff.constant;
                if (coef == 1)
                    narrow(s->name, {ValueRange::neg_inf, detail::sym::neg(c0)});
                else
                    narrow(s->name, {c0, ValueRange::inf});
                return;
            }
            if (narrow_quotient(n.diff)) return;
            break;
        }
        case BoolKind::ne: {
            std::int64_t coef = 0;
            if (const auto* s = term_symbol(n.diff, coef); s != nullptr && coef == 1) {
                const std::int64_t v = detail::sym::neg(n.diff.constant);  // s != v
                const ValueRange r = symbols_.at(s->name).range;
                if (v == r.lower) {
                    narrow(s->name, {detail::sym::add(v, 1), ValueRange::inf});
                    return;
                }
                if (v == r.upper) {
                    narrow(s->name, {ValueRange::neg_inf, detail::sym::sub(v, 1)});
                    return;
                }
            }
            break;
        }
        default: break;
    }
    facts_.push_back(c);
}

/// `a*((s + c1)//k) + c0 <= 0` with k >= 1 a constant bounds s: `(s + c1)//k >= q` is
/// `s >= q*k - c1`, `(s + c1)//k <= q` is `s <= q*k + k - 1 - c1` (a convolution's
/// output `height//4 >= 1` is `height >= 4`). False when d is not of that form.
template <class>
auto ShapeEnv::narrow_quotient(const Poly& d) -> bool {
    namespace ds = detail::sym;
    std::int64_t a = 0;
    const ds::Atom* f = ds::term_atom(d, a);
    if (f == nullptr || f->kind != AtomKind::floordiv || !f->args[1].is_constant() || f->args[1].constant < 1) return false;
    std::int64_t coef = 0;
    const auto* sym = term_symbol(f->args[0], coef);
    if (sym == nullptr || coef != 1) return false;
    const std::int64_t k = f->args[1].constant, c1 = f->args[0].constant, c0 = d.constant;
    try {
        if (a > 0) {  // quotient <= floor(-c0 / a)
            const std::int64_t q = ds::floordiv(ds::neg(c0), a);
            narrow(sym->name, {ValueRange::neg_inf, ds::sub(ds::add(ds::mul(q, k), k - 1), c1)});
        } else {  // quotient >= ceil(c0 / -a)
            const std::int64_t q = ds::neg(ds::floordiv(ds::neg(c0), ds::neg(a)));
            narrow(sym->name, {ds::sub(ds::mul(q, k), c1), ValueRange::inf});
        }
    } catch (const ds::overflow&) {
        return false;  // a bound past int64: kept as a fact
    }
    return true;
}

/// `s == expr` with s not in expr: s is replaced by expr from now on (a fresh
/// symbol before a named one, then the greatest, so that s1 becomes s0 and not
/// the reverse).
template <class>
auto ShapeEnv::try_replacement(const Poly& d) -> bool {
    const detail::sym::Atom* best = nullptr;
    std::int64_t best_coef = 0;
    for (const auto& t : d.terms) {
        if ((t.coef != 1 && t.coef != -1) || t.mono.size() != 1 || t.mono[0].exp != 1) continue;
        const auto* a = t.mono[0].atom.get();
        if (a->kind != AtomKind::symbol || find(a->name) == nullptr) continue;
        std::size_t uses = 0;
        auto count = [&](const detail::sym::Atom& x) { uses += x.name == a->name; };
        detail::sym::for_each_symbol(d, count);
        if (uses != 1) continue;
        // a fresh symbol (an unknown) is replaced before a named one, then the greatest
        const bool fresh = symbols_.at(a->name).fresh;
        const bool best_fresh = best != nullptr && symbols_.at(best->name).fresh;
        if (best == nullptr || fresh > best_fresh || (fresh == best_fresh && detail::sym::cmp_name(a->name, best->name) > 0)) {
            best = a;
            best_coef = t.coef;
        }
    }
    if (best == nullptr) return false;
    const std::string name = best->name;
    // d == coef*s + rest == 0  =>  s == -rest/coef == -coef*rest
    const Poly value = detail::sym::scale(detail::sym::sub(d, detail::sym::scale(detail::sym::symbol(name), best_coef)), -best_coef);
    const SymbolInfo old = symbols_.at(name);
    replacements_[name] = value;
    for (auto& [k, v] : replacements_)
        if (k != name) v = simplified(v);
    // what was known of s is now known of its value
    std::vector<Cond> pending;
    if (old.range.lower != ValueRange::neg_inf) pending.push_back(detail::sym::relation(BoolKind::le, detail::sym::sub(detail::sym::constant(old.range.lower), value)));
    if (old.range.upper != ValueRange::inf) pending.push_back(detail::sym::relation(BoolKind::le, detail::sym::sub(value, detail::sym::constant(old.range.upper))));
    if (old.divisor > 1) pending.push_back(detail::sym::relation(BoolKind::eq, detail::sym::mod(value, detail::sym::constant(old.divisor))));
    std::vector<Cond> facts = std::move(facts_);
    facts_.clear();
    for (const auto& f : facts) pending.push_back(f);
    for (const auto& f : pending) {
        const Cond s = simplified(f);
        const auto v = decide(s);
        if (v == std::optional<bool>(false))
            throw runtime_error("check failed: replacing " + name + " by " + detail::sym::to_string(value) +
                                " contradicts an earlier constraint");
        if (!v) add_fact(s);
    }
    return true;
}

/// `Eq(Mod(s, k), 0)`: s is a multiple of k.
template <class>
auto ShapeEnv::try_divisibility(const Poly& d) -> bool {
    std::int64_t c = 0;
    const detail::sym::Atom* m = detail::sym::lone_atom(d, c);
    if (m == nullptr || m->kind != AtomKind::mod || !m->args[1].is_constant()) return false;
    std::int64_t coef = 0;
    const auto* s = term_symbol(m->args[0], coef);
    if (s == nullptr || coef != 1 || m->args[0].constant != 0) return false;
    SymbolInfo& i = symbols_.at(s->name);
    const std::int64_t k = m->args[1].constant;
    std::int64_t lcm;
    if (__builtin_mul_overflow(i.divisor / detail::sym::gcd(i.divisor, k), k, &lcm)) return false;
    i.divisor = lcm;
    narrow(s->name, i.range);
    return true;
}

}  // namespace yobx
