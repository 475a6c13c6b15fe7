// yobx/sym/shape_env/env.hpp — ShapeEnv: symbols with hints and ranges, checks, guards, draft report.
//
// A ShapeEnv knows, for each symbol, its *hint* (the value seen at run time)
// and its *range*; `check` records constraints (torch._check): an equality
// becomes a replacement, a bound narrows a range, divisibility is kept. A
// *guard* asks for the answer to a condition: what ranges, replacements and
// constraints prove is returned; anything else stops a strict ShapeEnv with
// GuardOnDataDependentSymNode, while a draft ShapeEnv takes the hints' answer,
// records it as a runtime assert and lists it in its DraftReport.
// A ShapeEnv is not synchronized: use one per thread or guard it.
// The laws the class declares are defined in the other headers of this folder:
// include <yobx/sym/shape_env.hpp>, which brings them all.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/detail/sym_expr.hpp>
#include <yobx/error.hpp>
#include <yobx/sym/symint.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <numeric>
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
        std::string s = "[";  // appended: g++ 12 -O3 reports a false -Wrestrict on "[" + std::string&&
        s += end(lower);
        s += ", ";
        s += end(upper);
        return s += "]";
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
    template <class = void>
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
    template <class = void>
    static std::string format_hints(const std::vector<std::pair<std::string, std::optional<std::int64_t>>>& hints) {
        std::string s;
        for (const auto& [name, v] : hints) s += (s.empty() ? "" : ", ") + name + " = " + (v ? std::to_string(*v) : "?");
        return s;
    }

    std::vector<DraftIssue> issues_;
};

namespace detail {
/// One more level of a nesting counter (the ShapeEnv's, or a thread's) for as long as it lives.
struct Nesting {
    int& depth;
    explicit Nesting(int& d) : depth(d) { ++depth; }
    ~Nesting() { --depth; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
};
}  // namespace detail

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
    template <class = void>
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
    /// An equality between it and a symbol made by create_symbol replaces it, whatever the names.
    template <class = void>
    SymInt fresh_symbol(std::string_view prefix = "s", std::optional<std::int64_t> hint = std::nullopt,
                        ValueRange range = ValueRange::size()) {
        for (;;) {
            auto counter = fresh_counters_.find(prefix);
            if (counter == fresh_counters_.end()) counter = fresh_counters_.emplace(std::string(prefix), 0).first;
            std::string name = std::string(prefix) + std::to_string(counter->second++);
            if (symbols_.find(name) == symbols_.end()) {
                SymInt s = create_symbol(name, hint, range);
                symbols_.find(name)->second.fresh = true;
                return s;
            }
        }
    }

    template <class = void>
    bool has_symbol(std::string_view name) const { return symbols_.find(name) != symbols_.end(); }
    /// How many symbols were created here (a caller tells from it whether an operation made any).
    std::size_t symbol_count() const noexcept { return symbols_.size(); }
    /// The hint of a symbol created here (nullopt if it has none); value_error for an unknown name.
    template <class = void>
    std::optional<std::int64_t> hint(std::string_view name) const { return info(name).hint; }
    /// The current range of a symbol, narrowed by checks.
    template <class = void>
    ValueRange range(std::string_view name) const { return info(name).range; }

    /// The replacements learnt from equality checks: symbol -> expression.
    template <class = void>
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
    template <class = void>
    SymInt simplify(const SymInt& e) const {
        if (e.is_constant()) return e;
        return SymInt::guarded([&] { return e.with_poly([&](const Poly& p) { return SymInt(simplified(p)); }); }, [&] { return "simplify " + e.to_string(); });
    }
    template <class = void>
    SymBool simplify(const SymBool& c) const {
        if (c.is_constant()) return c;
        return SymInt::guarded([&] { return SymBool(simplified(c.cond())); }, [&] { return "simplify " + c.to_string(); });
    }

    /// The range of an expression, propagated through every operator (after simplify).
    template <class = void>
    ValueRange bound(const SymInt& e) const {
        const SymInt s = simplify(e);
        if (auto v = s.maybe_constant()) return ValueRange::exactly(*v);
        return s.with_poly([&](const Poly& p) { return bound_of(p); });
    }

    /// The value of the expression for the hints; nullopt if a symbol has no hint.
    template <class = void>
    std::optional<std::int64_t> size_hint(const SymInt& e) const {
        const SymInt s = simplify(e);
        if (auto v = s.maybe_constant()) return v;
        const auto names = s.free_symbols();
        if (!all_hinted(names)) return std::nullopt;
        return s.evaluate_with(hint_values(names));
    }

    /// True only if ranges, replacements and constraints prove the condition. Never throws for undecidable input.
    template <class = void>
    bool statically_known_true(const SymBool& cond) const { return decide(simplify(cond).cond()) == std::optional<bool>(true); }
    /// The proven answer, or false when it cannot be proven either way.
    template <class = void>
    bool guard_or_false(const SymBool& cond) const { return decide(simplify(cond).cond()).value_or(false); }
    /// The proven answer, or true when it cannot be proven either way.
    template <class = void>
    bool guard_or_true(const SymBool& cond) const { return decide(simplify(cond).cond()).value_or(true); }

    /// torch._check: records the condition as a constraint used by later decisions
    /// (an equality becomes a replacement, `s0 >= 2` narrows a range, `Eq(Mod(s0, 8), 0)`
    /// is kept as divisibility) and as a runtime assert. A condition that is provably
    /// false, or false for the hints, throws runtime_error with the message, and the
    /// ShapeEnv is left as it was.
    template <class = void>
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
            univariate_cache_.clear();  // answers made under the ranges just undone
            throw;
        }
        runtime_asserts_.push_back(RuntimeAssert{s, std::string(message), where});
    }

    /// An operator's requirement that decides its result (broadcasting `N` with 6
    /// gives 6, valid only if `N == 1 or N == 6`): recorded like check(); a draft
    /// ShapeEnv also lists it in its report as an assumption. Nothing is
    /// recorded when the ShapeEnv proves it.
    template <class = void>
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
    template <class = void>
    bool evaluate(const SymBool& cond, source_location where = source_location::current()) {
        const SymBool s = simplify(cond);
        if (auto known = decide(s.cond())) return *known;
        return assume(s, where);
    }

    /// torch's guard_int: the value of an expression; an expression ranges do not pin down
    /// is handled like evaluate(Eq(e, hint)).
    template <class = void>
    std::int64_t guard_int(const SymInt& e, source_location where = source_location::current()) {
        const SymInt s = simplify(e);
        if (auto v = s.maybe_constant()) return *v;
        const auto r = s.with_poly([&](const Poly& p) { return bound_of(p); });
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
        bool fresh = false;        // made by fresh_symbol: an equality replaces it before a named one
    };
    using Poly = detail::sym::Poly;
    using Polys = detail::sym::Polys;
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

    template <class = void>
    bool all_hinted(const std::vector<std::string>& names) const {
        for (const auto& n : names) {
            const SymbolInfo* i = find(n);
            if (i == nullptr || !i->hint) return false;
        }
        return true;
    }
    template <class = void>
    SymbolValues hint_values(const std::vector<std::string>& names) const {
        SymbolValues v;
        for (const auto& n : names) v.emplace(n, *find(n)->hint);
        return v;
    }
    /// Each symbol with its hint (nullopt: none, or not a symbol of this env).
    template <class = void>
    std::vector<std::pair<std::string, std::optional<std::int64_t>>> hints_of(const std::vector<std::string>& names) const {
        std::vector<std::pair<std::string, std::optional<std::int64_t>>> out;
        for (const auto& n : names) {
            const SymbolInfo* i = find(n);
            out.emplace_back(n, i ? i->hint : std::nullopt);
        }
        return out;
    }
    template <class = void>
    std::string describe_hints(const std::vector<std::string>& names) const { return DraftReport::format_hints(hints_of(names)); }

    template <class = void>
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
    template <class = void>
    static void met_again(DraftIssue& issue, source_location where) {
        ++issue.count;
        const bool seen = std::any_of(issue.locations.begin(), issue.locations.end(), [&](const source_location& l) {
            return l.line() == where.line() && std::string_view(l.file_name()) == where.file_name();
        });
        if (!seen) issue.locations.push_back(where);
    }

    /// Strict: throw. Draft: the hints' answer, recorded (once per condition, counted each time).
    template <class = void>
    bool assume(const SymBool& s, source_location where) {
        // a negation that does not fit in int64 is no recorded condition
        std::optional<SymBool> negated;
        try {
            negated = !s;
        } catch (const value_error&) {
        }
        for (auto& issue : report_.issues_) {
            if (!issue.requirement.empty()) continue;
            const bool same = issue.condition.identical(s);
            if (!same && !(negated && issue.condition.identical(*negated))) continue;
            met_again(issue, where);
            return same ? issue.answer : !issue.answer;
        }
        const auto names = s.free_symbols();
        if (mode_ == ShapeEnvMode::strict || !all_hinted(names)) throw undecided(s.to_string(), names, where);
        const bool answer = s.evaluate_with(hint_values(names));
        report_.issues_.push_back(DraftIssue{s, answer, hints_of(names), 1, {where}, {}});
        // false under the hints, s's negation holds for them and so fits (else `!s` says why not)
        runtime_asserts_.push_back(RuntimeAssert{answer ? s : (negated ? *negated : !s), "draft assumption", where});
        return answer;
    }

    // The laws, declared here and defined in sym/shape_env/: simplification
    // (simplify.hpp), ranges (bounds.hpp), deciding (decide.hpp), facts (facts.hpp).
    struct Simplifier {
        const ShapeEnv& env;
        bool atoms_only = false;  // replacements applied already
        template <class = void>
        std::optional<Poly> symbol(const detail::sym::AtomPtr& a) {
            if (atoms_only) return std::nullopt;
            const auto it = env.replacements_.find(a->name);
            if (it == env.replacements_.end()) return std::nullopt;
            return it->second;
        }
        template <class = void>
        Poly atom(AtomKind kind, const Polys& args) { return env.simplify_atom(kind, args); }
        template <class = void>
        std::optional<Poly> kept_atom(const detail::sym::AtomPtr& a) { return env.atom_laws(*a); }
        template <class = void>
        std::optional<Poly> term(const Poly& t) { return env.simplify_term(t); }
    };
    // simplify.hpp
    template <class = void>
    Poly simplified(const Poly& p) const;
    template <class = void>
    Cond simplified(const Cond& c) const;
    template <class = void>
    Poly simplify_atom(AtomKind kind, const Polys& args) const;
    template <class = void>
    std::optional<Poly> atom_laws(const detail::sym::Atom& a) const;
    template <class = void>
    std::optional<std::int64_t> quotient_in_range(const Poly& num, const Poly& den) const;
    template <class = void>
    std::optional<Poly> simplify_term(const Poly& t) const;
    template <class = void>
    std::int64_t term_divisor(const Poly& p) const;
    template <class = void>
    bool divisible(const Poly& p, std::int64_t k) const;
    // bounds.hpp
    static std::int64_t sat(bool positive);
    static bool infinite(std::int64_t v);
    static std::int64_t bound_add(std::int64_t a, std::int64_t b);
    static std::int64_t bound_mul(std::int64_t a, std::int64_t b);
    static std::int64_t bound_pow(std::int64_t a, std::int64_t e);
    static ValueRange range_add(ValueRange a, ValueRange b);
    static ValueRange range_mul(ValueRange a, ValueRange b);
    static ValueRange range_pow(ValueRange a, std::int64_t e);
    static std::int64_t bound_floordiv(std::int64_t a, std::int64_t k);
    /// p's range; for a `question` (the relation p <= 0, p == 0 or p != 0), the finer
    /// bounds stop once the range answers it (a narrower range gives the same answer).
    template <class = void>
    ValueRange bound_of(const Poly& p, std::optional<BoolKind> question = std::nullopt) const;
    template <class = void>
    ValueRange bound_with(const Poly& p, const std::vector<std::pair<const detail::sym::Atom*, ValueRange>>& given) const;
    /// The deepest nesting of distributed_bound() (each level may branch on the
    /// arguments of one Max or Min).
    static constexpr int max_distributed_depth = 3;
    /// The most finer bounds (shifted, relaxed, distributed, univariate) one outermost bound_of()
    /// tries, nested calls included: through nested Max, Min and floor divisions they
    /// multiply (a fuzzed graph's Slice took minutes on one bound). Past it the
    /// term-by-term bound stands: wider, still sound.
    static constexpr int max_finer_bounds = 512;
    template <class = void>
    ValueRange distributed_bound(const Poly& p) const;
    template <class = void>
    ValueRange relaxed_bound(const Poly& p) const;
    template <class = void>
    static bool repeats_an_atom(const Poly& p);
    /// The most terms shifted_bound() expands a polynomial into.
    static constexpr std::size_t max_shifted_terms = 64;
    template <class = void>
    ValueRange shifted_bound(const Poly& p) const;
    /// The longest period univariate_bound() evaluates p over (twice, at most).
    static constexpr std::int64_t max_period = 1024;
    template <class = void>
    ValueRange univariate_bound(const Poly& p) const;
    template <class = void>
    ValueRange bound_atom(const detail::sym::Atom& a) const;
    // decide.hpp
    template <class = void>
    static int same_terms(const Poly& d, const Poly& f);
    static std::optional<bool> decide_constant(BoolKind kind, std::int64_t lo, std::int64_t hi);
    template <class = void>
    std::optional<bool> decide_relation(BoolKind kind, const Poly& d) const;
    template <class = void>
    std::optional<bool> decide(const Cond& c) const;
    // facts.hpp
    template <class = void>
    void narrow(const std::string& name, ValueRange r);
    template <class = void>
    const detail::sym::Atom* term_symbol(const Poly& p, std::int64_t& coef) const;
    template <class = void>
    void add_fact(const Cond& c);
    template <class = void>
    bool narrow_quotient(const Poly& d);
    template <class = void>
    bool try_replacement(const Poly& d);
    template <class = void>
    bool try_divisibility(const Poly& d);

    ShapeEnvMode mode_;
    std::map<std::string, SymbolInfo, std::less<>> symbols_;
    std::map<std::string, Poly, std::less<>> replacements_;
    std::vector<Cond> facts_;
    std::vector<RuntimeAssert> runtime_asserts_;
    DraftReport report_;
    std::map<std::string, std::size_t, std::less<>> fresh_counters_;  // per prefix: u0, u1... and s0, s1...
    static constexpr int max_depth = 16;  // nested re-simplifications of what the canonical form made
    mutable int depth_ = 0;
    struct PolyLess {
        bool operator()(const Poly& a, const Poly& b) const { return detail::sym::cmp_poly(a, b) < 0; }
    };
    // univariate_bound's answers, each a period's evaluations: a model asks the same questions
    // again and again (each block of a Swin, each layer); forgotten when a range narrows
    mutable std::map<Poly, ValueRange, PolyLess> univariate_cache_;
};

}  // namespace yobx
