// yobx/detail/sym/walk.hpp — walking a canonical form: rebuild through the
// canonical constructors with a visitor (substitution, the ShapeEnv's
// simplification), evaluation with values of the symbols, and the symbols
// themselves. Law: rebuild with a visitor that replaces nothing gives back an
// equal polynomial; evaluate follows Python's // and % (test_sym.cpp:
// floordiv(SymInt(-7), 2) is -4, mod(SymInt(7), -2) is -1).
#pragma once

#include <yobx/detail/sym/settle.hpp>

namespace yobx::detail::sym {

/// Rebuilds p bottom-up through the canonical constructors. `visitor.symbol(atom_ptr)`
/// returns the replacement of a symbol (or nullopt to keep it), `visitor.atom(kind, args)`
/// builds FloorDiv/Mod/Max/Min from rebuilt arguments, `visitor.kept_atom(atom_ptr)` what
/// an atom whose arguments stayed as they were becomes (nullopt: itself, as the canonical
/// constructors would rebuild it), and `visitor.term(term)` may rewrite a whole term
/// before it is multiplied out (nullopt to keep it): it is asked about every term the
/// rebuild changed and every term with a FloorDiv factor, not about an unchanged term
/// without one.
template <class Visitor>
Poly rebuild(const Poly& p, Visitor& visitor);

/// rebuild(p, visitor), or nullopt when it is p: nothing replaced, no atom rewritten.
template <class Visitor>
std::optional<Poly> rebuilt(const Poly& p, Visitor& visitor);

/// What an atom becomes, or nullopt when it stays as it is.
template <class Visitor>
std::optional<Poly> rebuilt_atom(const AtomPtr& a, Visitor& visitor) {
    if (a->kind == AtomKind::symbol) return visitor.symbol(a);
    Polys args;
    bool changed = false;
    for (std::size_t i = 0; i < a->args.size(); ++i) {
        std::optional<Poly> r = rebuilt(a->args[i], visitor);
        if (r && !changed) {
            changed = true;
            args.reserve(a->args.size());
            args.assign(a->args.begin(), a->args.begin() + static_cast<std::ptrdiff_t>(i));
        }
        if (changed) args.push_back(r ? std::move(*r) : a->args[i]);
    }
    if (!changed) return visitor.kept_atom(a);
    return visitor.atom(a->kind, args);
}

template <class Visitor>
Poly rebuild_atom(const AtomPtr& a, Visitor& visitor) {
    if (auto r = rebuilt_atom(a, visitor)) return std::move(*r);
    return from_atom(a);
}

template <class Visitor>
std::optional<Poly> rebuilt(const Poly& p, Visitor& visitor) {
    // As acc = add(acc, coef*x*y...) from acc = constant(p.constant), without the copies.
    // When settle() leaves p as it is on sight, so it does every part of p: an unchanged
    // term is then itself and the sum of unchanged terms a prefix of p, built only once
    // a term changes (and not at all when none does).
    const bool on_sight = settled_on_sight(p);
    std::optional<Poly> acc;
    if (!on_sight) acc = constant(p.constant);
    std::vector<std::optional<Poly>> xs;  // what the term's factors became, once one changed
    for (std::size_t i = 0; i < p.terms.size(); ++i) {
        const Term& t = p.terms[i];
        xs.clear();
        for (std::size_t j = 0; j < t.mono.size(); ++j) {
            std::optional<Poly> x = rebuilt_atom(t.mono[j].atom, visitor);
            if (x && xs.empty()) xs.resize(t.mono.size());
            if (x) xs[j] = std::move(x);
        }
        const bool changed = !xs.empty();
        if (!changed && on_sight) {
            if (acc) *acc = add(*acc, from_sorted(0, {t}));
            continue;
        }
        if (!acc) acc = from_sorted(p.constant, Terms(p.terms.begin(), p.terms.begin() + static_cast<std::ptrdiff_t>(i)));
        std::optional<Poly> term;
        for (std::size_t j = 0; j < t.mono.size(); ++j) {
            Poly x = changed && xs[j] ? std::move(*xs[j]) : from_atom(t.mono[j].atom);
            if (t.mono[j].exp != 1) x = power(x, t.mono[j].exp);
            term = term ? mul(*term, x) : settle(scale_raw(std::move(x), t.coef));
        }
        if (auto r = visitor.term(*term)) term = std::move(r);
        *acc = is_zero(*acc) ? settle(std::move(*term)) : add(*acc, *term);
    }
    return acc;
}

template <class Visitor>
Poly rebuild(const Poly& p, Visitor& visitor) {
    if (auto r = rebuilt(p, visitor)) return std::move(*r);
    return p;
}

/// The canonical constructors, for rebuild().
struct PlainAtoms {
    template <class = void>
    static Poly make(AtomKind kind, const Polys& args) {
        switch (kind) {
            case AtomKind::floordiv: return floordiv(args[0], args[1]);
            case AtomKind::mod: return mod(args[0], args[1]);
            default: return extremum(kind, args);
        }
    }
    template <class = void>
    Poly atom(AtomKind kind, const Polys& args) { return make(kind, args); }
    std::optional<Poly> kept_atom(const AtomPtr&) { return std::nullopt; }
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

/// Calls f(divisor) for every FloorDiv and Mod of p whose numerator holds the symbol `name`
/// and whose divisor is a constant (with repetitions): where p steps as that symbol grows.
template <class F>
void for_each_period(const Poly& p, std::string_view name, F& f) {
    for (const auto& t : p.terms)
        for (const auto& fac : t.mono) {
            const Atom& a = *fac.atom;
            if (a.kind == AtomKind::symbol) continue;
            if ((a.kind == AtomKind::floordiv || a.kind == AtomKind::mod) && a.args.size() == 2 && a.args[1].terms.empty()) {
                bool holds = false;
                const auto find = [&](const Atom& s) { holds = holds || s.name == name; };
                for_each_symbol(a.args[0], find);
                if (holds) f(a.args[1].constant);
            }
            for (const auto& arg : a.args) for_each_period(arg, name, f);
        }
}

}  // namespace yobx::detail::sym
