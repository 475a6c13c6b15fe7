// yobx/sym/parse.hpp — reading SymInt and SymBool back from their printed form.
//
// parse_sym reads what SymInt::to_string prints (torch's style: `s0 + 2*s1`,
// `Max(s0, s1)`, `s0//2`, `Mod(s0, 3)`, `s0**2`) plus Python's `%` and
// `FloorDiv(a, b)`; parse_sym_bool reads conditions (`Eq(s0, s1)`, `s0 >= 2`,
// `(s0 >= 2) & Ne(s1, 3)`, `~(...)`, `True`). The result is canonical. A syntax
// error is a value_error naming the 1-based column and what was expected.
#pragma once

#include <yobx/sym/symint.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace yobx {
namespace detail::sym {

/// A class template only so that an unused include instantiates nothing (see core.hpp).
template <class = void>
class Parser {
public:
    explicit Parser(std::string_view text, const char* who) : text_(text), who_(who) {}

    SymInt whole_int() {
        Poly r = expr();
        expect_end();
        return SymInt(std::move(r));
    }
    SymBool whole_bool() {
        SymBool r = bool_or();
        expect_end();
        return r;
    }

private:
    struct Failure {
        std::size_t pos;
        std::string expected;
    };
    static constexpr int max_depth = 200;

    [[noreturn]] void fail(std::size_t pos, std::string expected) const { throw Failure{pos, std::move(expected)}; }

    std::string found(std::size_t pos) const {
        if (pos >= text_.size()) return "end of input";
        std::size_t end = pos + 1;
        const auto word = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
        if (word(text_[pos]))
            while (end < text_.size() && word(text_[end]) && end - pos < 24) ++end;
        return "'" + std::string(text_.substr(pos, end - pos)) + "'";
    }

public:
    /// Runs the parse and turns a Failure into the value_error users see.
    template <class F>
    auto run(F&& f) -> decltype(f(*this)) {
        try {
            return f(*this);
        } catch (const Failure& e) {
            throw value_error(std::string(who_) + ": column " + std::to_string(e.pos + 1) + ": expected " + e.expected +
                              ", found " + found(e.pos) + " in \"" + std::string(text_) + "\"");
        }
    }

private:
    void skip() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
            ++pos_;
    }
    /// Compared a character at a time: the tokens are literals of one or two characters, which
    /// the inlined loop compares directly where `==` on string_view called memcmp (a ninth of
    /// the time of the random pairs under g++ 12 -O3; -O2 inlines it).
    bool peek(std::string_view tok) {
        skip();
        if (text_.size() - pos_ < tok.size()) return false;
        for (std::size_t i = 0; i < tok.size(); ++i)
            if (text_[pos_ + i] != tok[i]) return false;
        return true;
    }
    bool accept(std::string_view tok) {
        if (!peek(tok)) return false;
        pos_ += tok.size();
        return true;
    }
    void expect(std::string_view tok) {
        if (!accept(tok)) fail(pos_, "'" + std::string(tok) + "'");
    }
    void expect_end() {
        skip();
        if (pos_ != text_.size()) fail(pos_, "an operator or end of input");
    }
    static bool alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
    static bool digit(char c) { return c >= '0' && c <= '9'; }

    std::string_view name() {
        skip();
        const std::size_t start = pos_;
        while (pos_ < text_.size() && (alpha(text_[pos_]) || digit(text_[pos_]))) ++pos_;
        return text_.substr(start, pos_ - start);
    }

    /// A decimal literal; `negative` admits 9223372036854775808 for `-9223372036854775808`.
    std::int64_t literal(bool negative) {
        skip();
        const std::size_t start = pos_;
        std::uint64_t v = 0;
        const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : static_cast<std::uint64_t>(i64_max);
        while (pos_ < text_.size() && digit(text_[pos_])) {
            const auto d = static_cast<std::uint64_t>(text_[pos_] - '0');
            if (v > (limit - d) / 10) fail(start, "an integer that fits in int64");
            v = v * 10 + d;
            ++pos_;
        }
        if (negative) return v == (std::uint64_t{1} << 63) ? i64_min : -static_cast<std::int64_t>(v);
        return static_cast<std::int64_t>(v);
    }

    /// f() on canonical forms, without a SymInt per operation; when it fails (overflow, a
    /// zero divisor, a too large result), the SymInt operation `again()` is run for the
    /// error it throws, the one parse_sym reports.
    template <class F, class Again>
    static Poly checked(F&& f, Again&& again) {
        try {
            return f();
        } catch (const overflow&) {
        } catch (const zero_division&) {
        } catch (const too_large&) {
        }
        return again().poly();
    }
    static SymInt boxed(const Poly& p) { return SymInt(p); }
    static Poly plus(const Poly& a, const Poly& b) {
        return checked([&] { return add(a, b); }, [&] { return boxed(a) + boxed(b); });
    }
    static Poly minus(const Poly& a, const Poly& b) {
        return checked([&] { return sub(a, b); }, [&] { return boxed(a) - boxed(b); });
    }
    static Poly times(const Poly& a, const Poly& b) {
        return checked([&] { return mul(a, b); }, [&] { return boxed(a) * boxed(b); });
    }
    static Poly quotient(const Poly& a, const Poly& b) {
        return checked([&] { return floordiv(a, b); }, [&] { return floordiv(boxed(a), boxed(b)); });
    }
    static Poly remainder(const Poly& a, const Poly& b) {
        return checked([&] { return mod(a, b); }, [&] { return mod(boxed(a), boxed(b)); });
    }
    static Poly negative(const Poly& a) { return minus(constant(0), a); }

    struct Depth {
        Parser& p;
        explicit Depth(Parser& parser, std::size_t at) : p(parser) {
            if (++p.depth_ > max_depth) p.fail(at, "at most 200 nested parentheses or calls");
        }
        ~Depth() { --p.depth_; }
        Depth(const Depth&) = delete;
        Depth& operator=(const Depth&) = delete;
    };

    Poly expr() {
        Poly acc = term();
        for (;;) {
            if (accept("+"))
                acc = plus(acc, term());
            else if (accept("-"))
                acc = minus(acc, term());
            else
                return acc;
        }
    }

    Poly term() {
        Poly acc = unary();
        for (;;) {
            if (peek("**")) return acc;  // a second `**` (`s0**2**3`): not a `*`; the caller reports it
            if (accept("//"))
                acc = quotient(acc, unary());
            else if (accept("*"))
                acc = times(acc, unary());
            else if (accept("%"))
                acc = remainder(acc, unary());
            else
                return acc;
        }
    }

    Poly unary() {
        skip();
        const Depth guard(*this, pos_);
        if (accept("-")) {
            skip();
            if (pos_ < text_.size() && digit(text_[pos_])) {  // `-9223372036854775808` must read as one literal
                const std::size_t at = pos_;
                const std::int64_t v = literal(true);
                if (!peek("**")) return constant(v);
                if (v == i64_min) fail(at, "an integer that fits in int64");
                return negative(power_of(constant(-v)));  // Python: -2**2 == -(2**2)
            }
            return negative(unary());
        }
        if (accept("+")) return unary();
        return power_of(primary());
    }

    Poly power_of(Poly base) {
        if (!accept("**")) return base;
        skip();
        if (peek("-")) fail(pos_, "a non-negative integer exponent");
        accept("+");
        skip();
        if (pos_ >= text_.size() || !digit(text_[pos_])) fail(pos_, "a non-negative integer exponent");
        const std::int64_t e = literal(false);
        return checked([&] { return power(base, e); }, [&] { return pow(boxed(base), e); });
    }

    Poly primary() {
        skip();
        const std::size_t start = pos_;
        if (pos_ >= text_.size()) fail(pos_, "a number, a symbol, '(' or Max/Min/Mod/FloorDiv");
        const char c = text_[pos_];
        if (digit(c)) return constant(literal(false));
        if (c == '(') {
            ++pos_;
            Poly r = expr();
            expect(")");
            return r;
        }
        if (!alpha(c)) fail(pos_, "a number, a symbol, '(' or Max/Min/Mod/FloorDiv");
        const std::string_view n = name();
        const bool capital = n[0] >= 'A' && n[0] <= 'Z';  // the function and condition names (most symbols are not)
        if (capital && (n == "Max" || n == "Min" || n == "Mod" || n == "FloorDiv")) {
            expect("(");
            Polys args;
            args.push_back(expr());
            while (accept(",")) args.push_back(expr());
            expect(")");
            if (n == "Max" || n == "Min") {
                // pairwise from the left, as sym_max(sym_max(a, b), c)
                const bool is_max = n == "Max";
                const AtomKind kind = is_max ? AtomKind::max : AtomKind::min;
                for (std::size_t i = 1; i < args.size(); ++i) {
                    const Polys two = pair_of(std::move(args[0]), std::move(args[i]));
                    args[0] = checked([&] { return extremum(kind, two); },
                                      [&] { return is_max ? sym_max(boxed(two[0]), boxed(two[1])) : sym_min(boxed(two[0]), boxed(two[1])); });
                }
                return std::move(args[0]);
            }
            if (args.size() != 2) fail(start, std::string(n) + " with exactly two arguments");
            return n == "Mod" ? remainder(args[0], args[1]) : quotient(args[0], args[1]);
        }
        if (capital && (n == "Eq" || n == "Ne" || n == "True" || n == "False"))
            fail(start, "an integer expression (" + std::string(n) + " is a condition)");
        if (peek("(")) fail(start, "Max, Min, Mod or FloorDiv before '(' (unknown function " + std::string(n) + ")");
        return symbol(n);  // a valid name, not a reserved one (read above)
    }

    // ------------------------------------------------------------ conditions

    SymBool bool_or() {
        SymBool acc = bool_and();
        while (accept("|")) acc = acc || bool_and();
        return acc;
    }
    SymBool bool_and() {
        SymBool acc = bool_not();
        while (accept("&")) acc = acc && bool_not();
        return acc;
    }
    SymBool bool_not() {
        skip();
        const Depth guard(*this, pos_);
        if (accept("~")) return !bool_not();
        return bool_atom();
    }
    SymBool bool_atom() {
        skip();
        const std::size_t start = pos_;
        const std::string_view n = pos_ < text_.size() && alpha(text_[pos_]) ? name() : std::string_view{};
        if (n == "True") return true;
        if (n == "False") return false;
        if (n == "Eq" || n == "Ne") {
            expect("(");
            const SymInt a(expr());
            expect(",");
            const SymInt b(expr());
            expect(")");
            return n == "Eq" ? a == b : a != b;
        }
        pos_ = start;
        if (peek("(") && !operand_follows(pos_)) {  // `(cond)`, not a relation starting with `(expr)`
            accept("(");
            SymBool r = bool_or();
            expect(")");
            return r;
        }
        return relation();
    }

    /// Whether the parenthesized group at `open` is followed by an arithmetic or
    /// comparison operator, making it an integer operand (`(s0 + 1) < 3`).
    bool operand_follows(std::size_t open) const {
        int depth = 0;
        std::size_t i = open;
        for (; i < text_.size(); ++i) {
            if (text_[i] == '(') ++depth;
            if (text_[i] == ')' && --depth == 0) break;
        }
        if (i >= text_.size()) return false;  // unbalanced: the bool branch reports the missing ')'
        ++i;
        while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) ++i;
        if (i >= text_.size()) return false;
        const char c = text_[i];
        return c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '<' || c == '>' || c == '=' || c == '!';
    }
    SymBool relation() {
        const SymInt a(expr());
        skip();
        const std::size_t at = pos_;
        if (accept("==")) return a == SymInt(expr());
        if (accept("!=")) return a != SymInt(expr());
        if (accept("<=")) return a <= SymInt(expr());
        if (accept(">=")) return a >= SymInt(expr());
        if (accept("<")) return a < SymInt(expr());
        if (accept(">")) return a > SymInt(expr());
        fail(at, "a comparison (==, !=, <, <=, >, >=)");
    }

    std::string_view text_;
    const char* who_;
    std::size_t pos_ = 0;
    int depth_ = 0;
};

}  // namespace detail::sym

/// Reads a SymInt from torch's printed form: `parse_sym("s0 + 2*s1")`,
/// `parse_sym("Max(s0, s1)")`, `parse_sym("(s0 + 1)//2")`, `parse_sym("Mod(s0, 3)")`.
/// The result is canonical, so `parse_sym(e.to_string())` is identical to e.
/// Errors (value_error): `parse_sym: column 6: expected a number, a symbol, '(' or
/// Max/Min/Mod/FloorDiv, found end of input in "s0 + "`; overflow and division by
/// zero as for the operators.
template <class = void>
SymInt parse_sym(std::string_view text) {
    detail::sym::Parser<> p(text, "parse_sym");
    return p.run([](detail::sym::Parser<>& q) { return q.whole_int(); });
}

/// Reads a SymBool: `Eq(s0, s1)`, `s0 >= 2`, `s0 < s1`, `(s0 >= 2) & Ne(s1, 3)`,
/// `~Eq(s0, 1) | (s1 > 4)`, `True`, `False`; `==` and `!=` are read too.
template <class = void>
SymBool parse_sym_bool(std::string_view text) {
    detail::sym::Parser<> p(text, "parse_sym_bool");
    return p.run([](detail::sym::Parser<>& q) { return q.whole_bool(); });
}

}  // namespace yobx
