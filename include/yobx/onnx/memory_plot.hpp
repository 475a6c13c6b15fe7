// yobx/onnx/memory_plot.hpp — a picture of a MemoryReport: peak activations, weights and their
// total as functions of one dim, an SVG file a browser shows, written here without a library.
//
// The curve is the peak expression evaluated at up to 264 sizes of the dim (the others at
// given values); where the step that dominates changes, a breakpoint is marked at the exact
// size (found by bisection between two sampled sizes). Each polyline carries its sizes and
// bytes (data-x, data-bytes), so what the picture claims can be checked against the expression.
//
//   std::string svg = memory_svg(report, "seq", 1, 4096, {{"batch", 8}});
#pragma once

#include <yobx/detail/utf8.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/memory.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// One sampled size of a plot: the dim's value, the peak there and the step that gives it.
struct PlotSample {
    std::int64_t x = 0, peak = 0;
    std::size_t step = 0;
    std::int64_t total = 0;  ///< peak and weights
};

/// The sizes sampled and the breakpoints: the first size at which the step that gave the peak
/// before no longer does, with the step that does from there.
struct PlotData {
    std::vector<PlotSample> samples;
    std::vector<PlotSample> breakpoints;
};

/// Samples the peak of `r` over `dim` in [lo, hi], the other symbols at `at`: every size of the
/// first 64, then 200 sizes evenly spread. A breakpoint is looked for by bisection between two
/// samples where the step at the peak changes; one that dominates only strictly between two
/// samples, both given by the same step, is not seen.
inline PlotData plot_data(const MemoryReport& r, const std::string& dim, std::int64_t lo, std::int64_t hi, const SymbolValues& at) {
    if (lo < 0 || hi < lo || hi >= (std::int64_t{1} << 62))
        throw value_error("memory plot: the range " + std::to_string(lo) + ":" + std::to_string(hi) + " of '" + dim +
                          "' must be sizes LO:HI with 0 <= LO <= HI < 2**62");
    const auto symbols = r.peak.free_symbols();
    if (std::find(symbols.begin(), symbols.end(), dim) == symbols.end()) {
        std::string all;
        for (const auto& s : symbols) all += (all.empty() ? "" : ", ") + s;
        throw value_error("memory plot: the peak does not depend on '" + dim + "' (its symbols: " + (all.empty() ? "none" : all) + ")");
    }
    SymbolValues sizes = at;
    sizes.insert_or_assign(dim, lo);
    if (const std::string why = r.domain.outside(sizes); !why.empty())
        throw value_error("memory plot: the range " + std::to_string(lo) + ":" + std::to_string(hi) + " of '" + dim +
                          "' starts outside the domain the peak is exact over: " + why);
    (void)r.evaluate(sizes, 0);  // a missing or misspelt size, said as evaluate says it
    const auto bytes = [&](const auto& e, std::int64_t x) {
        sizes.insert_or_assign(dim, x);
        return e.evaluate_with(sizes);
    };
    const auto reaches = [&](std::size_t step, std::int64_t x) { return bytes(r.step_sums[step], x) == bytes(r.peak, x); };
    // the step at the peak at x; among ties, the one largest at x + 1 (the one that goes on)
    const auto step_at = [&](std::int64_t x) {
        std::size_t best = r.peak_steps.front();
        bool found = false;
        for (std::size_t k : r.peak_steps)
            if (reaches(k, x) && (!found || bytes(r.step_sums[k], x + 1) > bytes(r.step_sums[best], x + 1))) {
                best = k;
                found = true;
            }
        return best;
    };
    const auto sample = [&](std::int64_t x, std::size_t step) {
        PlotSample p{x, bytes(r.peak, x), step, 0};
        if (__builtin_add_overflow(p.peak, r.weights.total, &p.total))
            throw value_error("memory plot: the total at " + dim + "=" + std::to_string(x) + " does not fit in int64");
        return p;
    };
    std::vector<std::int64_t> xs;
    for (std::int64_t x = lo; x <= hi && x - lo < 64; ++x) xs.push_back(x);
    constexpr std::int64_t spread = 200;
    const std::int64_t span = hi - lo;
    for (std::int64_t k = 0; k < spread; ++k)
        xs.push_back(lo + static_cast<std::int64_t>(std::llround(static_cast<double>(k) * static_cast<double>(span) / (spread - 1))));
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    PlotData d;
    std::size_t current = step_at(xs.front());
    std::int64_t from = xs.front();
    for (const std::int64_t x : xs) {
        while (!reaches(current, x)) {  // the step changed in (from, x]: the first size it no longer gives the peak
            std::int64_t a = from, b = x;
            while (b - a > 1) {
                const std::int64_t m = a + (b - a) / 2;
                (reaches(current, m) ? a : b) = m;
            }
            current = step_at(b);
            from = b;
            d.breakpoints.push_back(sample(b, current));
        }
        d.samples.push_back(sample(x, current));
        from = x;
    }
    return d;
}

/// The report at the sizes a caller gave (`r.at`), unless they are the other dims of a plot of
/// `plot_dim` (without it: not a point); a report whose peak has no symbol is given at no sizes.
inline void put_sizes(MemoryReport& r, const SymbolValues& at, const std::string& plot_dim = {}) {
    if ((!at.empty() && (plot_dim.empty() || at.count(plot_dim))) || r.peak.free_symbols().empty()) r.at = r.evaluate(at);
}

namespace detail {

/// s as XML text: markup escaped; a byte XML 1.0 does not allow (a control character but tab,
/// line feed and carriage return, or one that starts no well-formed UTF-8 sequence: a dim name
/// may hold any bytes) written as U+FFFD.
inline std::string xml_text(std::string_view s) {
    std::string o;
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        const std::size_t n = yobx::detail::utf8::sequence_length(s, i);
        if (n == 0 || (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')) o += yobx::detail::utf8::replacement;
        else if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '&') o += "&amp;";
        else if (c == '"') o += "&quot;";
        else o.append(s, i, n);
        i += n == 0 ? 1 : n;
    }
    return o;
}

inline std::string fixed(double v, int digits = 1) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

}  // namespace detail

/// The SVG of peak activations, weights and total over `dim` in [lo, hi], the others at `at`.
inline std::string memory_svg(const MemoryReport& r, const std::string& dim, std::int64_t lo, std::int64_t hi, const SymbolValues& at) {
    using detail::fixed;
    using detail::xml_text;
    const PlotData d = plot_data(r, dim, lo, hi, at);
    const double width = 760, height = 440, left = 80, right = 190, top = 40, bottom = 60;
    const double pw = width - left - right, ph = height - top - bottom;
    std::int64_t ymax = 1;
    for (const auto& s : d.samples) ymax = std::max(ymax, s.total);
    const auto [unit, scale] = MemoryReport::unit_of(static_cast<double>(ymax));
    // a tick step of 1, 2 or 5 times a power of ten in the unit, five to ten ticks
    const double top_value = static_cast<double>(ymax) / scale;
    const double p10 = std::pow(10.0, std::floor(std::log10(top_value)));
    double tick = p10 / 5;
    for (const double m : {5.0, 2.0, 1.0, 0.5})
        if (top_value / (m * p10) >= 4) {
            tick = m * p10;
            break;
        }
    const double y_top = std::ceil(top_value / tick) * tick * scale;
    const double x_span = hi > lo ? static_cast<double>(hi - lo) : 1.0;
    const auto px = [&](std::int64_t x) { return left + pw * static_cast<double>(x - lo) / x_span; };
    const auto py = [&](double bytes) { return top + ph * (1 - bytes / y_top); };

    std::string others;
    for (const auto& [k, v] : at)
        if (k != dim) others += (others.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fixed(width, 0) +
                    "\" height=\"" + fixed(height, 0) + "\" viewBox=\"0 0 " + fixed(width, 0) + " " + fixed(height, 0) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s += "<text x=\"" + fixed(left) + "\" y=\"22\" font-size=\"14\">memory as a function of " + xml_text(dim) +
         (others.empty() ? "" : " (" + xml_text(others) + ")") + "</text>\n";
    // axes, ticks and grid
    s += "<g stroke=\"#444\"><line x1=\"" + fixed(left) + "\" y1=\"" + fixed(top + ph) + "\" x2=\"" + fixed(left + pw) + "\" y2=\"" +
         fixed(top + ph) + "\"/><line x1=\"" + fixed(left) + "\" y1=\"" + fixed(top) + "\" x2=\"" + fixed(left) + "\" y2=\"" +
         fixed(top + ph) + "\"/></g>\n";
    for (double v = 0; v <= y_top / scale + tick / 2; v += tick) {
        const double y = py(v * scale);
        s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(y) + "\" x2=\"" + fixed(left + pw) + "\" y2=\"" + fixed(y) +
             "\" stroke=\"#ddd\"/><text x=\"" + fixed(left - 6) + "\" y=\"" + fixed(y + 4) + "\" text-anchor=\"end\">" +
             fixed(v, tick < 1 ? 1 : 0) + " " + unit + "</text>\n";
    }
    for (int k = 0; k <= 5; ++k) {
        const std::int64_t x = lo + static_cast<std::int64_t>(std::llround(static_cast<double>(hi - lo) * k / 5.0));
        s += "<text x=\"" + fixed(px(x)) + "\" y=\"" + fixed(top + ph + 18) + "\" text-anchor=\"middle\">" + std::to_string(x) + "</text>\n";
        if (hi == lo) break;
    }
    s += "<text x=\"" + fixed(left + pw / 2) + "\" y=\"" + fixed(height - 16) + "\" text-anchor=\"middle\">" + xml_text(dim) + "</text>\n";
    s += "<text transform=\"rotate(-90)\" x=\"" + fixed(-(top + ph / 2)) + "\" y=\"16\" text-anchor=\"middle\">bytes (" +
         unit + ")</text>\n";
    // the series: each with its sizes and bytes
    const auto series = [&](std::string_view name, std::string_view color, auto bytes_of) {
        std::string points, xs, ys;
        for (const auto& p : d.samples) {
            const std::int64_t b = bytes_of(p);
            points += (points.empty() ? "" : " ") + fixed(px(p.x)) + "," + fixed(py(static_cast<double>(b)));
            xs += (xs.empty() ? "" : " ") + std::to_string(p.x);
            ys += (ys.empty() ? "" : " ") + std::to_string(b);
        }
        s += "<polyline class=\"series\" data-name=\"" + std::string(name) + "\" data-x=\"" + xs + "\" data-bytes=\"" + ys +
             "\" fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    };
    series("total", "#7b3294", [](const PlotSample& p) { return p.total; });
    series("peak activations", "#d7191c", [](const PlotSample& p) { return p.peak; });
    series("weights", "#2c7bb6", [&](const PlotSample&) { return r.weights.total; });
    for (const auto& b : d.breakpoints) {
        const double x = px(b.x);
        s += "<g class=\"breakpoint\" data-x=\"" + std::to_string(b.x) + "\" data-node=\"" + xml_text(r.step_nodes[b.step]) +
             "\"><line x1=\"" + fixed(x) + "\" y1=\"" + fixed(top) + "\" x2=\"" + fixed(x) + "\" y2=\"" + fixed(top + ph) +
             "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/><text x=\"" + fixed(x + 3) + "\" y=\"" + fixed(top + 12) + "\">" +
             xml_text(dim) + "=" + std::to_string(b.x) + ": " + xml_text(r.step_ops[b.step]) + "</text></g>\n";
    }
    // legend
    const char* names[] = {"total", "peak activations", "weights"};
    const char* colors[] = {"#7b3294", "#d7191c", "#2c7bb6"};
    for (int k = 0; k < 3; ++k) {
        const double y = top + 14 + 20 * k;
        s += "<line x1=\"" + fixed(left + pw + 14) + "\" y1=\"" + fixed(y) + "\" x2=\"" + fixed(left + pw + 38) + "\" y2=\"" + fixed(y) +
             "\" stroke=\"" + colors[k] + "\" stroke-width=\"2\"/><text x=\"" + fixed(left + pw + 44) + "\" y=\"" + fixed(y + 4) + "\">" +
             names[k] + "</text>\n";
    }
    s += "</svg>\n";
    return s;
}

}  // namespace yobx::onnx
