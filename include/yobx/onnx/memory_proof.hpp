// yobx/onnx/memory_proof.hpp — proofs that a difference of step sums is at least 0 wherever a
// ShapeEnv's facts hold (the memory's domain): the ShapeEnv's own, a relaxation (each atom in
// its range, shifted to its smallest value, the product expanded: no negative coefficient may
// be left), each tried again with the floors and remainders of one symbol undone at once
// (`x = K*q + r - c`); and that one sum is below the Max of others region by region (an input
// dim split, the sizes below it substituted), no proof tried where a size already seen refutes
// it. Sound, never from samples; peak_of (memory_peak.hpp) drops a step only on one of these.
//
//   ShapeEnv env;  // b, h, w created from 1: env.create_symbol("h", std::nullopt, ValueRange::at_least(1))
//   proven_nonnegative(b * h * w * 128 - (b * h * w * 64 + b * h * 32), env);             // true: 32*b*h*(2*w - 1)
//   proven_nonnegative(floordiv(h + 1, SymInt(2)) - floordiv(h + 3, SymInt(4)), env);  // true
#pragma once

#include <yobx/error.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yobx::onnx::detail {

/// A ShapeEnv whose symbols are those of `exprs`, each a size ([0, oo]).
inline ShapeEnv sizes_env(const std::vector<const SymInt*>& exprs) {
    ShapeEnv env;
    for (const SymInt* e : exprs)
        for (const auto& s : e->free_symbols())
            if (!env.has_symbol(s)) env.create_symbol(s, std::nullopt, ValueRange::size());
    return env;
}

/// The residues of one symbol in e to undo at once: x, the lcm K of the divisors of the Mod and
/// FloorDiv atoms of `x + c` (0 <= c < k) and the offset c to write x as K*q + r - c: K - 1 when
/// every atom is a ceiling (`(x + k - 1)//k`), 0 when every one is a floor, else the first's.
struct Residues {
    std::string x;
    std::int64_t k = 0, c = 0;
};
inline std::optional<Residues> residues_of(const SymInt& e) {
    using namespace yobx::detail::sym;
    return e.with_poly([](const Poly& p) -> std::optional<Residues> {
        std::optional<Residues> out;
        bool ceilings = true, floors = true;
        std::int64_t first_c = 0;
        const auto visit = [&](const Atom& a) {
            if (a.kind != AtomKind::mod && a.kind != AtomKind::floordiv) return;
            const Poly& n = a.args[0];
            const Poly& k = a.args[1];
            if (!k.is_constant() || k.constant < 2 || n.terms.size() != 1 || n.terms[0].coef != 1 || n.terms[0].mono.size() != 1) return;
            const Factor& x = n.terms[0].mono[0];
            if (x.exp != 1 || x.atom->kind != AtomKind::symbol || n.constant < 0 || n.constant >= k.constant) return;
            if (!out) {
                out = Residues{x.atom->name, k.constant, 0};
                first_c = n.constant;
            } else if (out->x != x.atom->name) {
                return;
            } else {
                const std::int64_t l = std::lcm(out->k, k.constant);
                if (l > 4096) return;
                out->k = l;
            }
            ceilings = ceilings && n.constant == k.constant - 1;
            floors = floors && n.constant == 0;
        };
        for (const Term& t : p.terms)
            for (const Factor& f : t.mono) visit(*f.atom);
        if (out) out->c = ceilings ? out->k - 1 : floors ? 0 : first_c;
        return out;
    });
}

/// e >= 0 wherever each of its atoms (a symbol, a Mod, a quotient, a Max) lies in the range
/// `env` gives it, taken as independent variables: each shifted to its lower bound, the product
/// expanded, a term holding a bounded variable dropped when positive and bounded by the
/// variable's largest value when negative; what is left must have no negative coefficient.
/// Sound (a relaxation), exact on `a*x*y + ... <= c*x*y` forms once the floors are undone.
inline bool relaxed_nonnegative(const SymInt& e, const ShapeEnv& env, std::size_t max_terms = 4096) {
    using namespace yobx::detail::sym;
    struct Var {
        std::int64_t lo, span;  // span < 0: unbounded
    };
    std::vector<Var> vars;
    std::map<std::string, std::size_t> index;
    using Mono = std::vector<std::pair<std::size_t, std::int64_t>>;  // (var, exp), sorted
    std::map<Mono, std::int64_t> poly;
    bool ok = true;  // false: an atom without a lower bound, a coefficient past int64, too many terms
    const auto mul = [&](std::int64_t x, std::int64_t y) {
        std::int64_t r = 0;
        ok = ok && !__builtin_mul_overflow(x, y, &r);
        return r;
    };
    const auto var_of = [&](const AtomPtr& a) -> std::optional<std::size_t> {
        Poly one;
        Term t;
        t.coef = 1;
        t.mono.push_back(Factor{a, 1});
        one.terms.push_back(std::move(t));
        const SymInt atom(std::move(one));
        const std::string key = atom.to_string();
        if (const auto it = index.find(key); it != index.end()) return it->second;
        const ValueRange r = a->kind == AtomKind::symbol && env.has_symbol(a->name) ? env.range(a->name) : env.bound(atom);
        std::int64_t span = -1;
        if (r.lower == ValueRange::neg_inf || (r.upper != ValueRange::inf && __builtin_sub_overflow(r.upper, r.lower, &span))) return std::nullopt;
        vars.push_back({r.lower, span});
        index.emplace(key, vars.size() - 1);
        return vars.size() - 1;
    };
    const auto add = [&](std::map<Mono, std::int64_t>& to, const Mono& m, std::int64_t c) {
        std::int64_t& v = to[m];
        ok = ok && !__builtin_add_overflow(v, c, &v);
    };
    e.with_poly([&](const Poly& p) {
        add(poly, {}, p.constant);
        for (const Term& t : p.terms) {
            // coef * prod (lo + v)^exp, expanded: (lo + v)^e = sum_j C(e, j) lo^(e - j) v^j
            std::vector<std::pair<Mono, std::int64_t>> parts{{{}, t.coef}};
            for (const Factor& f : t.mono) {
                const auto v = var_of(f.atom);
                if (!v || f.exp > 8) {
                    ok = false;
                    return 0;
                }
                std::vector<std::int64_t> coefs(static_cast<std::size_t>(f.exp) + 1);
                std::int64_t binom = 1, lo_pow = 1;
                for (std::int64_t j = f.exp; j >= 0; --j) {
                    coefs[static_cast<std::size_t>(j)] = mul(binom, lo_pow);
                    binom = binom * j / (f.exp - j + 1);
                    lo_pow = mul(lo_pow, vars[*v].lo);
                }
                std::vector<std::pair<Mono, std::int64_t>> next;
                for (const auto& [m, c] : parts)
                    for (std::int64_t j = 0; j <= f.exp; ++j) {
                        if (coefs[static_cast<std::size_t>(j)] == 0) continue;
                        Mono mm = m;
                        if (j) mm.emplace_back(*v, j);
                        std::sort(mm.begin(), mm.end());
                        next.emplace_back(std::move(mm), mul(c, coefs[static_cast<std::size_t>(j)]));
                    }
                parts.swap(next);
                if (!ok || parts.size() > max_terms) {
                    ok = false;
                    return 0;
                }
            }
            for (const auto& [m, c] : parts) add(poly, m, c);
            if (!ok || poly.size() > max_terms) {
                ok = false;
                return 0;
            }
        }
        return 0;
    });
    if (!ok) return false;
    std::map<Mono, std::int64_t> rest;  // over the unbounded variables only
    for (const auto& [m, c] : poly) {
        if (c == 0) continue;
        Mono reduced;
        std::int64_t bound = 1;
        bool bounded = false;
        for (const auto& [v, exp] : m) {
            if (vars[v].span < 0) {
                reduced.emplace_back(v, exp);
                continue;
            }
            bounded = true;
            for (std::int64_t j = 0; j < exp; ++j) bound = mul(bound, vars[v].span);
        }
        if (bounded && c > 0) continue;  // at least 0
        add(rest, reduced, mul(c, bound));
        if (!ok) return false;
    }
    return std::all_of(rest.begin(), rest.end(), [](const auto& mc) { return mc.second >= 0; });
}

/// d >= 0 wherever `base`'s facts hold, proven by it or by relaxed_nonnegative; failing that,
/// with the Mod and FloorDiv atoms of one symbol undone at once: x written K*q + r - c (q from
/// its smallest value under x's range, r in [0, K - 1]) turns `(x + c')//k` into a multiple of q
/// plus a bounded quotient of r, and `64*x*(x + 1 - Mod(x + 1, 2))` into `128*x*q`. Sound: the
/// (q, r) cover every x of its range (other facts on x are not carried over).
inline bool proven_nonnegative(const SymInt& d, const ShapeEnv& base) {
    try {
        if (base.statically_known_true(d >= 0) || relaxed_nonnegative(d, base)) return true;
        ShapeEnv env = base;
        SymInt e = d;
        for (int round = 0; round < 4; ++round) {
            const auto atom = residues_of(e);
            if (!atom) return false;
            const auto& [x, k, c] = *atom;
            const std::string q = "_q" + std::to_string(round), r = "_r" + std::to_string(round);
            if (env.has_symbol(q) || env.has_symbol(r) || !env.has_symbol(x)) return false;
            const std::int64_t lo = env.range(x).lower;  // x >= lo: q >= ceil((lo + c - (k - 1))/k)
            const std::int64_t q_lo = lo > 0 && lo + c >= k - 1 ? (lo + c) / k : 0;
            env.create_symbol(q, std::nullopt, ValueRange::at_least(q_lo));
            env.create_symbol(r, std::nullopt, ValueRange::between(0, k - 1));
            e = env.simplify(e.subs({{x, SymInt(k) * SymInt::symbol(q) + SymInt::symbol(r) - SymInt(c)}}));
            if (env.statically_known_true(e >= 0) || relaxed_nonnegative(e, env)) return true;
        }
    } catch (const yobx::error&) {  // an undefined question (a division by a size that may be 0), too large an expansion
    }
    return false;
}

/// d >= 0 for all sizes ([0, oo]).
inline bool proven_nonnegative(const SymInt& d) { return proven_nonnegative(d, sizes_env({&d})); }

/// The sizes peak_of saw, to rule a proof out before it is tried: x - a >= 0 holds on no region
/// that holds a size where a was seen above x. `values[p][k]`: step k at `at[p]`; `a` the step
/// placed below, `xs` the steps above it (below_max_by_regions's, in its order).
struct SeenSizes {
    const std::vector<std::vector<std::optional<std::int64_t>>>* values = nullptr;
    const std::vector<const SymbolValues*>* at = nullptr;
    std::size_t a = 0;
    std::vector<std::size_t> xs;
};

/// A region of sizes: per symbol, its smallest and largest.
using Region = std::map<std::string, std::pair<std::int64_t, std::int64_t>, std::less<>>;

/// Whether a size seen in `region` has step a above xs[j].
inline bool refuted(const SeenSizes& seen, const Region& region, std::size_t j) {
    const std::size_t x = seen.xs[j];
    for (std::size_t p = 0; p < seen.values->size(); ++p) {
        const auto& v = (*seen.values)[p];
        if (!v[seen.a] || !v[x] || *v[seen.a] <= *v[x]) continue;
        const SymbolValues& sizes = *(*seen.at)[p];
        const bool inside = std::all_of(region.begin(), region.end(), [&](const auto& r) {
            const auto it = sizes.find(r.first);
            return it == sizes.end() || (it->second >= r.second.first && it->second <= r.second.second);
        });
        if (inside) return true;
    }
    return false;
}

/// a <= Max(xs) wherever `env`'s facts hold: below one of them, or, `depth` times at most, with
/// an input dim s of `axes` split at its smallest size lo + t (t = 2, 4, 8): s >= lo + t by a
/// narrower env, each s below it substituted. `work`: the proofs left (each try takes one);
/// `seen`: sizes that rule proofs out (none tried where a size of `region` has a above x).
inline bool below_max_by_regions(const SymInt& a, const std::vector<const SymInt*>& xs, const ShapeEnv& env,
                                 const std::vector<std::string>& axes, int depth, std::size_t& work,
                                 const SeenSizes* seen = nullptr, const Region& region = {}) {
    for (std::size_t j = 0; j < xs.size(); ++j) {
        if (work == 0) return false;
        if (seen && refuted(*seen, region, j)) continue;
        --work;
        if (detail::proven_nonnegative(*xs[j] - a, env)) return true;
    }
    if (depth == 0) return false;
    const auto held = a.free_symbols();
    for (const auto& s : axes) {
        if (!std::binary_search(held.begin(), held.end(), s, yobx::detail::sym::NameLess{}) || !env.has_symbol(s)) continue;
        const std::int64_t lo = env.range(s).lower;
        const auto bounds = region.count(s) ? region.at(s) : std::pair{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
        for (const std::int64_t t : {std::int64_t{2}, std::int64_t{4}, std::int64_t{8}}) {
            if (work == 0) return false;
            ShapeEnv up = env;
            try {
                up.check(SymInt::symbol(s) >= SymInt(lo + t));
            } catch (const yobx::error&) {
                continue;
            }
            Region above = region;
            above[s] = {std::max(bounds.first, lo + t), bounds.second};
            if (!below_max_by_regions(a, xs, up, axes, depth - 1, work, seen, above)) continue;
            bool all = true;
            for (std::int64_t v = lo; v < lo + t && all; ++v) {
                const std::map<std::string, SymInt, std::less<>> at{{s, SymInt(v)}};
                std::vector<SymInt> fixed;
                for (const SymInt* x : xs) fixed.push_back(x->subs(at));
                std::vector<const SymInt*> ptrs;
                for (const auto& f : fixed) ptrs.push_back(&f);
                Region here = region;
                here[s] = {v, v};
                all = below_max_by_regions(a.subs(at), ptrs, env, axes, depth - 1, work, seen, here);
            }
            if (all) return true;
        }
    }
    return false;
}

}  // namespace yobx::onnx::detail
