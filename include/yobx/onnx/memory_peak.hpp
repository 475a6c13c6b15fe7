// yobx/onnx/memory_peak.hpp — the peak of a graph's step sums: the steps no other is proven to
// dominate, and their Max.
//
// Comparing every pair of steps symbolically is what costs: the sums are first compared at a
// few sizes (a step larger somewhere is not below), then a ShapeEnv is asked for a proof, and
// failing that the floors are undone (`x = k*q + r - c` for each `Mod(x + c, k)`), within a
// budget. What is left is a Max, one SymInt when it is short (MaxOf).
//
//   std::vector<std::size_t> kept;
//   MaxOf peak = peak_of({n * 8 + 1, n * 4, n * n}, &kept);  // Max(n**2, 8*n + 1): kept {0, 2}
#pragma once

#include <yobx/error.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// The Max of expressions none of which is proven below another: one SymInt (the canonical
/// Max, `4*Max(n**2 + 48*n, 2*n**2 + 32*n)`) when they are at most `joined_at_most`; past that,
/// canonicalizing the Max compares every pair again (seconds for thousands of arguments), and
/// it is printed `Max(a, b, ...)`, the arguments each canonical: the same value, read by parse_sym.
struct MaxOf {
    static constexpr std::size_t joined_at_most = 64;
    std::vector<SymInt> args;
    std::optional<SymInt> joined;

    MaxOf() = default;
    explicit MaxOf(std::vector<SymInt> a) : args(std::move(a)) {
        if (args.empty()) args.push_back(SymInt(0));
        if (args.size() <= joined_at_most) joined = args.size() == 1 ? args[0] : SymInt::sym_max(args);
    }
    /// The Max as one SymInt (built now when it has more than joined_at_most arguments).
    SymInt expression() const { return joined ? *joined : SymInt::sym_max(args); }
    std::string to_string() const {
        if (joined) return joined->to_string();
        std::string s = "Max(";
        for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i].to_string();
        return s + ")";
    }
    std::int64_t evaluate_with(const SymbolValues& values) const {
        if (joined) return joined->evaluate_with(values);
        std::int64_t m = args[0].evaluate_with(values);
        for (std::size_t i = 1; i < args.size(); ++i) m = std::max(m, args[i].evaluate_with(values));
        return m;
    }
    std::vector<std::string> free_symbols() const {
        if (joined) return joined->free_symbols();
        std::vector<std::string> out;
        for (const auto& a : args)
            for (auto& n : a.free_symbols()) out.push_back(std::move(n));
        std::sort(out.begin(), out.end(), yobx::detail::sym::NameLess{});
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }
};


namespace detail {

/// A ShapeEnv whose symbols are those of `exprs`, each a size ([0, oo]).
inline ShapeEnv sizes_env(const std::vector<const SymInt*>& exprs) {
    ShapeEnv env;
    for (const SymInt* e : exprs)
        for (const auto& s : e->free_symbols())
            if (!env.has_symbol(s)) env.create_symbol(s, std::nullopt, ValueRange::size());
    return env;
}

/// A Mod or FloorDiv of `x + c` by `k` in e (x a size symbol, 0 <= c < k): (x, c, k).
inline std::optional<std::tuple<std::string, std::int64_t, std::int64_t>> residue_atom(const SymInt& e) {
    using namespace yobx::detail::sym;
    return e.with_poly([](const Poly& p) -> std::optional<std::tuple<std::string, std::int64_t, std::int64_t>> {
        for (const Term& t : p.terms)
            for (const Factor& f : t.mono) {
                const Atom& a = *f.atom;
                if (a.kind != AtomKind::mod && a.kind != AtomKind::floordiv) continue;
                const Poly& n = a.args[0];
                const Poly& k = a.args[1];
                if (!k.is_constant() || k.constant < 2 || n.terms.size() != 1 || n.terms[0].coef != 1 || n.terms[0].mono.size() != 1)
                    continue;
                const Factor& x = n.terms[0].mono[0];
                if (x.exp != 1 || x.atom->kind != AtomKind::symbol || n.constant < 0 || n.constant >= k.constant) continue;
                return std::tuple{x.atom->name, n.constant, k.constant};
            }
        return std::nullopt;
    });
}

/// d >= 0 for all sizes, proven by the ShapeEnv; failing that, with each `Mod(x + c, k)` and
/// `(x + c)//k` undone: x written k*q + r - c (q a size, r in [0, k - 1]) makes the residues
/// plain symbols, and `64*x*(x + 1 - Mod(x + 1, 2))` is `128*x*q`. Sound: the (q, r) cover every x.
inline bool proven_nonnegative(const SymInt& d) {
    try {
        ShapeEnv env = sizes_env({&d});
        if (env.statically_known_true(d >= 0)) return true;
        SymInt e = d;
        for (int round = 0; round < 4; ++round) {
            const auto atom = residue_atom(e);
            if (!atom) return false;
            const auto& [x, c, k] = *atom;
            const std::string q = "_q" + std::to_string(round), r = "_r" + std::to_string(round);
            if (env.has_symbol(q) || env.has_symbol(r)) return false;
            env.create_symbol(q, std::nullopt, ValueRange::size());
            env.create_symbol(r, std::nullopt, ValueRange::between(0, k - 1));
            e = env.simplify(e.subs({{x, SymInt(k) * SymInt::symbol(q) + SymInt::symbol(r) - SymInt(c)}}));
            if (env.statically_known_true(e >= 0)) return true;
        }
    } catch (const yobx::error&) {  // an undefined question (a division by a size that may be 0), too large an expansion
    }
    return false;
}

}  // namespace detail

/// The peak of step sums: the steps no other provably dominates, their Max; the kept steps'
/// indices in `kept`. The sums are first compared at a few sizes: where a <= b fails at one of
/// them, or a has a symbol b lacks, no proof is tried. A step is proven below at most `max_tries`
/// of the kept steps above it at those sizes, the nearest first; a difference of more than
/// `max_terms` terms is not tried, and the proofs together go through at most `budget` terms:
/// past them a step is kept unproven (the Max longer, its value the same), so that a graph of
/// thousands of steps with as many data-dependent sizes is planned in seconds.
inline MaxOf peak_of(const std::vector<SymInt>& sums, std::vector<std::size_t>* kept = nullptr, std::size_t max_tries = 4,
                     std::size_t max_terms = 64, std::size_t budget = 50000) {
    std::vector<const SymInt*> all;
    for (const auto& s : sums) all.push_back(&s);
    const ShapeEnv env = detail::sizes_env(all);
    // each symbol at 1, at 2, and at small and large sizes that differ between symbols, in two orders
    std::vector<std::string> names;
    for (const SymInt* e : all)
        for (auto& n : e->free_symbols()) names.push_back(std::move(n));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::vector<SymbolValues> samples(6);
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::size_t j = names.size() - 1 - i;
        samples[0][names[i]] = 1;
        samples[1][names[i]] = 2;
        samples[2][names[i]] = 3 + static_cast<std::int64_t>((i * 7) % 29);
        samples[3][names[i]] = 1000 + static_cast<std::int64_t>((i * 37) % 997);
        samples[4][names[i]] = 3 + static_cast<std::int64_t>((j * 11) % 31);
        samples[5][names[i]] = 1000 + static_cast<std::int64_t>((j * 53) % 991);
    }
    std::vector<std::vector<std::optional<std::int64_t>>> at(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i)
        for (const auto& sample : samples) {
            std::optional<std::int64_t> v;
            try {
                v = sums[i].evaluate_with(sample);
            } catch (const yobx::error&) {  // a division by a size that is 0 there, an overflow
            }
            at[i].push_back(v);
        }
    // a sum with a symbol the other lacks (a data-dependent size of its own) is not proven below it:
    // as that size grows, it does too; the proof is not tried
    std::vector<std::vector<std::string>> symbols(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) symbols[i] = sums[i].free_symbols();
    const auto below_at_samples = [&](std::size_t a, std::size_t b) {
        for (std::size_t k = 0; k < samples.size(); ++k)
            if (at[a][k] && at[b][k] && *at[a][k] > *at[b][k]) return false;
        return std::includes(symbols[b].begin(), symbols[b].end(), symbols[a].begin(), symbols[a].end(), yobx::detail::sym::NameLess{});
    };
    const auto proven = [&](std::size_t a, std::size_t b) {
        if (sums[a].identical(sums[b])) return true;
        if (budget == 0) return false;
        const SymInt d = sums[b] - sums[a];
        const std::size_t terms = d.with_poly([](const yobx::detail::sym::Poly& p) { return p.terms.size(); });
        if (terms > max_terms) return false;
        budget -= std::min(budget, terms + 1);
        return detail::proven_nonnegative(d);
    };
    std::vector<std::size_t> keep, above;
    for (std::size_t i = 0; i < sums.size(); ++i) {
        // the kept steps above this one at every sample, the nearest first (sharing the most live values,
        // their difference is the shortest to prove)
        above.clear();
        for (std::size_t k : keep)
            if (below_at_samples(i, k)) above.push_back(k);
        std::sort(above.begin(), above.end(), std::greater<>());
        bool dominated = false;
        for (std::size_t n = 0; n < above.size() && n < max_tries && !dominated; ++n) dominated = proven(i, above[n]);
        if (dominated) continue;
        std::erase_if(keep, [&](std::size_t k) { return below_at_samples(k, i) && proven(k, i); });
        keep.push_back(i);
    }
    std::sort(keep.begin(), keep.end());
    // each argument simplified, then one Max
    std::vector<SymInt> args;
    for (std::size_t k : keep) args.push_back(env.simplify(sums[k]));
    if (kept) *kept = keep;
    return MaxOf(std::move(args));
}


}  // namespace yobx::onnx
