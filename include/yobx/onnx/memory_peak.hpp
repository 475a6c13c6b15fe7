// yobx/onnx/memory_peak.hpp — the peak of a graph's step sums over the domain the model runs
// in (memory_domain.hpp): the steps that can each be the largest there, and their Max.
//
// A step is kept when it has a witness, sizes of the domain where it alone is the largest
// (looked for at sizes along each dim, on a grid, mixed, and by a local search); a step without
// one is dropped only when proven (memory_proof.hpp) below another or below a mean of two under
// the domain's facts, within a budget; any other stays, unresolved. What is left is a Max, one
// SymInt when it is short (MaxOf).
//
//   std::vector<std::size_t> kept;
//   MaxOf peak = peak_of({n * 8 + 1, n * 4, n * n}, &kept);  // Max(n**2, 8*n + 1): kept {0, 2}
#pragma once

#include <yobx/error.hpp>
#include <yobx/onnx/memory_domain.hpp>
#include <yobx/onnx/memory_proof.hpp>
#include <yobx/onnx/memory_steps.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
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

/// A step that is the peak once every size is at least `from`: `step` indexes the kept steps.
struct LargePeak {
    std::size_t step = 0;
    std::int64_t from = 0;
};

/// What peak_of found beside the Max.
struct PeakSteps {
    std::vector<std::size_t> kept;  ///< the steps of the Max, in order
    /// Per kept step: sizes of the domain where it alone is the largest; nullopt: neither
    /// witnessed nor proven dominated (unresolved).
    std::vector<std::optional<SymbolValues>> witness;
    std::size_t unresolved = 0;
    /// The step proven the peak once every size is at least `from` (the sole largest as every
    /// size grows alike, and a proof it is above each other kept step).
    std::optional<LargePeak> large;
    std::map<std::string, std::int64_t, std::less<>> smallest;  ///< each symbol's smallest size in the domain
};

namespace detail {

/// The index of the one largest of `values` among `among`, if one is strictly the largest and
/// every value is defined.
inline std::optional<std::size_t> sole_largest(const std::vector<std::optional<std::int64_t>>& values, const std::vector<std::size_t>& among) {
    std::optional<std::size_t> best;
    bool tie = false;
    for (std::size_t i : among) {
        if (!values[i]) return std::nullopt;
        if (!best || *values[i] > *values[*best]) {
            best = i;
            tie = false;
        } else if (*values[i] == *values[*best]) {
            tie = true;
        }
    }
    return tie ? std::nullopt : best;
}

}  // namespace detail

/// The peak of step sums over `domain`: the Max of the steps that can each be the largest
/// there. Each kept step has a witness (sizes of the domain where it alone is the largest) or is
/// listed unresolved; a step without a witness is dropped only when proven below another under
/// the domain's facts (`64*b*h*w + 32*b*h <= 128*b*h*w` for sizes at least 1, `x//10 <= x//5`,
/// `(h + 3)//4 <= (h + 1)//2`), never from samples. Witnesses are looked for at sizes of the
/// domain: every symbol at its smallest size and above, along each input dim, two by two, at
/// pseudo-random mixes, on a grid of the input dims as fine as `evaluations` (of a part at a
/// size) allow, and each other symbol (a data-dependent size) alone large; a step not witnessed
/// there is searched for from where it comes closest to the largest. A proof is
/// tried against at most `max_tries` steps above at every size tried (the nearest first), on
/// differences of at most `max_terms` terms, `budget` terms in all: past them a step stays
/// unresolved (the Max longer, its value the same). `parts`: the sums as parts (faster).
inline MaxOf peak_of(const std::vector<SymInt>& sums, const MemoryDomain& domain, PeakSteps* out = nullptr,
                     const StepParts* parts = nullptr, std::size_t max_tries = 4, std::size_t max_terms = 64,
                     std::size_t budget = 20000, std::size_t evaluations = 400000) {
    using yobx::detail::sym::NameLess;
    const std::size_t n = sums.size();
    std::vector<std::string> names;
    for (const auto& e : sums)
        for (auto& s : e.free_symbols()) names.push_back(std::move(s));
    std::sort(names.begin(), names.end(), NameLess{});
    names.erase(std::unique(names.begin(), names.end()), names.end());
    const ShapeEnv env = domain.env(names);
    const auto open = domain.open_in(env);
    const detail::StepValues values(sums, parts);

    // the steps in the race: one of each set of identical sums
    std::vector<std::size_t> race;
    std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash;
    for (std::size_t i = 0; i < n; ++i) {
        auto& same = by_hash[sums[i].hash()];
        if (std::none_of(same.begin(), same.end(), [&](std::size_t k) { return sums[k].identical(sums[i]); })) {
            same.push_back(i);
            race.push_back(i);
        }
    }

    // sizes of the domain to look for witnesses at
    std::map<std::string, std::int64_t, std::less<>> lower;
    std::vector<std::string> axes, alone;  // input dims (all symbols when none is one), other symbols
    for (const auto& s : names) {
        lower[s] = env.range(s).lower;
        (domain.input_dims.count(s) ? axes : alone).push_back(s);
    }
    if (axes.empty() && alone.size() <= 8) axes.swap(alone);
    const auto at = [&](const std::string& s, std::int64_t offset) {
        std::int64_t v = 0;
        return __builtin_add_overflow(lower[s], offset, &v) || v > (std::int64_t{1} << 40) ? lower[s] : v;
    };
    static constexpr std::int64_t offsets[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 15, 17, 20, 24, 31, 32, 47, 63, 64, 100, 127, 128, 200, 255,
                                               256, 500, 511, 1000, 1023, 2047, 4095, 10000};
    static constexpr std::int64_t coarse[] = {0, 1, 3, 7, 15, 31, 100, 1000};
    SymbolValues base;
    for (const auto& s : names) base[s] = lower[s];
    std::vector<SymbolValues> points;
    const auto with = [&](SymbolValues p, const std::string& s, std::int64_t offset) {
        p[s] = at(s, offset);
        return p;
    };
    const bool large = values.size() > 2000;  // a large graph: fewer sizes (each costs a pass over it)
    for (const std::int64_t o : offsets) {  // every symbol alike
        if (large && std::find(std::begin(coarse), std::end(coarse), o) == std::end(coarse)) continue;
        SymbolValues p;
        for (const auto& s : names) p[s] = at(s, o);
        points.push_back(std::move(p));
    }
    for (const auto& s : axes)  // along one input dim, the others small, in between and large
        for (const std::int64_t others : {std::int64_t{0}, std::int64_t{31}, std::int64_t{1000}}) {
            SymbolValues rest;
            for (const auto& t : names) rest[t] = at(t, others);
            if (large)
                for (const std::int64_t o : coarse) points.push_back(with(rest, s, o));
            else
                for (const std::int64_t o : offsets) points.push_back(with(rest, s, o));
        }
    // a grid over the input dims, as fine as `evaluations` allows (the offsets by priority)
    static constexpr std::int64_t grid[] = {0, 1, 1000, 16, 2, 3, 7, 8, 15, 17, 31, 32, 4, 5, 63, 64, 100, 9, 127, 128, 255, 256};
    // (at most 1,000 sizes: each one also costs a check of the domain and a pass over the steps)
    const std::size_t budget_points = std::clamp<std::size_t>(evaluations / std::max<std::size_t>(1, values.size()), 64, 1000);
    std::size_t side = 0;
    for (std::size_t m = 2; m <= std::size(grid) && !axes.empty(); ++m) {
        double count = 1;
        for (std::size_t a = 0; a < axes.size(); ++a) count *= static_cast<double>(m);
        if (count > static_cast<double>(budget_points)) break;
        side = m;
    }
    if (side >= 2) {
        std::vector<std::size_t> digit(axes.size(), 0);
        for (;;) {
            SymbolValues p = base;
            for (std::size_t a = 0; a < axes.size(); ++a) p[axes[a]] = at(axes[a], grid[digit[a]]);
            points.push_back(std::move(p));
            std::size_t a = 0;
            while (a < axes.size() && ++digit[a] == side) digit[a++] = 0;
            if (a == axes.size()) break;
        }
    } else if (axes.size() <= 4) {  // two by two
        for (std::size_t a = 0; a < axes.size(); ++a)
            for (std::size_t b = a + 1; b < axes.size(); ++b)
                for (const std::int64_t oa : coarse)
                    for (const std::int64_t ob : coarse) points.push_back(with(with(base, axes[a], oa), axes[b], ob));
    }
    std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < (large ? 16 : 64); ++k) {  // mixes
        SymbolValues p;
        for (const auto& s : names) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            p[s] = at(s, offsets[(seed >> 33) % std::size(offsets)]);
        }
        points.push_back(std::move(p));
    }
    std::vector<std::optional<SymbolValues>> witness(n);
    std::vector<std::vector<std::optional<std::int64_t>>> seen;  // the sums at each point of the domain
    std::vector<const SymbolValues*> seen_at;
    // a symbol an equality of the domain replaced takes its value from the others
    const auto replaced = env.replacements();
    for (auto& p : points)
        for (const auto& [symbol, e] : replaced) {
            if (!p.count(symbol)) continue;
            try {
                p[symbol] = e.evaluate_with(p);
            } catch (const yobx::error&) {  // a symbol of e not among the sums': the point stays as it is
            }
        }
    for (const auto& p : points) {
        if (!domain.outside(p, open).empty()) continue;
        seen.push_back(values.at(p));
        seen_at.push_back(&p);
        if (const auto w = detail::sole_largest(seen.back(), race); w && !witness[*w]) witness[*w] = p;
    }
    // each other symbol alone large, from the smallest sizes (only the parts holding it evaluated)
    if (!alone.empty() && domain.outside(base, open).empty()) {
        const auto at_base = values.at(base);
        for (const auto& s : alone)
            for (const std::int64_t o : {std::int64_t{1000}, std::int64_t{1}}) {
                const SymbolValues p = with(base, s, o);
                if (!domain.outside(p, open).empty()) continue;
                const auto v = values.changed(at_base, base, p, s);
                if (const auto w = detail::sole_largest(v, race); w && !witness[*w]) witness[*w] = p;
            }
    }

    // a step not witnessed yet: a local search from the size where it comes closest to the
    // largest, along each input dim (+-1, +-8, twice, half) while it comes closer
    const auto margin = [&](const std::vector<std::optional<std::int64_t>>& v, std::size_t i) -> std::optional<std::int64_t> {
        std::optional<std::int64_t> other;
        for (std::size_t k : race) {
            if (!v[k]) return std::nullopt;
            if (k != i && (!other || *v[k] > *other)) other = v[k];
        }
        if (!v[i]) return std::nullopt;
        std::int64_t m = 0;
        if (!other) return std::int64_t{1};
        if (__builtin_sub_overflow(*v[i], *other, &m)) return std::nullopt;
        return m;
    };
    // per size seen, the largest and the second largest of the race (nullopt: some sum not defined there)
    struct Top {
        std::size_t first = 0;
        std::int64_t largest = 0, second = 0;
    };
    std::vector<std::optional<Top>> tops;
    for (const auto& v : seen) {
        std::optional<Top> t = Top{race.empty() ? 0 : race[0], std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::min()};
        for (std::size_t k : race) {
            if (!v[k]) {
                t.reset();
                break;
            }
            if (*v[k] > t->largest) {
                t->second = t->largest;
                t->largest = *v[k];
                t->first = k;
            } else if (*v[k] > t->second) {
                t->second = *v[k];
            }
        }
        tops.push_back(t);
    }
    std::size_t searches = std::clamp<std::size_t>(evaluations / std::max<std::size_t>(1, values.size()), 64, 1000);
    for (std::size_t i : race) {
        if (witness[i] || seen.empty() || axes.empty() || searches == 0) continue;
        std::optional<std::int64_t> m;
        std::size_t from = 0;
        for (std::size_t p = 0; p < seen.size(); ++p) {
            if (!tops[p]) continue;
            std::int64_t mp = 0;
            if (__builtin_sub_overflow(*seen[p][i], tops[p]->first == i ? tops[p]->second : tops[p]->largest, &mp)) continue;
            if (!m || mp > *m) {
                m = mp;
                from = p;
            }
        }
        if (!m) continue;
        SymbolValues p = *seen_at[from];
        for (int step = 0; step < 48 && searches > 0 && !witness[i]; ++step) {
            std::optional<SymbolValues> next;
            std::optional<std::int64_t> next_m;
            for (const auto& s : axes)
                for (int move = 0; move < 6 && searches > 0; ++move) {
                    const std::int64_t x = p[s];
                    std::int64_t y = move == 0 ? x + 1 : move == 1 ? x - 1 : move == 2 ? x + 8 : move == 3 ? x - 8 : move == 4 ? 2 * x : x / 2;
                    if (y < lower[s] || y > (std::int64_t{1} << 40) || y == x) continue;
                    SymbolValues q = p;
                    q[s] = y;
                    if (!domain.outside(q, open).empty()) continue;
                    --searches;
                    const auto v = values.at(q);
                    if (const auto w = detail::sole_largest(v, race); w && !witness[*w]) witness[*w] = q;
                    if (const auto mq = margin(v, i); mq && *mq > (next_m ? *next_m : *m)) {
                        next_m = mq;
                        next = std::move(q);
                    }
                }
            if (!next) break;
            p = std::move(*next);
            m = next_m;
        }
    }

    // the others: dropped where proven below a step in the race, else unresolved
    std::vector<std::vector<std::string>> symbols(n);
    for (std::size_t i : race) symbols[i] = sums[i].free_symbols();
    const auto below_where_seen = [&](std::size_t a, std::size_t b) {
        for (const auto& v : seen)
            if (v[a] && v[b] && *v[a] > *v[b]) return false;
        return std::includes(symbols[b].begin(), symbols[b].end(), symbols[a].begin(), symbols[a].end(), NameLess{});
    };
    const auto proven = [&](std::size_t a, std::size_t b) {
        if (budget == 0) return false;
        const SymInt d = sums[b] - sums[a];
        const std::size_t terms = d.with_poly([](const yobx::detail::sym::Poly& p) { return p.terms.size(); });
        if (terms > max_terms) return false;
        budget -= std::min(budget, terms + 1);
        return detail::proven_nonnegative(d, env);
    };
    std::vector<char> dropped(n, 0);
    std::vector<std::size_t> above;
    for (std::size_t i : race) {
        if (witness[i]) continue;
        // the candidates: the steps near it (sharing most live values) and those witnessed
        above.clear();
        for (std::size_t k : race)
            if (k != i && !dropped[k] && ((k > i ? k - i : i - k) <= 32 || witness[k]) && below_where_seen(i, k)) above.push_back(k);
        std::sort(above.begin(), above.end(), [&](std::size_t a, std::size_t b) {
            const auto da = a > i ? a - i : i - a, db = b > i ? b - i : i - b;
            return da != db ? da < db : a < b;
        });
        for (std::size_t t = 0; t < above.size() && t < max_tries && !dropped[i]; ++t) dropped[i] = proven(i, above[t]);
    }
    std::vector<std::size_t> keep;
    for (std::size_t i : race)
        if (!dropped[i]) keep.push_back(i);
    // a step that ties only with steps now dropped is alone the largest where they tied
    const auto witness_ties = [&] {
        for (std::size_t p = 0; p < seen.size(); ++p)
            if (const auto w = detail::sole_largest(seen[p], keep); w && !witness[*w]) witness[*w] = *seen_at[p];
    };
    witness_ties();
    // a step still without a witness, below the Max of two witnessed ones: proven below a mean of
    // theirs (w*B + (4 - w)*C >= 4*A for w = 2, 1 or 3, which is at most 4*Max(B, C))
    std::vector<std::size_t> witnessed;
    for (std::size_t i : keep)
        if (witness[i]) witnessed.push_back(i);
    bool pruned = false;
    for (std::size_t i : keep) {
        if (witness[i] || dropped[i] || witnessed.size() > 64) continue;  // pairs of at most 64
        std::size_t tries = 0;
        for (std::size_t x = 0; x < witnessed.size() && !dropped[i] && tries < 4 * max_tries; ++x)
            for (std::size_t y = x + 1; y < witnessed.size() && !dropped[i] && tries < 4 * max_tries; ++y) {
                const std::size_t b = witnessed[x], c = witnessed[y];
                std::vector<std::string> both;
                std::set_union(symbols[b].begin(), symbols[b].end(), symbols[c].begin(), symbols[c].end(), std::back_inserter(both), NameLess{});
                if (!std::includes(both.begin(), both.end(), symbols[i].begin(), symbols[i].end(), NameLess{})) continue;
                for (const std::int64_t w : {std::int64_t{2}, std::int64_t{1}, std::int64_t{3}}) {
                    bool below = true;  // at every size seen
                    for (const auto& v : seen) {
                        if (!v[i] || !v[b] || !v[c]) continue;
                        std::int64_t l = 0, r1 = 0, r2 = 0, r = 0;
                        if (__builtin_mul_overflow(*v[i], 4, &l) || __builtin_mul_overflow(*v[b], w, &r1) ||
                            __builtin_mul_overflow(*v[c], 4 - w, &r2) || __builtin_add_overflow(r1, r2, &r) || l > r) {
                            below = false;
                            break;
                        }
                    }
                    if (!below || budget == 0) continue;
                    ++tries;
                    const SymInt d = sums[b] * SymInt(w) + sums[c] * SymInt(4 - w) - sums[i] * SymInt(4);
                    const std::size_t terms = d.with_poly([](const yobx::detail::sym::Poly& p) { return p.terms.size(); });
                    if (terms > max_terms) continue;
                    budget -= std::min(budget, terms + 1);
                    if (detail::proven_nonnegative(d, env)) {
                        dropped[i] = 1;
                        pruned = true;
                        break;
                    }
                }
            }
    }
    // still without a witness: below the witnessed steps' Max region by region, an input dim
    // split at its smallest size + t (t = 2, 4, 8), each size below enumerated, one split, then
    // two, then three for the steps left (a graph with more than 64 such steps, or 16 witnessed,
    // is left as it is: the proofs multiply)
    std::size_t work = 1500;  // proofs in all, 600 at most for one step
    std::vector<const SymInt*> above_all;
    for (std::size_t k : witnessed) above_all.push_back(&sums[k]);
    const auto open_steps = std::count_if(keep.begin(), keep.end(), [&](std::size_t i) { return !witness[i] && !dropped[i]; });
    std::unordered_map<std::size_t, std::size_t> left;  // per step, the proofs it may still take
    for (int depth = 1; depth <= 3 && witnessed.size() <= 16 && open_steps <= 64; ++depth)
        for (std::size_t i : keep) {
            if (witness[i] || dropped[i] || work == 0) continue;
            const std::size_t before = std::min(work, left.try_emplace(i, 600).first->second);
            std::size_t mine = before;
            const detail::SeenSizes evidence{&seen, &seen_at, i, witnessed};
            if (detail::below_max_by_regions(sums[i], above_all, env, axes, depth, mine, &evidence)) {
                dropped[i] = 1;
                pruned = true;
            }
            work -= before - mine;
            left[i] -= before - mine;
        }
    if (pruned) {
        std::erase_if(keep, [&](std::size_t i) { return dropped[i] != 0; });
        witness_ties();
    }

    PeakSteps facts;
    facts.kept = keep;
    facts.smallest = lower;
    for (std::size_t i : keep) {
        facts.witness.push_back(witness[i]);
        facts.unresolved += !witness[i];
    }
    // the peak once every size is large: the sole largest as every symbol grows alike, and from
    // which size on it is proven so
    if (keep.size() > 1) {
        const auto diagonal_at = [&](std::int64_t t) {  // every size t, or its smallest when that is larger
            SymbolValues p;
            for (const auto& s : names) p[s] = std::max(lower[s], t);
            return p;
        };
        std::vector<std::pair<std::int64_t, std::optional<std::size_t>>> diagonal;
        for (std::int64_t t = 16; t <= (std::int64_t{1} << 24); t *= 4) {
            const SymbolValues p = diagonal_at(t);
            if (!domain.outside(p, open).empty()) continue;
            const auto v = values.at(p);
            if (std::any_of(keep.begin(), keep.end(), [&](std::size_t k) { return !v[k]; })) break;  // past int64
            diagonal.emplace_back(t, detail::sole_largest(v, keep));
        }
        if (!diagonal.empty() && diagonal.back().second) {
            const std::size_t a = *diagonal.back().second;
            std::size_t first = diagonal.size() - 1;
            while (first > 0 && diagonal[first - 1].second == a) --first;
            // the smallest size on the diagonal from which it is alone the largest (by bisection
            // below the first power tried), then the powers tried: the first one proven is said
            const auto sole_at = [&](std::int64_t t) {
                const SymbolValues p = diagonal_at(t);
                return domain.outside(p, open).empty() && detail::sole_largest(values.at(p), keep) == a;
            };
            std::int64_t lo = first > 0 ? diagonal[first - 1].first : 0, hi = diagonal[first].first;
            while (hi - lo > 1) {
                const std::int64_t m = lo + (hi - lo) / 2;
                (sole_at(m) ? hi : lo) = m;
            }
            std::vector<std::int64_t> froms{hi};
            for (std::int64_t t = diagonal[first].first; t <= diagonal.back().first; t *= 4) froms.push_back(t);
            for (const std::int64_t from : froms) {
                if (facts.large) break;
                MemoryDomain large = domain;
                for (const auto& s : names) large.minimum[s] = std::max(lower[s], from);
                try {
                    const ShapeEnv e = large.env(names);
                    bool all = true;
                    for (std::size_t k : keep)
                        if (k != a && !(all = detail::proven_nonnegative(sums[a] - sums[k], e))) break;
                    if (all) {
                        facts.large = LargePeak{static_cast<std::size_t>(std::find(keep.begin(), keep.end(), a) - keep.begin()), from};
                    }
                } catch (const yobx::error&) {
                }
            }
        }
    }
    // each argument simplified under the domain, then one Max
    std::vector<SymInt> args;
    for (std::size_t k : keep) args.push_back(env.simplify(sums[k]));
    if (out) *out = std::move(facts);
    return MaxOf(std::move(args));
}

/// The peak over sizes (every symbol at least 0), the kept steps' indices in `kept`.
inline MaxOf peak_of(const std::vector<SymInt>& sums, std::vector<std::size_t>* kept = nullptr) {
    PeakSteps facts;
    MaxOf m = peak_of(sums, MemoryDomain{}, &facts);
    if (kept) *kept = facts.kept;
    return m;
}

}  // namespace yobx::onnx
