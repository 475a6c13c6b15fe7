// yobx/observer/discrepancy.hpp — comparing a replayed call's outputs with the recorded ones.
//
// check_discrepancies (observer.hpp) and check_fills (observer/fill_check.hpp)
// compare tensors the same way, as the seed does: max absolute difference and
// max |expected - got| / (|expected| + rtol), both within tolerance.
#pragma once

#include <yobx/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <string>
#include <vector>

namespace yobx {

/// A tensor type whose traits can give its elements as doubles (needed by check_discrepancies):
///   static std::vector<double> to_doubles(const T&);
template <class T>
concept TensorWithValues = Tensor<T> && requires(const T& t) {
    { tensor_traits<T>::to_doubles(t) } -> std::convertible_to<std::vector<double>>;
};

/// The comparison of one output of one call.
struct OutputDiscrepancy {
    double abs = 0;   // max |expected - got|
    double rel = 0;   // max |expected - got| / (|expected| + rtol), as the seed computes it
    bool success = true;
    std::string error;  // "not the same shape", "not the same type"; empty when compared
};

/// What check_discrepancies gives the runner for each recorded call.
enum class Replay {
    as_observed,  ///< the call as it was made: an absent argument stays absent (observed_arguments)
    inferred,     ///< infer_arguments(i): every tensor of the best candidate, absent ones filled
};

/// check_discrepancies' result for one recorded call.
struct Discrepancy {
    std::size_t index = 0;
    bool success = false;
    double abs = 0;  // max over the outputs
    double rel = 0;
    std::string error;  // the runner's exception, or "not the same number of outputs"
    std::vector<OutputDiscrepancy> outputs;
    double duration_recorded = 0;  // the observed call's latency (s)
    double duration_runner = 0;    // the runner's (s)
    std::size_t n_inputs = 0;      // tensors given to the runner
    std::size_t n_none = 0;        // of which absent in the recorded call
    std::size_t n_empty = 0;       // of which absent or with no element
    /// The arguments the runner got that the call did not pass (Replay::inferred: filled by
    /// value_if_missing or infer_arguments; always empty with Replay::as_observed).
    std::vector<std::string> filled;
};

namespace detail {

// A NaN where the other side has a number is an infinite difference (a NaN on both sides agrees).
template <class T>
OutputDiscrepancy compare_output(const T& expected, const T& got, double atol, double rtol) {
    OutputDiscrepancy o;
    if (shape_of(expected) != shape_of(got)) {
        o.success = false;
        o.error = "not the same shape";
        return o;
    }
    if (!(tensor_traits<T>::dtype(expected) == tensor_traits<T>::dtype(got))) {
        o.success = false;
        o.error = "not the same type";
        return o;
    }
    const std::vector<double> e = tensor_traits<T>::to_doubles(expected);
    const std::vector<double> g = tensor_traits<T>::to_doubles(got);
    for (std::size_t i = 0; i < e.size() && i < g.size(); ++i) {
        if (std::isnan(e[i]) && std::isnan(g[i])) continue;
        const double diff = std::isnan(e[i]) || std::isnan(g[i]) ? HUGE_VAL : std::abs(e[i] - g[i]);
        o.abs = std::max(o.abs, diff);
        o.rel = std::max(o.rel, diff / (std::isnan(e[i]) ? 1.0 : std::abs(e[i]) + rtol));
    }
    o.success = o.abs <= atol && o.rel <= rtol;
    return o;
}

}  // namespace detail

}  // namespace yobx
