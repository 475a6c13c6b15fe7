// yobx/sym/shape_env.hpp — ShapeEnv: symbols with hints and ranges, checks, guards, draft report.
//
// A ShapeEnv knows, for each symbol, its *hint* (the value seen at run time)
// and its *range*; `check` records constraints (torch._check): an equality
// becomes a replacement, a bound narrows a range, divisibility is kept. A
// *guard* asks for the answer to a condition: what ranges, replacements and
// constraints prove is returned; anything else stops a strict ShapeEnv with
// GuardOnDataDependentSymNode, while a draft ShapeEnv takes the hints' answer,
// records it as a runtime assert and lists it in its DraftReport.
// A ShapeEnv is not synchronized: use one per thread or guard it.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/detail/sym_expr.hpp>
#include <yobx/error.hpp>
#include <yobx/sym/symint.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// A closed interval of int64 values; INT64_MIN and INT64_MAX stand for -oo and oo.
///   ValueRange::size()          [0, oo]   (the default for a dimension)
///   ValueRange::between(2, 64)  [2, 64]
struct ValueRange {
    static constexpr std::int64_t neg_inf = detail::sym::i64_min;
    static constexpr std::int64_t inf = detail::sym::i64_max;

    std::int64_t lower = neg_inf;
    std::int64_t upper = inf;

    static constexpr ValueRange unknown() noexcept { return {neg_inf, inf}; }
    static constexpr ValueRange size() noexcept { return {0, inf}; }
    static constexpr ValueRange at_least(std::int64_t lo) noexcept { return {lo, inf}; }
    static constexpr ValueRange between(std::int64_t lo, std::int64_t hi) noexcept { return {lo, hi}; }
    static constexpr ValueRange exactly(std::int64_t v) noexcept { return {v, v}; }

    constexpr bool empty() const noexcept { return lower > upper; }
    constexpr bool contains(std::int64_t v) const noexcept { return lower <= v && v <= upper; }
    constexpr bool is_singleton() const noexcept { return lower == upper && lower != neg_inf && upper != inf; }
    friend constexpr bool operator==(const ValueRange&, const ValueRange&) = default;

    /// `[2, oo]`, `[-oo, 5]`, `[3, 3]`.
    std::string to_string() const {
        auto end = [](std::int64_t v) {
            return v == neg_inf ? std::string("-oo") : v == inf ? std::string("oo") : std::to_string(v);
        };
        return "[" + end(lower) + ", " + end(upper) + "]";
    }
};

/// How a ShapeEnv answers a guard it cannot prove.
enum class ShapeEnvMode : std::uint8_t {
    strict,  ///< throw GuardOnDataDependentSymNode
    draft,   ///< answer from the hints, record a runtime assert, report the issue
};

/// A condition the exported program must assert at run time: a check, or a draft assumption.
struct RuntimeAssert {
    SymBool condition;
    std::string message;
    source_location where;
};

/// One undecidable guard met by a draft ShapeEnv.
struct DraftIssue {
    SymBool condition;                                                  ///< as asked (simplified)
    bool answer = false;                                                ///< what the hints said
    std::vector<std::pair<std::string, std::optional<std::int64_t>>> hints;  ///< each symbol of the condition
    std::size_t count = 0;                                              ///< how often it was met
    std::vector<source_location> locations;                             ///< where, each place once
    std::string requirement;  ///< empty for a guard; for an operator's requirement taken as given (assume_requirement), what it is
};

/// What a draft ShapeEnv assumed, in the spirit of torch.export's draft-export report.
class DraftReport {
public:
    const std::vector<DraftIssue>& issues() const noexcept { return issues_; }
    bool empty() const noexcept { return issues_.empty(); }
    std::size_t size() const noexcept { return issues_.size(); }

    /// The report a person reads: a banner, then each issue with its condition,
    /// the answer taken from the hints, how often it was met and where.
    std::string to_string() const {
        const std::string bar(99, '#');
        std::string s = bar + "\n";
        if (issues_.empty()) {
            s += "Congratulations: no issues found; every guard was decided without the hints.\n" + bar + "\n";
            return s;
        }
        s += "WARNING: " + std::to_string(issues_.size()) +
             " issue(s) found during shape evaluation; the answers were taken from the hints.\n"
             "They hold for the observed sizes only and were recorded as runtime asserts.\n"
             "Fix each one with ShapeEnv::check (torch._check) or by changing the code.\n" +
             bar + "\n";
        for (std::size_t i = 0; i < issues_.size(); ++i) {
            const DraftIssue& d = issues_[i];
            if (!d.requirement.empty()) {
                s += "\n" + std::to_string(i + 1) + ". Assumed requirement.\n";
                s += "    " + d.requirement + ": yobx took `" + d.condition.to_string() + "` as given.\n";
                s += "    It holds for the hints: " + format_hints(d.hints) + ".\n";
            } else {
                s += "\n" + std::to_string(i + 1) + ". Data dependent guard.\n";
                s += "    yobx was unable to decide `" + d.condition.to_string() + "` from ranges and constraints.\n";
                s += std::string("    It assumed ") + (d.answer ? "True" : "False") + " from the hints: " + format_hints(d.hints) + ".\n";
            }
            s += "    This was encountered " + std::to_string(d.count) + " time(s).\n";
            s += "    This occurred at the following locations:\n";
            for (const auto& l : d.locations)
                s += "        File \"" + std::string(l.file_name()) + "\", line " + std::to_string(l.line()) + ", in " +
                     l.function_name() + "\n";
        }
        return s;
    }

private:
    friend class ShapeEnv;

    /// `a = 3, c = ?`
    static std::string format_hints(const std::vector<std::pair<std::string, std::optional<std::int64_t>>>& hints) {
        std::string s;
        for (const auto& [name, v] : hints) s += (s.empty() ? "" : ", ") + name + " = " + (v ? std::to_string(*v) : "?");
        return s;
    }

    std::vector<DraftIssue> issues_;
};

/// Symbols, their hints and ranges, the constraints learnt from checks, and the guards.
///
///   ShapeEnv env;                                       // strict
///   SymInt s0 = env.create_symbol("s0", 6, ValueRange::size());
///   env.check(mod(s0, 2) == 0, "batch must be even");   // kept: divisibility
///   env.statically_known_true(s0 != 3)                  // true: 3 is odd
///   env.evaluate(s0 > 4)                                // throws: ranges cannot tell
class ShapeEnv {
public:
    explicit ShapeEnv(ShapeEnvMode mode = ShapeEnvMode::strict) : mode_(mode) {}

    ShapeEnvMode mode() const noexcept { return mode_; }

    /// A new symbol with its hint (nullopt: unknown, as for data-dependent sizes) and range.
    /// Errors: a name already used, an empty range, a hint outside the range.
    SymInt create_symbol(std::string_view name, std::optional<std::int64_t> hint, ValueRange range = ValueRange::size()) {
        SymInt s = SymInt::symbol(name);
        if (symbols_.find(name) != symbols_.end())
            throw value_error("create_symbol: symbol " + std::string(name) + " already exists");
        if (range.empty()) throw value_error("create_symbol: the range " + range.to_string() + " of " + std::string(name) + " is empty");
        if (hint && !range.contains(*hint))
            throw value_error("create_symbol: hint " + std::to_string(*hint) + " of " + std::string(name) +
                              " is outside its range " + range.to_string());
        symbols_.emplace(std::string(name), SymbolInfo{hint, range, 1});
        return s;
    }

    /// A symbol with a new unique name `<prefix><n>`, n counted per prefix (ONNX's
    /// symbol generation for unknown results; yobx uses `u` for data-dependent sizes).
    SymInt fresh_symbol(std::string_view prefix = "s", std::optional<std::int64_t> hint = std::nullopt,
                        ValueRange range = ValueRange::size()) {
        for (;;) {
            auto counter = fresh_counters_.find(prefix);
            if (counter == fresh_counters_.end()) counter = fresh_counters_.emplace(std::string(prefix), 0).first;
            std::string name = std::string(prefix) + std::to_string(counter->second++);
            if (symbols_.find(name) == symbols_.end()) return create_symbol(name, hint, range);
        }
    }

    bool has_symbol(std::string_view name) const { return symbols_.find(name) != symbols_.end(); }
    /// The hint of a symbol created here (nullopt if it has none); value_error for an unknown name.
    std::optional<std::int64_t> hint(std::string_view name) const { return info(name).hint; }
    /// The current range of a symbol, narrowed by checks.
    ValueRange range(std::string_view name) const { return info(name).range; }

    /// The replacements learnt from equality checks: symbol -> expression.
    std::map<std::string, SymInt, std::less<>> replacements() const {
        std::map<std::string, SymInt, std::less<>> out;
        for (const auto& [k, v] : replacements_) out.emplace(k, SymInt(v));
        return out;
    }
    /// Every check and every draft assumption, in the order they were made.
    const std::vector<RuntimeAssert>& runtime_asserts() const noexcept { return runtime_asserts_; }
    /// The guards a draft ShapeEnv could not decide (always empty in strict mode).
    const DraftReport& draft_report() const noexcept { return report_; }

    /// The expression with replacements applied and what ranges and constraints
    /// simplify: `Max(s0, 1)` is `s0` when s0 >= 1; `Mod(s0, 8)` is 0 after `check(Eq(Mod(s0, 8), 0))`.
    SymInt simplify(const SymInt& e) const {
        if (e.is_constant()) return e;
        return SymInt::guarded([&] { return SymInt(simplified(e.poly())); }, [&] { return "simplify " + e.to_string(); });
    }
    SymBool simplify(const SymBool& c) const {
        if (c.is_constant()) return c;
        return SymInt::guarded([&] { return SymBool(simplified(c.cond())); }, [&] { return "simplify " + c.to_string(); });
    }

    /// The range of an expression, propagated through every operator (after simplify).
    ValueRange bound(const SymInt& e) const {
        const SymInt s = simplify(e);
        if (auto v = s.maybe_constant()) return ValueRange::exactly(*v);
        return bound_of(s.poly());
    }

    /// The value of the expression for the hints; nullopt if a symbol has no hint.
    std::optional<std::int64_t> size_hint(const SymInt& e) const {
        const SymInt s = simplify(e);
        if (auto v = s.maybe_constant()) return v;
        const auto names = s.free_symbols();
        if (!all_hinted(names)) return std::nullopt;
        return s.evaluate_with(hint_values(names));
    }

    /// True only if ranges, replacements and constraints prove the condition. Never throws for undecidable input.
    bool statically_known_true(const SymBool& cond) const { return decide(simplify(cond).cond()) == std::optional<bool>(true); }
    /// The proven answer, or false when it cannot be proven either way.
    bool guard_or_false(const SymBool& cond) const { return decide(simplify(cond).cond()).value_or(false); }
    /// The proven answer, or true when it cannot be proven either way.
    bool guard_or_true(const SymBool& cond) const { return decide(simplify(cond).cond()).value_or(true); }

    /// torch._check: records the condition as a constraint used by later decisions
    /// (an equality becomes a replacement, `s0 >= 2` narrows a range, `Eq(Mod(s0, 8), 0)`
    /// is kept as divisibility) and as a runtime assert. A condition that is provably
    /// false, or false for the hints, throws runtime_error with the message, and the
    /// ShapeEnv is left as it was.
    void check(const SymBool& cond, std::string_view message = {}, source_location where = source_location::current()) {
        const SymBool s = simplify(cond);
        const detail::sym::Cond c = s.cond();
        const auto fail = [&](const std::string& why) {
            throw runtime_error("check failed: " + (message.empty() ? std::string() : std::string(message) + ": ") +
                                cond.to_string() + " " + why);
        };
        const auto known = decide(c);
        if (known == std::optional<bool>(true)) return;
        if (known == std::optional<bool>(false)) fail("is provably false");
        const auto names = s.free_symbols();
        if (all_hinted(names) && !s.evaluate_with(hint_values(names))) fail("is false for the hints " + describe_hints(names));
        // all or nothing: a check that fails half-way leaves the env as it was
        auto symbols = symbols_;
        auto replacements = replacements_;
        auto facts = facts_;
        try {
            SymInt::guarded([&] { add_fact(c); return 0; }, [&] { return "check " + cond.to_string(); });
        } catch (...) {
            symbols_ = std::move(symbols);
            replacements_ = std::move(replacements);
            facts_ = std::move(facts);
            throw;
        }
        runtime_asserts_.push_back(RuntimeAssert{s, std::string(message), where});
    }

    /// An operator's requirement that decides its result (broadcasting `N` with 6
    /// gives 6, valid only if `N == 1 or N == 6`): recorded like check(); a draft
    /// ShapeEnv also lists it in its report as an assumption. Nothing is
    /// recorded when the ShapeEnv proves it.
    void assume_requirement(const SymBool& cond, std::string_view message, source_location where = source_location::current()) {
        if (statically_known_true(cond)) return;
        const SymBool s = simplify(cond);
        check(cond, message, where);
        if (mode_ != ShapeEnvMode::draft) return;
        for (auto& issue : report_.issues_)
            if (issue.requirement == message && issue.condition.identical(s)) return met_again(issue, where);
        report_.issues_.push_back(DraftIssue{s, true, hints_of(s.free_symbols()), 1, {where}, std::string(message)});
    }

    /// Decides the condition. Proven: the answer. Otherwise a strict ShapeEnv throws
    /// GuardOnDataDependentSymNode (the condition, the symbols' hints and `where`); a
    /// draft ShapeEnv answers from the hints, records a runtime assert and a DraftReport issue.
    bool evaluate(const SymBool& cond, source_location where = source_location::current()) {
        const SymBool s = simplify(cond);
        if (auto known = decide(s.cond())) return *known;
        return assume(s, where);
    }

    /// torch's guard_int: the value of an expression; an expression ranges do not pin down
    /// is handled like evaluate(Eq(e, hint)).
    std::int64_t guard_int(const SymInt& e, source_location where = source_location::current()) {
        const SymInt s = simplify(e);
        if (auto v = s.maybe_constant()) return *v;
        const auto r = bound_of(s.poly());
        if (r.is_singleton()) return r.lower;
        const auto names = s.free_symbols();
        if (mode_ == ShapeEnvMode::strict || !all_hinted(names)) throw undecided(s.to_string(), names, where);
        const std::int64_t h = s.evaluate_with(hint_values(names));
        assume(simplify(s == h), where);
        return h;
    }

private:
    struct SymbolInfo {
        std::optional<std::int64_t> hint;
        ValueRange range;
        std::int64_t divisor = 1;  // the symbol is a multiple of it
    };
    using Poly = detail::sym::Poly;
    using Cond = detail::sym::Cond;
    using BoolKind = detail::sym::BoolKind;
    using AtomKind = detail::sym::AtomKind;

    const SymbolInfo& info(std::string_view name) const {
        const auto it = symbols_.find(name);
        if (it == symbols_.end()) throw value_error("ShapeEnv: unknown symbol " + std::string(name));
        return it->second;
    }
    const SymbolInfo* find(std::string_view name) const {
        const auto it = symbols_.find(name);
        return it == symbols_.end() ? nullptr : &it->second;
    }

    bool all_hinted(const std::vector<std::string>& names) const {
        for (const auto& n : names) {
            const SymbolInfo* i = find(n);
            if (i == nullptr || !i->hint) return false;
        }
        return true;
    }
    SymbolValues hint_values(const std::vector<std::string>& names) const {
        SymbolValues v;
        for (const auto& n : names) v.emplace(n, *find(n)->hint);
        return v;
    }
    /// Each symbol with its hint (nullopt: none, or not a symbol of this env).
    std::vector<std::pair<std::string, std::optional<std::int64_t>>> hints_of(const std::vector<std::string>& names) const {
        std::vector<std::pair<std::string, std::optional<std::int64_t>>> out;
        for (const auto& n : names) {
            const SymbolInfo* i = find(n);
            out.emplace_back(n, i ? i->hint : std::nullopt);
        }
        return out;
    }
    std::string describe_hints(const std::vector<std::string>& names) const { return DraftReport::format_hints(hints_of(names)); }

    GuardOnDataDependentSymNode undecided(const std::string& text, const std::vector<std::string>& names,
                                          source_location where) const {
        std::string msg = "Could not guard on data-dependent expression " + text + " (hints: " + describe_hints(names) + ") at " +
                          where.file_name() + ":" + std::to_string(where.line()) + " in " + where.function_name() + ". ";
        if (mode_ == ShapeEnvMode::draft)
            msg += "Draft mode answers from the hints, but a symbol has no hint; tell yobx the answer with ShapeEnv::check.";
        else
            msg += "Tell yobx the answer with ShapeEnv::check (torch._check), or use ShapeEnvMode::draft to take the "
                   "hints' answer and get a report.";
        return GuardOnDataDependentSymNode(msg, text, where);
    }

    /// A report issue met once more: counted, and `where` added unless already listed.
    static void met_again(DraftIssue& issue, source_location where) {
        ++issue.count;
        const bool seen = std::any_of(issue.locations.begin(), issue.locations.end(), [&](const source_location& l) {
            return l.line() == where.line() && std::string_view(l.file_name()) == where.file_name();
        });
        if (!seen) issue.locations.push_back(where);
    }

    /// Strict: throw. Draft: the hints' answer, recorded (once per condition, counted each time).
    bool assume(const SymBool& s, source_location where) {
        const SymBool negated = !s;
        for (auto& issue : report_.issues_) {
            if (!issue.requirement.empty()) continue;
            const bool same = issue.condition.identical(s);
            if (!same && !issue.condition.identical(negated)) continue;
            met_again(issue, where);
            return same ? issue.answer : !issue.answer;
        }
        const auto names = s.free_symbols();
        if (mode_ == ShapeEnvMode::strict || !all_hinted(names)) throw undecided(s.to_string(), names, where);
        const bool answer = s.evaluate_with(hint_values(names));
        report_.issues_.push_back(DraftIssue{s, answer, hints_of(names), 1, {where}, {}});
        runtime_asserts_.push_back(RuntimeAssert{answer ? s : negated, "draft assumption", where});
        return answer;
    }

    // ------------------------------------------------------------ simplification

    struct Simplifier {
        const ShapeEnv& env;
        bool atoms_only = false;  // replacements applied already
        std::optional<Poly> symbol(const detail::sym::AtomPtr& a) {
            if (atoms_only) return std::nullopt;
            const auto it = env.replacements_.find(a->name);
            if (it == env.replacements_.end()) return std::nullopt;
            return it->second;
        }
        Poly atom(AtomKind kind, const std::vector<Poly>& args) { return env.simplify_atom(kind, args); }
        std::optional<Poly> term(const Poly& t) { return env.simplify_term(t); }
    };

    Poly simplified(const Poly& p) const {
        Simplifier s{*this, false};
        return detail::sym::rebuild(p, s);
    }

    Cond simplified(const Cond& c) const {
        if (!c.node) return c;
        const auto& n = *c.node;
        switch (n.kind) {
            case BoolKind::and_:
            case BoolKind::or_: {
                std::vector<Cond> args;
                for (const auto& a : n.args) args.push_back(simplified(Cond{false, a}));
                return detail::sym::junction(n.kind, args);
            }
            default: return detail::sym::relation(n.kind, simplified(n.diff));
        }
    }

    Poly simplify_atom(AtomKind kind, const std::vector<Poly>& args) const {
        Poly p = detail::sym::PlainAtoms::make(kind, args);
        std::int64_t k = 1;
        const detail::sym::Atom* a = detail::sym::lone_atom(p, k);
        if (a == nullptr || a->kind != kind) {
            // the canonical form made new atoms (Max(s0 - 1, -1) is Max(0, s0) - 1): simplify those too
            if (p.is_constant() || depth_ >= max_depth) return p;
            ++depth_;
            struct Leave {
                std::size_t& d;
                ~Leave() { --d; }
            } leave{depth_};
            Simplifier atoms_only{*this, true};
            return detail::sym::rebuild(p, atoms_only);
        }
        switch (kind) {
            case AtomKind::max:
            case AtomKind::min: {
                // drop an argument another one provably dominates
                const auto& xs = a->args;
                std::vector<bool> alive(xs.size(), true);
                for (std::size_t i = 0; i < xs.size(); ++i)
                    for (std::size_t j = 0; j < xs.size() && alive[i]; ++j) {
                        if (i == j || !alive[j]) continue;
                        const Poly d = kind == AtomKind::max ? detail::sym::sub(xs[i], xs[j]) : detail::sym::sub(xs[j], xs[i]);
                        if (decide_relation(BoolKind::le, d) == std::optional<bool>(true)) alive[i] = false;
                    }
                std::vector<Poly> kept;
                for (std::size_t i = 0; i < xs.size(); ++i)
                    if (alive[i]) kept.push_back(xs[i]);
                return detail::sym::scale(detail::sym::extremum(kind, kept), k);
            }
            case AtomKind::floordiv:
            case AtomKind::mod: {
                const Poly& num = a->args[0];
                const Poly& den = a->args[1];
                namespace ds = detail::sym;
                // q*den <= num < (q + 1)*den for a q the ranges prove: num//den == q and
                // Mod(num, den) == num - q*den, whatever the sign of num's constant
                if (const auto q = quotient_in_range(num, den)) {
                    if (kind == AtomKind::floordiv) return ds::scale(ds::constant(*q), k);
                    return ds::scale(ds::sub(num, ds::scale(den, *q)), k);
                }
                // (x//a + c)//b == (x + c*a)//(a*b) for b >= 1 (b == 0 is outside the domain), c any
                // terms without a quotient
                const detail::sym::Atom* in = ds::lone_quotient(num);
                if (kind == AtomKind::floordiv && in && bound_of(den).lower >= 0) {
                    return ds::scale(simplified(ds::floordiv(ds::unnested(num, *in), ds::mul(in->args[1], den))), k);
                }
                // Mod(x//a + c, b) == x//a + c - b*((x//a + c)//b) for b >= 0, whose quotient the rule above simplifies
                if (kind == AtomKind::mod && in && !den.is_constant() && bound_of(den).lower >= 0)
                    return ds::scale(ds::sub(num, ds::mul(den, simplify_atom(AtomKind::floordiv, {num, den}))), k);
                if (kind == AtomKind::mod && den.is_constant()) {
                    // terms known to be multiples of the divisor vanish: Mod(3*s0 + 2, 4) is 2 when 8 divides s0
                    std::vector<detail::sym::Term> kept;
                    for (const auto& t : num.terms) {
                        detail::sym::Poly one = detail::sym::from_sorted(0, {t});
                        if (!divisible(one, den.constant)) kept.push_back(t);
                    }
                    if (kept.size() != num.terms.size())
                        return detail::sym::scale(detail::sym::mod(detail::sym::from_sorted(num.constant, std::move(kept)), den), k);
                }
                return p;
            }
            default: return p;
        }
    }

    /// The q with q*den <= num < (q + 1)*den, when the ranges prove it for den >= 1:
    /// from num's range for a constant den, else q in {0, -1, 1}.
    std::optional<std::int64_t> quotient_in_range(const Poly& num, const Poly& den) const {
        namespace ds = detail::sym;
        const ValueRange d = bound_of(den);
        if (d.lower < 1) return std::nullopt;
        if (den.is_constant()) {
            const ValueRange n = bound_of(num);
            if (infinite(n.lower) || infinite(n.upper)) return std::nullopt;
            const std::int64_t q = ds::floordiv(n.lower, den.constant);
            if (q == ds::floordiv(n.upper, den.constant)) return q;
            return std::nullopt;
        }
        const auto proven = [&](const Poly& le_zero) { return decide_relation(BoolKind::le, le_zero) == std::optional<bool>(true); };
        for (const std::int64_t q : {0, -1, 1}) {
            try {
                const Poly low = ds::sub(ds::scale(den, q), num);                                     // q*den - num <= 0
                const Poly high = ds::add(ds::sub(num, ds::scale(den, q + 1)), ds::constant(1));     // num - (q+1)*den + 1 <= 0
                if (proven(low) && proven(high)) return q;
            } catch (const detail::sym::overflow&) {
            }
        }
        return std::nullopt;
    }

    /// c*(p//k) is (c/k)*p when k divides both c and p.
    std::optional<Poly> simplify_term(const Poly& t) const {
        std::int64_t c = 1;
        const detail::sym::Atom* a = detail::sym::lone_atom(t, c);
        if (a == nullptr || a->kind != AtomKind::floordiv || !a->args[1].is_constant()) return std::nullopt;
        const std::int64_t k = a->args[1].constant;
        if (k <= 0 || c % k != 0 || !divisible(a->args[0], k)) return std::nullopt;
        return detail::sym::scale(a->args[0], c / k);
    }

    /// gcd of what each term is known to be a multiple of (coefficient times symbol divisors); 0 if no terms.
    std::int64_t term_divisor(const Poly& p) const {
        std::int64_t g = 0;
        for (const auto& t : p.terms) {
            std::int64_t m = t.coef;
            try {
                for (const auto& f : t.mono)
                    if (f.atom->kind == AtomKind::symbol)
                        if (const SymbolInfo* i = find(f.atom->name)) m = detail::sym::mul(m, detail::sym::pow(i->divisor, f.exp));
            } catch (const detail::sym::overflow&) {
                m = t.coef;
            }
            g = detail::sym::gcd(g, m);
        }
        return g;
    }
    bool divisible(const Poly& p, std::int64_t k) const {
        if (k == 0) return false;
        const std::int64_t g = detail::sym::gcd(term_divisor(p), p.constant);
        return g % k == 0;
    }

    // ------------------------------------------------------------------ ranges

    static std::int64_t sat(bool positive) { return positive ? ValueRange::inf : ValueRange::neg_inf; }
    static bool infinite(std::int64_t v) { return v == ValueRange::inf || v == ValueRange::neg_inf; }

    static std::int64_t bound_add(std::int64_t a, std::int64_t b) {
        if (infinite(a)) return a;
        if (infinite(b)) return b;
        std::int64_t r;
        if (__builtin_add_overflow(a, b, &r)) return sat(a > 0);
        return r;
    }
    static std::int64_t bound_mul(std::int64_t a, std::int64_t b) {
        if (a == 0 || b == 0) return 0;
        const bool positive = (a > 0) == (b > 0);
        if (infinite(a) || infinite(b)) return sat(positive);
        std::int64_t r;
        if (__builtin_mul_overflow(a, b, &r)) return sat(positive);
        return r;
    }
    static std::int64_t bound_pow(std::int64_t a, std::int64_t e) {  // e >= 1
        const bool negative = a < 0 && e % 2 == 1;
        if (infinite(a)) return negative ? ValueRange::neg_inf : ValueRange::inf;
        const std::int64_t m = a < 0 ? -a : a;
        if (m <= 1) return negative ? -m : m;
        std::int64_t r = 1;
        for (std::int64_t i = 0; i < e; ++i)  // m >= 2: overflows within 63 steps
            if (__builtin_mul_overflow(r, m, &r)) return negative ? ValueRange::neg_inf : ValueRange::inf;
        return negative ? -r : r;
    }
    static ValueRange range_add(ValueRange a, ValueRange b) {
        return {a.lower == ValueRange::neg_inf || b.lower == ValueRange::neg_inf ? ValueRange::neg_inf : bound_add(a.lower, b.lower),
                a.upper == ValueRange::inf || b.upper == ValueRange::inf ? ValueRange::inf : bound_add(a.upper, b.upper)};
    }
    static ValueRange range_mul(ValueRange a, ValueRange b) {
        const std::int64_t c[4] = {bound_mul(a.lower, b.lower), bound_mul(a.lower, b.upper), bound_mul(a.upper, b.lower),
                                   bound_mul(a.upper, b.upper)};
        return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    static ValueRange range_pow(ValueRange a, std::int64_t e) {
        const std::int64_t x = bound_pow(a.lower, e), y = bound_pow(a.upper, e);
        if (a.lower >= 0 || e % 2 == 1) return {std::min(x, y), std::max(x, y)};
        if (a.upper <= 0) return {y, x};
        return {0, std::max(x, y)};
    }
    static std::int64_t bound_floordiv(std::int64_t a, std::int64_t k) {  // k >= 1
        if (infinite(a)) return a;
        if (k == ValueRange::inf) return a >= 0 ? 0 : -1;
        return detail::sym::floordiv(a, k);
    }

    ValueRange bound_of(const Poly& p) const {
        ValueRange acc = ValueRange::exactly(p.constant);
        for (const auto& t : p.terms) {
            ValueRange r = ValueRange::exactly(t.coef);
            for (const auto& f : t.mono) r = range_mul(r, range_pow(bound_atom(*f.atom), f.exp));
            acc = range_add(acc, r);
        }
        if ((acc.lower == ValueRange::neg_inf || acc.upper == ValueRange::inf) && repeats_an_atom(p)) {
            const ValueRange s = shifted_bound(p);
            acc = {std::max(acc.lower, s.lower), std::min(acc.upper, s.upper)};
        }
        return acc;
    }

    /// Whether an atom of p is in two terms or has a power: then the term-by-term bound is loose.
    static bool repeats_an_atom(const Poly& p) {
        for (std::size_t i = 0; i < p.terms.size(); ++i)
            for (const auto& f : p.terms[i].mono)
                if (f.exp > 1 || std::any_of(p.terms.begin() + static_cast<std::ptrdiff_t>(i) + 1, p.terms.end(), [&](const auto& u) {
                        return std::any_of(u.mono.begin(), u.mono.end(), [&](const auto& g) { return g.atom == f.atom || detail::sym::cmp_atom(*g.atom, *f.atom) == 0; });
                    }))
                    return true;
        return false;
    }

    /// The most terms shifted_bound() expands a polynomial into.
    static constexpr std::size_t max_shifted_terms = 64;

    /// p's range with each atom x written lo + y (or hi - y) for its bound [lo, hi] and
    /// y >= 0, expanded: the term-by-term bound of the result is tight at the corner,
    /// where the one of p is not (s*s - s + 1 is 3 + 3*t + t*t for s == 2 + t >= 2:
    /// at least 3, where s*s and -s alone bound nothing). Unknown when the expansion
    /// overflows or exceeds max_shifted_terms.
    ValueRange shifted_bound(const Poly& p) const {
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
                    for (std::int64_t e = 0; e < f.exp; ++e) {
                        term = ds::mul_raw(term, it->second);
                        if (term.terms.size() > max_shifted_terms) return ValueRange::unknown();
                    }
                }
                out = ds::add_raw(out, term);
                if (out.terms.size() > max_shifted_terms) return ValueRange::unknown();
            }
            ValueRange acc = ValueRange::exactly(out.constant);
            for (const auto& t : out.terms) {
                ValueRange r = ValueRange::exactly(t.coef);
                for (const auto& f : t.mono) {
                    const auto it = std::find_if(fresh.begin(), fresh.end(), [&](const auto& e) { return e.first == f.atom.get(); });
                    r = range_mul(r, range_pow(it->second, f.exp));
                }
                acc = range_add(acc, r);
            }
            return acc;
        } catch (const ds::overflow&) {
            return ValueRange::unknown();
        } catch (const ds::too_large&) {
            return ValueRange::unknown();
        }
    }

    ValueRange bound_atom(const detail::sym::Atom& a) const {
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

    // ---------------------------------------------------------------- deciding

    /// 1 if d has the same terms as f, -1 if the opposite terms, 0 otherwise.
    static int same_terms(const Poly& d, const Poly& f) {
        if (d.terms.size() != f.terms.size() || d.terms.empty()) return 0;
        int sign = 0;
        for (std::size_t i = 0; i < d.terms.size(); ++i) {
            if (detail::sym::cmp_mono(d.terms[i].mono, f.terms[i].mono) != 0) return 0;
            const int s = d.terms[i].coef == f.terms[i].coef ? 1 : (d.terms[i].coef == -f.terms[i].coef ? -1 : 0);
            if (s == 0 || (sign != 0 && s != sign)) return 0;
            sign = s;
        }
        return sign;
    }

    static std::optional<bool> decide_constant(BoolKind kind, std::int64_t lo, std::int64_t hi) {
        // the relation's diff lies in [lo, hi]
        switch (kind) {
            case BoolKind::eq:
                if (lo == 0 && hi == 0) return true;
                if (lo > 0 || hi < 0) return false;
                return std::nullopt;
            case BoolKind::ne:
                if (lo == 0 && hi == 0) return false;
                if (lo > 0 || hi < 0) return true;
                return std::nullopt;
            default:
                if (hi <= 0) return true;
                if (lo > 0) return false;
                return std::nullopt;
        }
    }

    std::optional<bool> decide_relation(BoolKind kind, const Poly& d) const {
        if (d.is_constant()) return decide_constant(kind, d.constant, d.constant);
        const ValueRange r = bound_of(d);
        if (auto v = decide_constant(kind, r.lower, r.upper)) return v;
        if (kind != BoolKind::le) {  // g*P == c has no solution when g does not divide c
            const std::int64_t g = term_divisor(d);
            if (g > 1 && d.constant % g != 0) return kind == BoolKind::ne;
        }
        for (const auto& fact : facts_) {
            const detail::sym::BoolNode& f = *fact.node;
            const int sign = same_terms(d, f.diff);
            if (sign == 0) continue;
            // d == sign*f + k
            std::int64_t fc, k;
            if (__builtin_mul_overflow(sign, f.diff.constant, &fc) || __builtin_sub_overflow(d.constant, fc, &k)) continue;
            std::optional<bool> v;
            switch (f.kind) {
                case BoolKind::eq: v = decide_constant(kind, k, k); break;                             // f == 0
                case BoolKind::ne:                                                                      // f != 0
                    if (k == 0 && kind != BoolKind::le) v = kind == BoolKind::ne;
                    break;
                case BoolKind::le:                                                                      // f <= 0
                    v = sign == 1 ? decide_constant(kind, ValueRange::neg_inf, k) : decide_constant(kind, k, ValueRange::inf);
                    break;
                default: break;
            }
            if (v) return v;
        }
        return std::nullopt;
    }

    std::optional<bool> decide(const Cond& c) const {
        if (!c.node) return c.value;
        const auto& n = *c.node;
        if (n.kind == BoolKind::and_ || n.kind == BoolKind::or_) {
            const bool is_and = n.kind == BoolKind::and_;
            bool all = true;
            for (const auto& a : n.args) {
                const auto v = decide(Cond{false, a});
                if (v && *v != is_and) return !is_and;  // a False in And, a True in Or
                if (!v) all = false;
            }
            if (all) return is_and;
            return std::nullopt;
        }
        return decide_relation(n.kind, n.diff);
    }

    // ------------------------------------------------------------------ facts

    void narrow(const std::string& name, ValueRange r) {
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
    }

    /// The symbol of this env if p is `coef*symbol + constant`, with coef.
    const detail::sym::Atom* term_symbol(const Poly& p, std::int64_t& coef) const {
        const detail::sym::Atom* a = detail::sym::term_atom(p, coef);
        return a != nullptr && a->kind == AtomKind::symbol && find(a->name) != nullptr ? a : nullptr;
    }

    void add_fact(const Cond& c) {
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

    /// `s == expr` with s not in expr: s is replaced by expr from now on (the
    /// greatest such symbol, so that s1 becomes s0 and not the reverse).
    bool try_replacement(const Poly& d) {
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
            if (best == nullptr || detail::sym::cmp_name(a->name, best->name) > 0) {
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
    bool try_divisibility(const Poly& d) {
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

    ShapeEnvMode mode_;
    std::map<std::string, SymbolInfo, std::less<>> symbols_;
    std::map<std::string, Poly, std::less<>> replacements_;
    std::vector<Cond> facts_;
    std::vector<RuntimeAssert> runtime_asserts_;
    DraftReport report_;
    std::map<std::string, std::size_t, std::less<>> fresh_counters_;  // per prefix: u0, u1... and s0, s1...
    static constexpr std::size_t max_depth = 16;  // nested re-simplifications of what the canonical form made
    mutable std::size_t depth_ = 0;
};

}  // namespace yobx
