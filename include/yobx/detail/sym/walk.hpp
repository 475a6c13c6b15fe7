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
    // as acc = add(acc, coef*x*y...) from acc = constant(p.constant), without the copies
    Poly acc = constant(p.constant);
    for (const auto& t : p.terms) {
        std::optional<Poly> term;
        for (const auto& f : t.mono) {
            Poly x = rebuild_atom(f.atom, visitor);
            if (f.exp != 1) x = power(x, f.exp);
            term = term ? mul(*term, x) : settle(scale_raw(std::move(x), t.coef));
        }
        if (auto r = visitor.term(*term)) term = std::move(r);
        acc = is_zero(acc) ? settle(std::move(*term)) : add(acc, *term);
    }
    return acc;
}

/// The canonical constructors, for rebuild().
struct PlainAtoms {
    template <class = void>
    static Poly make(AtomKind kind, const std::vector<Poly>& args) {
        switch (kind) {
            case AtomKind::floordiv: return floordiv(args[0], args[1]);
            case AtomKind::mod: return mod(args[0], args[1]);
            default: return extremum(kind, args);
        }
    }
    template <class = void>
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

}  // namespace yobx::detail::sym
