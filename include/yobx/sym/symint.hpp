// yobx/sym/symint.hpp — SymInt and SymBool: symbolic dimensions and conditions.
//
// A SymInt is a concrete int64 or an expression over named symbols (`s0 + 2*s1`,
// `Max(s0, s1)`, `s0//2`, `Mod(s0, 3)`), always kept in a canonical form so that
// equal expressions are equal structures with equal hashes. Comparing SymInts
// gives a SymBool, which folds to a constant when the answer does not depend on
// the symbols. Values are immutable: copying is a reference-count increment and
// sharing across threads is safe. Deciding a SymBool that depends on symbols is
// the ShapeEnv's job (yobx/sym/shape_env.hpp).
#pragma once

#include <yobx/detail/sym_expr.hpp>
#include <yobx/error.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <yobx/detail/source_location.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx {

class SymBool;

/// Values for symbols, for evaluate_with: `{{"s0", 3}, {"s1", 5}}`.
using SymbolValues = std::map<std::string, std::int64_t, std::less<>>;

namespace detail::sym {
/// `{s0 = 3, s1 = 5}`
template <class = void>
std::string describe(const SymbolValues& values) {
    std::string s;
    for (const auto& [k, v] : values) s += (s.empty() ? "" : ", ") + k + " = " + std::to_string(v);
    return "{" + s + "}";
}

/// evaluate(node) with the symbols' values taken from `values`; a missing value,
/// an overflow or a zero divisor is a value_error naming `expr` and the values.
/// The return type is written out: a deduced one is compiled wherever a
/// template names the function, used or not (docs/performance.md).
template <class Node, class Expr>
auto evaluate_checked(const Node& node, const SymbolValues& values, const Expr& expr)
    -> std::conditional_t<std::is_same_v<Node, BoolNode>, bool, std::int64_t> {
    auto value_of = [&](const Atom& a) {
        const auto it = values.find(a.name);
        if (it == values.end()) throw value_error("evaluate_with: no value for symbol " + a.name + " in " + expr.to_string());
        return it->second;
    };
    try {
        return evaluate(node, value_of);
    } catch (const overflow&) {
        throw value_error("integer overflow while evaluating " + expr.to_string() + " with " + describe(values));
    } catch (const zero_division& z) {
        throw value_error((z.modulo ? "modulo by zero while evaluating " : "division by zero while evaluating ") + expr.to_string() +
                          " with " + describe(values));
    }
}
}  // namespace detail::sym

/// Raised when a condition that depends on symbols has to be decided and cannot
/// be (strict ShapeEnv, or a SymBool converted to bool). Its message holds the
/// condition, the hint of each of its symbols and where the decision was asked.
class GuardOnDataDependentSymNode : public runtime_error {
public:
    GuardOnDataDependentSymNode(const std::string& message, std::string condition, yobx::source_location where)
        : runtime_error(message), condition_(std::move(condition)), where_(where) {}

    /// The undecided condition, printed: `Eq(a, c)`.
    const std::string& condition() const noexcept { return condition_; }
    /// Where the decision was asked.
    const yobx::source_location& where() const noexcept { return where_; }

private:
    std::string condition_;
    yobx::source_location where_;
};

/// A symbolic integer: a constant or a canonical expression over named symbols.
///
///   SymInt s0 = SymInt::symbol("s0"), s1 = SymInt::symbol("s1");
///   SymInt n = 2 * (s0 + 1) - 2 + s1;      // prints `2*s0 + s1`
///   SymInt h = floordiv(n, 2);              // prints `s0 + s1//2`
///   n.evaluate_with({{"s0", 3}, {"s1", 5}}) == 11
///
/// `a == b` and the other comparisons give a SymBool; for structural identity
/// use `identical` (true exactly when `a == b` folds to true).
class SymInt {
public:
    /// The constant 0.
    SymInt() noexcept = default;
    /// A constant. Unsigned values above INT64_MAX are rejected with a value_error.
    template <std::integral I>
        requires(!std::same_as<I, bool>)
    SymInt(I v) : value_(checked_i64(v)) {}  // NOLINT: implicit, like an int

    /// The symbol `name` (an identifier that is not Max, Min, Mod, FloorDiv, Eq, Ne, True or False).
    template <class = void>
    static SymInt symbol(std::string_view name) {
        check_symbol_name(name);
        return SymInt(detail::sym::symbol(name));
    }

    bool is_constant() const noexcept { return !expr_; }
    /// The value if constant.
    std::optional<std::int64_t> maybe_constant() const noexcept {
        if (expr_) return std::nullopt;
        return value_;
    }
    /// The value; a value_error naming the expression if it is symbolic.
    template <class = void>
    std::int64_t constant_value() const {
        if (expr_) throw value_error("SymInt " + to_string() + " is symbolic, not a constant");
        return value_;
    }
    /// True for a bare symbol such as `s0`.
    template <class = void>
    bool is_symbol() const noexcept {
        const auto* a = expr_ ? detail::sym::single_atom(*expr_) : nullptr;
        return a != nullptr && a->kind == detail::sym::AtomKind::symbol;
    }

    /// torch's printed form: `s0 + 2*s1`, `Max(s0, s1)`, `s0//2`, `Mod(s0, 3)`.
    template <class = void>
    std::string to_string() const { return with_poly([](const detail::sym::Poly& p) { return detail::sym::to_string(p); }); }
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const SymInt& s) { return os << s.to_string(); }

    template <class = void>
    std::size_t hash() const noexcept { return expr_ ? detail::sym::hash_of(*expr_) : detail::sym::hash_of(detail::sym::constant(value_)); }
    /// Structural equality of the canonical forms.
    template <class = void>
    bool identical(const SymInt& other) const noexcept {
        if (!expr_ || !other.expr_) return !expr_ && !other.expr_ && value_ == other.value_;
        return expr_ == other.expr_ || detail::sym::equal(*expr_, *other.expr_);
    }

    /// The names of the symbols in the expression, in natural order (s2 before s10).
    template <class = void>
    std::vector<std::string> free_symbols() const {
        return expr_ ? detail::sym::symbol_names(*expr_) : std::vector<std::string>{};
    }

    /// Where the expression steps as `symbol` grows: the lcm of the constant divisors of its
    /// quotients and remainders whose numerator holds it (`(x + 240)//320` steps every 320 of x);
    /// 1 for none (a polynomial in it), nullopt past int64.
    ///   (2*((x + 3)//4) + Mod(x, 6)).period_in("x") == 12
    template <class = void>
    std::optional<std::int64_t> period_in(std::string_view symbol) const {
        std::int64_t period = 1;
        bool overflow = false;
        const auto take = [&](std::int64_t k) {
            if (k < 0) k = -k;
            const std::int64_t g = std::gcd(period, k);
            if (k == 0 || __builtin_mul_overflow(period / g, k, &period)) overflow = true;
        };
        if (expr_) detail::sym::for_each_period(*expr_, symbol, take);
        return overflow ? std::nullopt : std::optional<std::int64_t>(period);
    }

    /// Substitutes the values and computes: `(s0 + 2*s1).evaluate_with({{"s0", 3}, {"s1", 5}}) == 13`.
    /// A symbol without a value, a zero divisor or an overflow is a value_error.
    template <class = void>
    std::int64_t evaluate_with(const SymbolValues& values) const {
        return expr_ ? detail::sym::evaluate_checked(*expr_, values, *this) : value_;
    }

    /// Replaces symbols by expressions: `(s0 + s1).subs({{"s1", s0}})` is `2*s0`.
    template <class = void>
    SymInt subs(const std::map<std::string, SymInt, std::less<>>& replacements) const {
        if (!expr_) return *this;
        struct Visitor : detail::sym::PlainAtoms {
            const std::map<std::string, SymInt, std::less<>>* map;
            std::optional<detail::sym::Poly> symbol(const detail::sym::AtomPtr& a) {
                const auto it = map->find(a->name);
                if (it == map->end()) return std::nullopt;
                return it->second.poly();
            }
        } v;
        v.map = &replacements;
        return guarded([&] { return SymInt(detail::sym::rebuild(*expr_, v)); }, [&] { return "subs on " + to_string(); });
    }

    template <class = void>
    friend SymInt operator+(const SymInt& a, const SymInt& b) {
        if (!a.expr_ && !b.expr_) return binary_constant(a, b, "+", [](auto x, auto y) { return detail::sym::add(x, y); });
        return a.apply(b, "+", [](const auto& x, const auto& y) { return detail::sym::add(x, y); });
    }
    template <class = void>
    friend SymInt operator-(const SymInt& a, const SymInt& b) {
        if (!a.expr_ && !b.expr_) return binary_constant(a, b, "-", [](auto x, auto y) { return detail::sym::sub(x, y); });
        return a.apply(b, "-", [](const auto& x, const auto& y) { return detail::sym::sub(x, y); });
    }
    template <class = void>
    friend SymInt operator*(const SymInt& a, const SymInt& b) {
        if (!a.expr_ && !b.expr_) return binary_constant(a, b, "*", [](auto x, auto y) { return detail::sym::mul(x, y); });
        return a.apply(b, "*", [](const auto& x, const auto& y) { return detail::sym::mul(x, y); });
    }
    template <class = void>
    friend SymInt operator-(const SymInt& a) { return SymInt(0) - a; }
    template <class = void>
    SymInt& operator+=(const SymInt& b) { return *this = *this + b; }
    template <class = void>
    SymInt& operator-=(const SymInt& b) { return *this = *this - b; }
    template <class = void>
    SymInt& operator*=(const SymInt& b) { return *this = *this * b; }

    /// Floor division, Python's `a // b`: `floordiv(4*s0 + s1, 4)` is `s0 + s1//4`.
    template <class = void>
    friend SymInt floordiv(const SymInt& a, const SymInt& b) {
        return a.apply(b, "//", [](const auto& x, const auto& y) { return detail::sym::floordiv(x, y); });
    }
    /// Python's `a % b` (sign of b), printed `Mod(a, b)`: `mod(s0 + 4*s1, 4)` is `Mod(s0, 4)`.
    template <class = void>
    friend SymInt mod(const SymInt& a, const SymInt& b) {
        return a.apply(b, "%", [](const auto& x, const auto& y) { return detail::sym::mod(x, y); });
    }
    /// `a**e` for a constant e >= 0.
    template <class = void>
    friend SymInt pow(const SymInt& a, std::int64_t e) {
        if (e < 0) throw value_error("pow: negative exponent " + std::to_string(e) + " for " + a.to_string());
        return guarded([&] { return a.with_poly([&](const detail::sym::Poly& p) { return SymInt(detail::sym::power(p, e)); }); },
                       [&] { return std::string("(").append(a.to_string()).append(")**").append(std::to_string(e)); });
    }
    /// `Max(a, b)`, simplified: `sym_max(s0, s0)` is `s0`, `sym_max(s0 + 1, s0)` is `s0 + 1`.
    template <class = void>
    friend SymInt sym_max(const SymInt& a, const SymInt& b) { return sym_max({a, b}); }
    template <class = void>
    friend SymInt sym_min(const SymInt& a, const SymInt& b) { return sym_min({a, b}); }
    template <class = void>
    static SymInt sym_max(std::initializer_list<SymInt> args) { return extremum(detail::sym::AtomKind::max, args); }
    template <class = void>
    static SymInt sym_min(std::initializer_list<SymInt> args) { return extremum(detail::sym::AtomKind::min, args); }
    /// The n-ary forms over a vector, simplified once (folding pairs simplifies each partial Max again).
    template <class = void>
    static SymInt sym_max(const std::vector<SymInt>& args) { return extremum(detail::sym::AtomKind::max, args); }
    template <class = void>
    static SymInt sym_min(const std::vector<SymInt>& args) { return extremum(detail::sym::AtomKind::min, args); }

    /// The canonical form (for yobx's own algorithms).
    template <class = void>
    detail::sym::Poly poly() const { return expr_ ? *expr_ : detail::sym::constant(value_); }
    /// f(the canonical form), read in place where poly() copies it (for yobx's own algorithms).
    template <class F>
    auto with_poly(F&& f) const -> decltype(f(std::declval<const detail::sym::Poly&>())) {
        if (expr_) return f(*expr_);
        return f(detail::sym::constant(value_));
    }

    template <class = void>
    explicit SymInt(detail::sym::Poly p) {
        if (p.is_constant())
            value_ = p.constant;
        else
            expr_ = std::allocate_shared<const detail::sym::Poly>(detail::CachedAllocator<detail::sym::Poly>{}, std::move(detail::sym::seal(p)));
    }

    /// Runs f (building a SymInt) and turns the arithmetic failures into value_errors
    /// naming the expression `what()` returns (computed only on failure).
    template <class F, class What>
    static auto guarded(F&& f, What&& what) -> decltype(f()) {
        try {
            return f();
        } catch (const detail::sym::overflow&) {
            throw value_error("integer overflow in " + what() + ": the result does not fit in int64");
        } catch (const detail::sym::zero_division& z) {
            throw value_error((z.modulo ? "modulo by zero in " : "division by zero in ") + what());
        } catch (const detail::sym::too_large& t) {
            if (t.depth)
                throw value_error("expression too deep in " + what() + ": rewriting its divisions takes more than " +
                                  std::to_string(detail::sym::max_rewrite_depth) + " nested steps or " +
                                  std::to_string(detail::sym::max_settle_rounds) + " rewrites of a sum");
            throw value_error("expression too large in " + what() + ": the expansion exceeds " +
                              std::to_string(detail::sym::max_terms) + " terms");
        }
    }

private:
    template <class I>
    static std::int64_t checked_i64(I v) {
        if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(std::int64_t)) {
            if (v > static_cast<I>(detail::sym::i64_max))
                throw value_error("SymInt: " + std::to_string(v) + " does not fit in int64");
        }
        return static_cast<std::int64_t>(v);
    }

    template <class = void>
    static void check_symbol_name(std::string_view name) {
        auto bad = [&](const char* why) {
            throw value_error("SymInt::symbol: '" + std::string(name) + "' is not a valid symbol name (" + why + ")");
        };
        if (name.empty()) bad("empty");
        const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
        if (!alpha(name[0])) bad("it must start with a letter or '_'");
        for (char c : name)
            if (!alpha(c) && !(c >= '0' && c <= '9')) bad("only letters, digits and '_' are allowed");
        for (const char* r : {"Max", "Min", "Mod", "FloorDiv", "Eq", "Ne", "True", "False"})
            if (name == r) bad("reserved word");
    }


    /// `a op b` as text for messages, parenthesizing sums.
    template <class = void>
    static std::string operation_text(const SymInt& a, const SymInt& b, std::string_view op) {
        if (op == "%") return "Mod(" + a.to_string() + ", " + b.to_string() + ")";
        auto side = [](const SymInt& s) {
            const std::string t = s.to_string();
            const bool simple = s.is_constant() ? s.value_ >= 0 || s.value_ == detail::sym::i64_min  // printed in parentheses
                                                : s.expr_->terms.size() == 1 && s.expr_->constant == 0;
            return simple ? t : "(" + t + ")";
        };
        return side(a) + (op == "+" || op == "-" ? " " + std::string(op) + " " : std::string(op)) + side(b);
    }

    template <class F>
    static SymInt binary_constant(const SymInt& a, const SymInt& b, std::string_view op, F f) {
        return guarded([&] { return SymInt(f(a.value_, b.value_)); }, [&] { return operation_text(a, b, op); });
    }

    template <class F>
    SymInt apply(const SymInt& b, std::string_view op, F f) const {
        return guarded([&] { return with_poly([&](const detail::sym::Poly& x) { return b.with_poly([&](const detail::sym::Poly& y) { return SymInt(f(x, y)); }); }); },
                       [&] { return operation_text(*this, b, op); });
    }

    template <class Args>
    static SymInt extremum(detail::sym::AtomKind kind, const Args& args) {
        if (args.size() == 0) throw value_error(kind == detail::sym::AtomKind::max ? "sym_max of no arguments" : "sym_min of no arguments");
        detail::sym::Polys polys;
        polys.reserve(args.size());
        for (const auto& a : args) polys.push_back(a.poly());
        return SymInt(detail::sym::extremum(kind, polys));
    }

    std::int64_t value_ = 0;
    std::shared_ptr<const detail::sym::Poly> expr_;  // null for a constant
};

/// A symbolic condition: a constant or a canonical relation / And / Or.
///
///   SymBool c = (s0 >= 2) && (s0 + s1 == 8);     // prints `Eq(s0 + s1, 8) & (s0 >= 2)`
///   c.evaluate_with({{"s0", 3}, {"s1", 5}}) == true
///
/// Converting a symbolic SymBool to bool throws GuardOnDataDependentSymNode:
/// ask a ShapeEnv to decide it instead.
class SymBool {
public:
    SymBool(bool v = false) noexcept : value_(v) {}  // NOLINT: implicit, like a bool

    bool is_constant() const noexcept { return !node_; }
    std::optional<bool> maybe_constant() const noexcept {
        if (node_) return std::nullopt;
        return value_;
    }
    /// The value if constant; otherwise GuardOnDataDependentSymNode (no ShapeEnv to decide it).
    explicit operator bool() const {
        if (!node_) return value_;
        const auto where = yobx::source_location::current();
        throw GuardOnDataDependentSymNode("Could not guard on data-dependent expression " + to_string() +
                                              " without a ShapeEnv: decide it with ShapeEnv::evaluate, "
                                              "statically_known_true, guard_or_false or guard_or_true",
                                          to_string(), where);
    }

    /// `Eq(s0, s1)`, `Ne(s0, 3)`, `s0 >= 2`, `s0 < s1`, `(s0 >= 2) & Eq(s1, 3)`, `True`.
    template <class = void>
    std::string to_string() const {
        if (!node_) return value_ ? "True" : "False";
        std::string s;
        detail::sym::print_bool(s, *node_);
        return s;
    }
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const SymBool& b) { return os << b.to_string(); }

    template <class = void>
    std::size_t hash() const noexcept { return node_ ? node_->hash : std::hash<bool>{}(value_); }
    template <class = void>
    bool identical(const SymBool& other) const noexcept {
        if (!node_ || !other.node_) return !node_ && !other.node_ && value_ == other.value_;
        return node_ == other.node_ || (node_->hash == other.node_->hash && detail::sym::cmp_bool(*node_, *other.node_) == 0);
    }

    /// The names of the symbols in the condition, in natural order.
    template <class = void>
    std::vector<std::string> free_symbols() const {
        return node_ ? detail::sym::symbol_names(*node_) : std::vector<std::string>{};
    }

    /// Substitutes and decides: a symbol without a value, a zero divisor or an overflow is a value_error.
    template <class = void>
    bool evaluate_with(const SymbolValues& values) const {
        return node_ ? detail::sym::evaluate_checked(*node_, values, *this) : value_;
    }

    template <class = void>
    friend SymBool operator&&(const SymBool& a, const SymBool& b) { return junction(detail::sym::BoolKind::and_, a, b); }
    template <class = void>
    friend SymBool operator||(const SymBool& a, const SymBool& b) { return junction(detail::sym::BoolKind::or_, a, b); }
    /// The negation; a value_error when it does not fit in int64 (`!(s0 <= INT64_MAX)` is
    /// `s0 >= INT64_MAX + 1`).
    template <class = void>
    friend SymBool operator!(const SymBool& a) {
        return SymInt::guarded([&] { return SymBool(detail::sym::negation(a.cond())); }, [&] { return "~(" + a.to_string() + ")"; });
    }

    detail::sym::Cond cond() const { return detail::sym::Cond{value_, node_}; }
    explicit SymBool(detail::sym::Cond c) : value_(c.value), node_(std::move(c.node)) {}

private:
    template <class = void>
    static SymBool junction(detail::sym::BoolKind kind, const SymBool& a, const SymBool& b) {
        return SymBool(detail::sym::junction(kind, {a.cond(), b.cond()}));
    }

    bool value_ = false;
    detail::sym::BoolPtr node_;  // null for a constant
};

namespace detail::sym {
template <class = void>
SymBool compare(const SymInt& a, const SymInt& b, BoolKind kind, bool swap, std::int64_t shift, const char* op) {
    if (auto x = a.maybe_constant(), y = b.maybe_constant(); x && y) {
        switch (kind) {
            case BoolKind::eq: return *x == *y;
            case BoolKind::ne: return *x != *y;
            default: {
                const std::int64_t l = swap ? *y : *x, r = swap ? *x : *y;
                return shift == 0 ? l <= r : l < r;
            }
        }
    }
    // a <= b: a - b <= 0;  a < b: a - b + 1 <= 0;  a >= b: b - a <= 0;  a > b: b - a + 1 <= 0
    return SymInt::guarded(
        [&] {
            const Poly d = a.with_poly([&](const Poly& x) { return b.with_poly([&](const Poly& y) { return swap ? sub(y, x) : sub(x, y); }); });
            return SymBool(relation(kind, shift == 0 ? d : add(d, constant(shift))));
        },
        [&] { return a.to_string() + " " + op + " " + b.to_string(); });
}
}  // namespace detail::sym

template <class = void>
SymBool operator==(const SymInt& a, const SymInt& b) { return detail::sym::compare(a, b, detail::sym::BoolKind::eq, false, 0, "=="); }
template <class = void>
SymBool operator!=(const SymInt& a, const SymInt& b) { return detail::sym::compare(a, b, detail::sym::BoolKind::ne, false, 0, "!="); }
template <class = void>
SymBool operator<=(const SymInt& a, const SymInt& b) { return detail::sym::compare(a, b, detail::sym::BoolKind::le, false, 0, "<="); }
template <class = void>
SymBool operator<(const SymInt& a, const SymInt& b) { return detail::sym::compare(a, b, detail::sym::BoolKind::le, false, 1, "<"); }
template <class = void>
SymBool operator>=(const SymInt& a, const SymInt& b) { return detail::sym::compare(a, b, detail::sym::BoolKind::le, true, 0, ">="); }
template <class = void>
SymBool operator>(const SymInt& a, const SymInt& b) { return detail::sym::compare(a, b, detail::sym::BoolKind::le, true, 1, ">"); }

/// Free-function spellings of the n-ary forms: `sym_max({a, b, c})`.
template <class = void>
SymInt sym_max(std::initializer_list<SymInt> args) { return SymInt::sym_max(args); }
template <class = void>
SymInt sym_min(std::initializer_list<SymInt> args) { return SymInt::sym_min(args); }

/// A tensor shape with symbolic dimensions: `{SymInt::symbol("a"), 3}`.
using Shape = std::vector<SymInt>;

/// `[a, b + 1, 3]`.
template <class = void>
std::string to_string(const Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += shape[i].to_string();
    }
    return s + "]";
}
/// Prints `[a, b + 1, 3]` (found by argument-dependent lookup: SymInt is yobx's).
template <class = void>
std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << to_string(shape); }

}  // namespace yobx

/// Hashing and structural equality, so SymInt and SymBool can key unordered containers.
template <>
struct std::hash<yobx::SymInt> {
    template <class = void>
    std::size_t operator()(const yobx::SymInt& s) const noexcept { return s.hash(); }
};
template <>
struct std::equal_to<yobx::SymInt> {
    template <class = void>
    bool operator()(const yobx::SymInt& a, const yobx::SymInt& b) const noexcept { return a.identical(b); }
};
template <>
struct std::hash<yobx::SymBool> {
    template <class = void>
    std::size_t operator()(const yobx::SymBool& s) const noexcept { return s.hash(); }
};
template <>
struct std::equal_to<yobx::SymBool> {
    template <class = void>
    bool operator()(const yobx::SymBool& a, const yobx::SymBool& b) const noexcept { return a.identical(b); }
};
