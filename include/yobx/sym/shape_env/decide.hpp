// yobx/sym/shape_env/decide.hpp — deciding a condition from what the
// ShapeEnv knows: a relation d <= 0, d == 0 or d != 0 is decided by d's range
// (decide_constant), by a recorded fact with the same or the opposite terms
// (same_terms: after check(s0 >= s1 + 1), s1 - s0 + 3 <= 2 is true), or stays
// open (nullopt), which a guard then turns into an error (strict) or a
// recorded assumption (draft); And/Or combine their arguments' answers.
#pragma once

#include <yobx/sym/shape_env/env.hpp>

namespace yobx {

/// 1 if d has the same terms as f, -1 if the opposite terms, 0 otherwise.
template <class>
auto ShapeEnv::same_terms(const Poly& d, const Poly& f) -> int {
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

inline auto ShapeEnv::decide_constant(BoolKind kind, std::int64_t lo, std::int64_t hi) -> std::optional<bool> {
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

template <class>
auto ShapeEnv::decide_relation(BoolKind kind, const Poly& d) const -> std::optional<bool> {
    if (d.is_constant()) return decide_constant(kind, d.constant, d.constant);
    const ValueRange r = bound_of(d, kind);
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

template <class>
auto ShapeEnv::decide(const Cond& c) const -> std::optional<bool> {
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

}  // namespace yobx
