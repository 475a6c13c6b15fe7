// yobx/onnx/ops/rounding.hpp — an integer times or over a float constant, rounded back to an
// integer, as the runtimes compute it: the product or quotient in the tensor's float type, then
// Floor, Ceil or the truncation of a Cast to an integer type.
//
// Shape computations go through floats (`int(h * 0.5)`, `math.floor(h * scale)`, a Resize's
// scales). On a constant the float operation itself; on a symbolic size n >= 0, `(n*p)//q` with
// p/q the simplest fraction that gives the same integer at every n up to 2^16 (0.7f stands for
// 7/10: 20 * 0.7f rounds to 14 where the float's exact value gives 13.99...). Past 2^16 the two
// may differ by one, where the float product rounds onto an integer.
#pragma once

#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/ops/common.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx::onnx::ops {

/// How a float becomes an integer: Floor, Ceil, or a Cast to an integer type (toward zero).
enum class Rounding { floor, ceil, trunc };

namespace detail {

/// n * c (or n / c) computed in T (float or double) as the runtimes do, then rounded.
template <class T>
double float_rounded(std::int64_t n, T c, bool divide, Rounding r) {
    const T x = static_cast<T>(n);
    const T y = divide ? x / c : x * c;  // rounded to T
    const auto v = static_cast<double>(y);
    return r == Rounding::floor ? std::floor(v) : r == Rounding::ceil ? std::ceil(v) : std::trunc(v);
}

/// p/q with floor(n*p/q) (ceil for Rounding::ceil) equal to float_rounded(n, c, divide, r) at every n up to 2^16.
struct ScaleFraction {
    std::int64_t p = 0, q = 1;
};

/// The first convergent of c's continued fraction (1/c's when dividing) that stands for the
/// float operation at every n up to 2^16, for c finite and > 0; none when no convergent does.
/// Checked once per (c, operation, rounding) in the process (the last 4,096 kept).
template <class T>
std::optional<ScaleFraction> rounding_fraction(T c, bool divide, Rounding r) {
    static std::mutex mutex;
    static std::map<std::tuple<T, bool, Rounding>, std::optional<ScaleFraction>> known;
    const std::lock_guard lock(mutex);
    const auto key = std::make_tuple(c, divide, r);
    if (const auto it = known.find(key); it != known.end()) return it->second;
    constexpr int checked_bits = 16;
    constexpr int digits = std::numeric_limits<T>::digits;  // 24 or 53
    std::optional<ScaleFraction> found;
    // c is mantissa * 2^exponent exactly, the mantissa odd or the exponent >= 0
    int e = 0;
    const double m = std::frexp(static_cast<double>(c), &e);
    auto mantissa = static_cast<std::int64_t>(std::ldexp(m, digits));
    int exponent = e - digits;
    while (mantissa % 2 == 0 && exponent < 0) {
        mantissa /= 2;
        ++exponent;
    }
    if (exponent <= 62 - digits && exponent >= -62) {
        std::int64_t num = exponent >= 0 ? mantissa << exponent : mantissa, den = exponent >= 0 ? 1 : std::int64_t{1} << -exponent;
        if (divide) std::swap(num, den);
        const auto stands_for = [&](std::int64_t p, std::int64_t q) {
            if (p > (std::int64_t{1} << (62 - checked_bits))) return false;  // n*p within int64 at every n checked
            // floor(n*p/q) kept as quotient and remainder from one n to the next
            const std::int64_t whole = p / q, part = p % q;
            std::int64_t quotient = 0, remainder = 0;
            for (std::int64_t n = 1; n <= (std::int64_t{1} << checked_bits); ++n) {
                quotient += whole;
                remainder += part;
                if (remainder >= q) {
                    remainder -= q;
                    ++quotient;
                }
                const std::int64_t expected = r == Rounding::ceil && remainder != 0 ? quotient + 1 : quotient;
                if (float_rounded(n, c, divide, r) != static_cast<double>(expected)) return false;
            }
            return true;
        };
        // the convergents h/k of num/den, smallest denominators first
        std::int64_t h0 = 0, h1 = 1, k0 = 1, k1 = 0, a = num, b = den;
        while (b != 0 && !found) {
            const std::int64_t t = a / b, rest = a % b;
            const std::int64_t h = t * h1 + h0, k = t * k1 + k0;  // at most num and den: no overflow
            if (stands_for(h, k)) found = ScaleFraction{h, k};
            h0 = h1, h1 = h, k0 = k1, k1 = k, a = b, b = rest;
        }
    }
    if (known.size() >= 4096) known.clear();  // a process reading models of many constants keeps a bounded cache
    known.emplace(key, found);
    return found;
}

/// rounded(), in T; `dim`: n is a dimension, >= 0 in every valid graph (Resize's scales), not
/// asked of the ShapeEnv.
template <class T>
std::optional<SymInt> rounded_as(NodeContext& ctx, const SymInt& n, T c, bool divide, Rounding r, bool dim = false) {
    if (!std::isfinite(c) || (divide && c == 0)) return std::nullopt;
    if (const auto k = n.maybe_constant()) {
        const double v = float_rounded(*k, c, divide, r);
        if (!fits_int64(v)) return std::nullopt;
        return SymInt(static_cast<std::int64_t>(v));
    }
    if (c == 0) return SymInt(0);
    if (!dim && !ctx.env().statically_known_true(n >= 0)) return std::nullopt;  // the fractions are checked on n >= 0
    if (c < 0) {  // -(n * |c|) rounds as n * |c| does, mirrored: floor(-x) = -ceil(x), trunc(-x) = -floor(x) for x >= 0
        const Rounding mirrored = r == Rounding::ceil ? Rounding::floor : r == Rounding::floor ? Rounding::ceil : Rounding::floor;
        const auto v = rounded_as(ctx, n, -c, divide, mirrored, dim);
        if (!v) return std::nullopt;
        return ctx.simplify(-*v);
    }
    const auto f = rounding_fraction(c, divide, r == Rounding::trunc ? Rounding::floor : r);
    if (!f) return std::nullopt;
    const SymInt scaled = n * f->p;
    if (f->q == 1) return ctx.simplify(scaled);
    return ctx.simplify(r == Rounding::ceil ? ceil_div(scaled, SymInt(f->q)) : floordiv(scaled, SymInt(f->q)));
}

}  // namespace detail

/// round(n * c), or round(n / c) with `divide`, computed in `elem_type` (float32 or float64)
/// as the runtimes compute it, for an integer n the type holds exactly: a constant n exactly,
/// a symbolic n >= 0 as `(n*p)//q` (module comment). None for another type, a c that is not
/// finite, a division by 0, a symbolic n not known to be >= 0, or no fraction.
///
///   rounded(ctx, elem::float32, h, 0.5, false, Rounding::floor)   // h//2
inline std::optional<SymInt> rounded(NodeContext& ctx, int elem_type, const SymInt& n, double c, bool divide, Rounding r) {
    try {
        if (elem_type == elem::float32) return detail::rounded_as(ctx, n, static_cast<float>(c), divide, r);
        if (elem_type == elem::float64) return detail::rounded_as(ctx, n, c, divide, r);
    } catch (const value_error&) {
        // n*p overflows int64: no value
    }
    return std::nullopt;
}

/// The values a Floor, Ceil or Cast to an integer type gives a scaled float; none when one is not known.
inline std::optional<std::vector<SymInt>> rounded(NodeContext& ctx, int elem_type, const ScaledValues& s, Rounding r) {
    if (s.factors.size() != s.values.size()) return std::nullopt;
    std::vector<SymInt> out;
    out.reserve(s.values.size());
    for (std::size_t i = 0; i < s.values.size(); ++i) {
        auto v = rounded(ctx, elem_type, s.values[i], s.factors[i], s.divide, r);
        if (!v) return std::nullopt;
        out.push_back(std::move(*v));
    }
    return out;
}

}  // namespace yobx::onnx::ops
