// yobx/observer/relations.hpp — exact relations between dynamic dimensions.
//
// The Python observer only groups dimensions whose observed sizes are equal.
// An LLM's attention mask is longer than its input ids by the cache length:
// total_sequence_length = past_sequence_length + sequence_length. Given each
// labelled dimension's sizes across the observed calls, find_relations finds
// such relations (d = a + b, d = a + c, d = k*a, d = a//k) and says how well
// the observations support each one. See docs/export_specs.md for the rule.
#pragma once

#include <algorithm>
#include <cstddef>
#include <climits>
#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

/// The sizes one labelled dimension took across the observed calls (nullopt
/// where a call says nothing about it). imputed[c] marks a size that was not
/// observed but assumed (an absent cache holds 0 tokens): it can refute a
/// relation, never support one.
struct DimSeries {
    std::string label;
    std::vector<std::optional<std::int64_t>> values;
    std::vector<bool> imputed = {};  // empty: nothing imputed
    template <class = void>
    bool is_imputed(std::size_t c) const { return c < imputed.size() && imputed[c]; }
    friend bool operator==(const DimSeries&, const DimSeries&) = default;
};

/// d = base + constant (offset), d = constant*base (scale), d = base // constant
/// (floordiv), d = base + other (sum).
enum class RelationKind { offset, scale, floordiv, sum };

/// One relation between labelled dimensions, with the observations behind it.
struct DimRelation {
    RelationKind kind = RelationKind::offset;
    std::string dim{};
    std::string base{};
    std::string other{};          // the second term of a sum
    std::int64_t constant = 0;    // the offset, or the factor k of scale and floordiv
    std::size_t support = 0;      // distinct values (or pairs, for a sum) of the bases, over calls with nothing imputed
    std::size_t evidence = 0;     // support minus the constants fitted (one for offset, scale, floordiv)
    std::size_t fits = 1;         // the constants that fit every call (floordiv: k, k+1, ... may); a relation needs one

    /// Whether torch.export.Dim can express it (Dim + int, int*Dim).
    template <class = void>
    bool torch_expressible() const noexcept { return kind == RelationKind::offset || kind == RelationKind::scale; }
    /// The right-hand side: "past_sequence_length + sequence_length", "seq + 1", "seq - 1", "2*seq", "seq//2".
    template <class = void>
    std::string expression() const {
        switch (kind) {
            case RelationKind::offset:
                return base + (constant < 0 ? " - " : " + ") + std::to_string(constant < 0 ? -constant : constant);
            case RelationKind::scale: return std::to_string(constant) + "*" + base;
            case RelationKind::floordiv: return base + "//" + std::to_string(constant);
            case RelationKind::sum: return base + " + " + other;
        }
        return {};
    }
    /// "total_sequence_length = past_sequence_length + sequence_length".
    template <class = void>
    std::string to_string() const { return dim + " = " + expression(); }
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const DimRelation& r) { return os << r.to_string(); }
    friend bool operator==(const DimRelation&, const DimRelation&) = default;
};

/// min_evidence: how many observations a relation needs beyond those that
/// fix its constant. A relation holding in every call with less evidence
/// (but at least one) is a hint.
struct RelationOptions {
    std::size_t min_evidence = 2;
};

/// Relations reported, and weaker candidates (hints) a person may confirm.
struct Relations {
    std::vector<DimRelation> relations;
    std::vector<DimRelation> hints;
};

namespace detail {

// The calls where every series has a value.
template <class = void>
inline std::vector<std::size_t> common_calls(std::initializer_list<const DimSeries*> series) {
    std::size_t n = 0;
    for (const DimSeries* s : series) n = std::max(n, s->values.size());
    std::vector<std::size_t> out;
    for (std::size_t c = 0; c < n; ++c) {
        bool all = true;
        for (const DimSeries* s : series) all = all && c < s->values.size() && s->values[c].has_value();
        if (all) out.push_back(c);
    }
    return out;
}

template <class = void>
inline std::int64_t floor_div(std::int64_t a, std::int64_t k) {
    const std::int64_t q = a / k;
    return (a % k != 0 && ((a < 0) != (k < 0))) ? q - 1 : q;
}

// The one-base relations d = f(a) that hold on every call where both are known.
template <class = void>
inline std::vector<DimRelation> unary_candidates(const DimSeries& d, const DimSeries& a) {
    std::vector<DimRelation> out;
    const auto calls = common_calls({&d, &a});
    if (calls.empty()) return out;
    std::set<std::int64_t> distinct;
    for (std::size_t c : calls)
        if (!d.is_imputed(c) && !a.is_imputed(c)) distinct.insert(*a.values[c]);
    const auto val = [&](const DimSeries& s, std::size_t c) { return *s.values[c]; };
    const auto make = [&](RelationKind kind, std::int64_t k) {
        DimRelation r;
        r.kind = kind;
        r.dim = d.label;
        r.base = a.label;
        r.constant = k;
        r.support = distinct.size();
        r.evidence = r.support > 0 ? r.support - 1 : 0;
        out.push_back(std::move(r));
    };
    // Offset: d - a constant and positive (the other direction is a = d - c; equal sizes share a label already).
    const std::int64_t c0 = val(d, calls[0]) - val(a, calls[0]);
    if (c0 > 0 && std::all_of(calls.begin(), calls.end(), [&](std::size_t c) { return val(d, c) - val(a, c) == c0; }))
        make(RelationKind::offset, c0);
    // Scale: d = k*a with k >= 2, fixed by a call where a != 0.
    for (std::size_t c : calls) {
        if (val(a, c) == 0) continue;
        if (val(d, c) % val(a, c) != 0) break;
        const std::int64_t k = val(d, c) / val(a, c);
        if (k >= 2 && std::all_of(calls.begin(), calls.end(), [&](std::size_t x) { return val(d, x) == k * val(a, x); }))
            make(RelationKind::scale, k);
        break;
    }
    // Floor division: d = a // k with k >= 2 and not exact everywhere (an exact one is a = k*d). Every k
    // that fits is counted: resnet's batch 2, 3, 4 and heights 96, 160, 224 give batch = height//45,
    // and 46, 47, 48 fit as well; such a relation is a chance, at most a hint.
    // Each call bounds k: a // k == d  <=>  a / (d + 1) < k <= a / d (no upper bound when d is 0).
    {
        std::int64_t lo = 2, hi = INT64_MAX, top = 0;
        bool ok = true;
        for (std::size_t c : calls) {
            const std::int64_t ac = val(a, c), dc = val(d, c);
            if (ac < 0 || dc < 0 || ac == INT64_MAX) {  // (INT64_MAX: a bound of INT64_MAX + 1)
                ok = false;
                break;
            }
            lo = std::max(lo, dc == INT64_MAX ? 1 : ac / (dc + 1) + 1);
            if (dc > 0) hi = std::min(hi, ac / dc);
            top = std::max(top, ac);
        }
        hi = std::min(hi, top < INT64_MAX - 2 ? top + 2 : INT64_MAX);  // beyond the largest a every k gives 0: two are enough to say so
        std::optional<std::int64_t> first;
        std::size_t fits = 0;
        for (std::int64_t k = lo; ok && k <= hi && fits < 2; ++k) {
            if (std::all_of(calls.begin(), calls.end(), [&](std::size_t x) { return val(a, x) % k == 0; })) continue;
            if (!first) first = k;
            ++fits;
        }
        if (first) {
            make(RelationKind::floordiv, *first);
            out.back().fits = fits;
        }
    }
    return out;
}

// outer (d = f(a)) rewritten on inner (a = g(b)): d = f(g(b)) when one kind expresses it, on positive sizes:
// k1*(k2*b), (b + c2) + c1, (b//k2)//k1 = b//(k1*k2), (k2*b)//k1 = (k2/k1)*b or b//(k1/k2).
template <class = void>
inline std::optional<DimRelation> compose(const DimRelation& outer, const DimRelation& inner) {
    if (outer.kind == RelationKind::sum || inner.kind == RelationKind::sum) return std::nullopt;
    DimRelation r = outer;
    r.base = inner.base;
    r.support = std::min(outer.support, inner.support);
    r.evidence = std::min(outer.evidence, inner.evidence);
    const std::int64_t k1 = outer.constant, k2 = inner.constant;
    const auto product = [](std::int64_t x, std::int64_t y) -> std::optional<std::int64_t> {
        std::int64_t p = 0;
        if (__builtin_mul_overflow(x, y, &p)) return std::nullopt;
        return p;
    };
    if (outer.kind == inner.kind && (outer.kind == RelationKind::scale || outer.kind == RelationKind::floordiv)) {
        const auto p = product(k1, k2);
        if (!p) return std::nullopt;
        r.constant = *p;
        return r;
    }
    if (outer.kind == RelationKind::offset && inner.kind == RelationKind::offset) {
        if (__builtin_add_overflow(k1, k2, &r.constant)) return std::nullopt;
        return r;
    }
    if (outer.kind == RelationKind::floordiv && inner.kind == RelationKind::scale) {
        if (k2 % k1 == 0 && k2 / k1 >= 2) {
            r.kind = RelationKind::scale;
            r.constant = k2 / k1;
            return r;
        }
        if (k1 % k2 == 0 && k1 / k2 >= 2) {
            r.constant = k1 / k2;
            return r;
        }
    }
    return std::nullopt;
}

}  // namespace detail

/// The relations among the series that hold on every call where their terms
/// are known. A relation with at least `min_evidence` observations beyond
/// its fitted constant is reported, a weaker one is a hint. A dimension is
/// derived at most once, from dimensions that are not derived themselves;
/// offsets and scales (which torch.export can express) are preferred, then
/// sums, then floor divisions, then the order of the series. A sum's larger
/// term (by its largest observed size) comes first.
///   find_relations({{"seq", {5, 1, 1}}, {"past", {0, 5, 6}}, {"total", {5, 6, 7}}})
///     .relations[0].to_string() == "total = past + seq"
template <class = void>
inline Relations find_relations(const std::vector<DimSeries>& series, const RelationOptions& options = {}) {
    std::vector<DimRelation> candidates;
    for (std::size_t i = 0; i < series.size(); ++i) {
        for (std::size_t j = 0; j < series.size(); ++j)
            if (i != j)
                for (auto& r : detail::unary_candidates(series[i], series[j])) candidates.push_back(std::move(r));
        for (std::size_t j = 0; j < series.size(); ++j)
            for (std::size_t k = j + 1; k < series.size(); ++k) {
                if (j == i || k == i) continue;
                const DimSeries &d = series[i], &a = series[j], &b = series[k];
                const auto calls = detail::common_calls({&d, &a, &b});
                if (calls.empty()) continue;
                if (!std::all_of(calls.begin(), calls.end(),
                                 [&](std::size_t c) { return *d.values[c] == *a.values[c] + *b.values[c]; }))
                    continue;
                std::set<std::pair<std::int64_t, std::int64_t>> distinct;
                for (std::size_t c : calls)
                    if (!d.is_imputed(c) && !a.is_imputed(c) && !b.is_imputed(c)) distinct.emplace(*a.values[c], *b.values[c]);
                // The larger term first (the cache before the new tokens), ties in series order.
                const auto largest = [&](const DimSeries& x) {
                    std::int64_t m = 0;
                    for (std::size_t c : calls) m = std::max(m, *x.values[c]);
                    return m;
                };
                const bool swap = largest(b) > largest(a);
                DimRelation r;
                r.kind = RelationKind::sum;
                r.dim = d.label;
                r.base = swap ? b.label : a.label;
                r.other = swap ? a.label : b.label;
                r.support = distinct.size();
                r.evidence = r.support;
                candidates.push_back(std::move(r));
            }
    }
    const auto rank = [](RelationKind k) {
        switch (k) {
            case RelationKind::offset:
            case RelationKind::scale: return 0;
            case RelationKind::sum: return 1;
            case RelationKind::floordiv: return 2;
        }
        return 3;
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const DimRelation& x, const DimRelation& y) { return rank(x.kind) < rank(y.kind); });
    // A basis: each dimension derived at most once, from dimensions that are not derived. A relation
    // whose dimension is the base of relations already kept is kept when they can be rewritten on its
    // base (p2 = 2*p3 and p3 = 2*p4 become p2 = 4*p4, p3 = 2*p4), so that a chain is related whole.
    Relations out;
    std::set<std::string> derived;
    for (auto& r : candidates) {
        if (r.evidence < options.min_evidence || r.fits != 1) continue;
        const bool base_derived = derived.contains(r.base) || (!r.other.empty() && derived.contains(r.other));
        if (derived.contains(r.dim) || base_derived) continue;
        std::vector<DimRelation> kept = out.relations;
        bool ok = true;
        for (auto& k : kept) {
            if (k.base != r.dim && k.other != r.dim) continue;
            const auto composed = detail::compose(k, r);
            if (!composed) {
                ok = false;
                break;
            }
            k = *composed;
        }
        if (!ok) continue;
        out.relations = std::move(kept);
        derived.insert(r.dim);
        out.relations.push_back(r);
    }
    // Hints: what holds but lacks evidence or a unique constant, about a dimension no relation derives.
    for (auto& r : candidates)
        if (r.evidence >= 1 && (r.evidence < options.min_evidence || r.fits != 1) && !derived.contains(r.dim))
            out.hints.push_back(r);
    return out;
}

}  // namespace yobx
