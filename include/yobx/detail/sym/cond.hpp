// yobx/detail/sym/cond.hpp — conditions in canonical form.
//
// Laws: a relation is `diff == 0`, `diff != 0` or `diff <= 0` (`<`, `>`, `>=`
// rewritten; over integers a < b is a - b + 1 <= 0), divided by its content and
// decided when diff is a constant; And/Or flatten, sort and drop duplicates,
// negation is pushed to the relations (De Morgan). test_sym.cpp: 2*s0 <= 2*s1 + 3
// is "s0 <= s1 + 1", 2*s0 == 3 is "False", s0 + 1 <= s1 is s0 < s1 and prints so,
// !((s0 >= 2) && (s1 == 3)) is "Ne(s1, 3) | (s0 <= 1)".
#pragma once

#include <yobx/detail/sym/print.hpp>

namespace yobx::detail::sym {

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

template <class = void>
int cmp_bool(const BoolNode& a, const BoolNode& b) {
    if (&a == &b) return 0;
    if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
    if (const int c = cmp_poly(a.diff, b.diff); c != 0) return c;
    if (a.args.size() != b.args.size()) return a.args.size() < b.args.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.args.size(); ++i)
        if (const int c = cmp_bool(*a.args[i], *b.args[i]); c != 0) return c;
    return 0;
}

template <class = void>
Cond make_node(BoolKind kind, Poly diff, std::vector<BoolPtr> args) {
    auto n = std::allocate_shared<BoolNode>(CachedAllocator<BoolNode>{});
    std::size_t h = mix(0x2b, static_cast<std::size_t>(kind));
    h = mix(h, seal(diff).hash);
    for (const auto& a : args) h = mix(h, a->hash);
    n->kind = kind;
    n->diff = std::move(diff);
    n->args = std::move(args);
    n->hash = h;
    return Cond{false, std::move(n)};
}

/// `d == 0` (kind eq), `d != 0` (ne) or `d <= 0` (le), canonical.
template <class = void>
Cond relation(BoolKind kind, const Poly& d) {
    if (d.is_constant()) {
        const bool v = kind == BoolKind::eq ? d.constant == 0 : kind == BoolKind::ne ? d.constant != 0 : d.constant <= 0;
        return Cond{v, nullptr};
    }
    std::int64_t g = 0;
    for (const auto& t : d.terms) g = gcd(g, t.coef);
    if (kind == BoolKind::le) {
        // g*P + c <= 0  <=>  P <= floor(-c/g)  <=>  P + (-floor(-c/g)) <= 0
        Terms terms = d.terms;
        for (auto& t : terms) t.coef /= g;
        return make_node(kind, from_sorted(neg(floordiv(neg(d.constant), g)), std::move(terms)), {});
    }
    if (d.constant % g != 0) return Cond{kind == BoolKind::ne, nullptr};  // g*P == c has no integer solution
    Poly n = divide_exact(d, g);
    if (leading_negative(n)) n = negate(n);
    return make_node(kind, std::move(n), {});
}

template <class = void>
Cond negation(const Cond& c);

template <class = void>
Cond junction(BoolKind kind, const std::vector<Cond>& args) {
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

template <class>
Cond negation(const Cond& c) {
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

template <class = void>
void print_bool(std::string& out, const BoolNode& n);

/// `Eq(A, B)`, `A <= B`, `A < B`, ... with the positive terms on one side and
/// the negated negative terms on the other, the leading term on the left.
template <class = void>
void print_relation(std::string& out, const BoolNode& n) {
    const Poly& d = n.diff;
    Terms pos, negs;
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

template <class>
void print_bool(std::string& out, const BoolNode& n) {
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
    std::sort(names.begin(), names.end(), NameLess{});
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

}  // namespace yobx::detail::sym
