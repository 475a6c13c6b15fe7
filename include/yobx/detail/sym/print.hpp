// yobx/detail/sym/print.hpp — the printed form, SymPy's: terms in canonical
// order, coefficients in front ("s0 + 2*s1"), FloorDiv as `a//b` with the
// parentheses it needs ("(s0 + 3)//4 - 1"), Mod/Max/Min as calls
// ("Max(s0, s1)"). parse_sym (sym/parse.hpp) reads every printed form back to
// an equal one (the property tests check the round trip).
#pragma once

#include <yobx/detail/sym/walk.hpp>

namespace yobx::detail::sym {

// ---------------------------------------------------------------- printing

template <class = void>
void print_int(std::string& out, std::int64_t v) {
    if (v == i64_min)
        out += "(-9223372036854775807 - 1)";  // the literal 9223372036854775808 is not an int64
    else
        out += std::to_string(v);
}

template <class = void>
void print_poly(std::string& out, const Poly& p);

template <class = void>
bool is_bare_atom(const Poly& p) {
    const Atom* a = single_atom(p);
    return a != nullptr && a->kind != AtomKind::floordiv;
}

template <class = void>
void print_atom(std::string& out, const Atom& a) {
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
template <class = void>
void print_term(std::string& out, std::int64_t coef, const Mono& mono, bool first) {
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

template <class>
void print_poly(std::string& out, const Poly& p) {
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

template <class = void>
std::string to_string(const Poly& p) {
    std::string s;
    print_poly(s, p);
    return s;
}

}  // namespace yobx::detail::sym
