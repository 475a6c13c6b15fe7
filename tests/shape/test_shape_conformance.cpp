// Conformance: on random concrete shapes, each rule run with constant SymInts
// agrees with a direct implementation of ONNX's rule (numpy's where ONNX follows numpy) written here,
// including when the input is invalid (the rule must then throw value_error).
// 1000 cases per rule, fixed seed.
#include <yobx/shape_inference.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace yobx;

namespace {

using Ints = std::vector<std::int64_t>;
constexpr int cases = 1000;

struct Random {
    std::mt19937_64 gen{20261121};
    std::int64_t between(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen); }
    bool coin(int percent = 50) { return between(1, 100) <= percent; }
    Ints shape(std::int64_t max_rank = 4, std::int64_t max_dim = 4) {
        Ints s(static_cast<std::size_t>(between(0, max_rank)));
        for (auto& d : s) d = between(0, max_dim);
        return s;
    }
};

Shape sym(const Ints& v) { return Shape(v.begin(), v.end()); }

std::string ints(const Ints& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

// The rule's result as ints, or nullopt if it threw value_error.
template <class F>
std::optional<Ints> run(F&& f) {
    try {
        const Shape s = f();
        Ints out;
        for (const auto& d : s) out.push_back(d.constant_value());
        return out;
    } catch (const value_error&) {
        return std::nullopt;
    }
}

std::string show(const std::optional<Ints>& v) { return v ? ints(*v) : "error"; }

// ---- reference implementations, written from numpy's and ONNX's descriptions ----

std::optional<Ints> ref_broadcast(const std::vector<Ints>& shapes) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    Ints out;
    for (std::size_t i = 0; i < rank; ++i) {
        std::set<std::int64_t> sizes;  // the sizes other than 1 at this position
        for (const auto& s : shapes) {
            const std::size_t pad = rank - s.size();
            if (i >= pad && s[i - pad] != 1) sizes.insert(s[i - pad]);
        }
        if (sizes.size() > 1) return std::nullopt;
        out.push_back(sizes.empty() ? 1 : *sizes.begin());
    }
    return out;
}

std::optional<std::int64_t> ref_axis(std::int64_t axis, std::int64_t rank) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    return axis;
}

std::optional<Ints> ref_concat(const std::vector<Ints>& shapes, std::int64_t axis) {
    for (const auto& s : shapes)
        if (s.size() != shapes[0].size()) return std::nullopt;
    const auto ax = ref_axis(axis, static_cast<std::int64_t>(shapes[0].size()));
    if (!ax) return std::nullopt;
    Ints out = shapes[0];
    out[static_cast<std::size_t>(*ax)] = 0;
    for (const auto& s : shapes)
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (static_cast<std::int64_t>(i) == *ax) out[i] += s[i];
            else if (s[i] != out[i]) return std::nullopt;
        }
    return out;
}

std::optional<Ints> ref_reshape(const Ints& input, Ints target, bool allowzero) {
    std::int64_t total = 1, known = 1, minus = 0, zeros = 0;
    for (auto d : input) total *= d;
    for (std::size_t i = 0; i < target.size(); ++i) {
        if (target[i] == -1) {
            ++minus;
            continue;
        }
        if (target[i] < -1) return std::nullopt;
        if (target[i] == 0) {
            ++zeros;
            if (!allowzero) {
                if (i >= input.size()) return std::nullopt;
                target[i] = input[i];
            }
        }
        known *= target[i];
    }
    if (minus > 1 || (allowzero && zeros > 0 && minus > 0)) return std::nullopt;
    if (minus == 0) return known == total ? std::optional<Ints>(target) : std::nullopt;
    if (known == 0 || total % known != 0) return std::nullopt;
    for (auto& t : target)
        if (t == -1) t = total / known;
    return target;
}

// ONNX's Slice (opset 13 and later): a negative index counts from the end, then a
// positive step clamps start and end to [0, length]; a negative step clamps the start
// to [0, length - 1] and the end to [-1, length - 1]. An empty dimension takes nothing
// (Min(Max(start, 0), -1) is -1). An end of exactly INT32_MAX or INT64_MAX is numpy's
// None, as onnxruntime's Slice reads it (through the first element for a negative step,
// where ONNX's reference takes nothing).
std::int64_t ref_slice_length(std::int64_t length, std::int64_t start, std::int64_t stop, std::int64_t step) {
    const auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v, lo), hi); };
    if (stop == std::numeric_limits<std::int32_t>::max() || stop == std::numeric_limits<std::int64_t>::max())
        stop = step > 0 ? length : -length - 1;  // -1 once the length is added below
    if (start < 0) start += length;  // cannot overflow: length >= 0
    if (stop < 0) stop += length;
    if (step > 0) {
        start = clamp(start, 0, length);
        stop = clamp(stop, 0, length);
        return start < stop ? (stop - start - 1) / step + 1 : 0;
    }
    start = clamp(start, 0, length - 1);
    stop = clamp(stop, -1, length - 1);
    step = std::max(step, -std::numeric_limits<std::int64_t>::max());
    return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
}

std::optional<Ints> ref_slice(const Ints& input, const Ints& starts, const Ints& ends, const Ints& axes, const Ints& steps) {
    Ints out = input;
    std::set<std::int64_t> seen;
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const auto ax = ref_axis(axes[k], static_cast<std::int64_t>(input.size()));
        if (!ax || !seen.insert(*ax).second || steps[k] == 0) return std::nullopt;
        const auto i = static_cast<std::size_t>(*ax);
        out[i] = ref_slice_length(input[i], starts[k], ends[k], steps[k]);
    }
    return out;
}

std::optional<Ints> ref_gather(const Ints& data, const Ints& indices, std::int64_t axis) {
    const auto ax = ref_axis(axis, static_cast<std::int64_t>(data.size()));
    if (!ax) return std::nullopt;
    Ints out;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(data.size()); ++i) {
        if (i == *ax) out.insert(out.end(), indices.begin(), indices.end());
        else out.push_back(data[static_cast<std::size_t>(i)]);
    }
    return out;
}

std::optional<Ints> ref_squeeze(const Ints& input, const std::optional<Ints>& axes) {
    std::set<std::int64_t> drop;
    if (axes) {
        for (auto a : *axes) {
            const auto ax = ref_axis(a, static_cast<std::int64_t>(input.size()));
            if (!ax || !drop.insert(*ax).second || input[static_cast<std::size_t>(*ax)] != 1) return std::nullopt;
        }
    } else {
        for (std::size_t i = 0; i < input.size(); ++i)
            if (input[i] == 1) drop.insert(static_cast<std::int64_t>(i));
    }
    Ints out;
    for (std::size_t i = 0; i < input.size(); ++i)
        if (!drop.count(static_cast<std::int64_t>(i))) out.push_back(input[i]);
    return out;
}

std::optional<Ints> ref_unsqueeze(const Ints& input, const Ints& axes) {
    const auto rank = static_cast<std::int64_t>(input.size() + axes.size());
    std::set<std::int64_t> at;
    for (auto a : axes) {
        const auto ax = ref_axis(a, rank);
        if (!ax || !at.insert(*ax).second) return std::nullopt;
    }
    Ints out = input;
    for (auto ax : at) out.insert(out.begin() + ax, 1);  // ascending: each insert lands at its final place
    return out;
}

std::optional<Ints> ref_transpose(const Ints& input, const Ints& perm) {
    Ints sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<std::int64_t>(i)) return std::nullopt;
    if (perm.size() != input.size()) return std::nullopt;
    Ints out;
    for (auto p : perm) out.push_back(input[static_cast<std::size_t>(p)]);
    return out;
}

std::optional<Ints> ref_matmul(const Ints& a, const Ints& b) {
    if (a.empty() || b.empty()) return std::nullopt;
    const std::int64_t k1 = a.back(), k2 = b.size() == 1 ? b[0] : b[b.size() - 2];
    if (k1 != k2) return std::nullopt;
    const Ints batch_a = a.size() > 2 ? Ints(a.begin(), a.end() - 2) : Ints{};
    const Ints batch_b = b.size() > 2 ? Ints(b.begin(), b.end() - 2) : Ints{};
    auto out = ref_broadcast({batch_a, batch_b});
    if (!out) return std::nullopt;
    if (a.size() >= 2) out->push_back(a[a.size() - 2]);
    if (b.size() >= 2) out->push_back(b.back());
    return out;
}

Ints ref_shape_values(const Ints& input, std::int64_t start, std::int64_t end) {
    const auto r = static_cast<std::int64_t>(input.size());
    const auto clamp = [&](std::int64_t v) { return v < 0 ? std::max<std::int64_t>(v + r, 0) : std::min(v, r); };
    Ints out;
    for (std::int64_t i = clamp(start); i < clamp(end); ++i) out.push_back(input[static_cast<std::size_t>(i)]);
    return out;
}

Ints ref_axes(Random& r, std::int64_t rank, std::int64_t count) {
    Ints axes;
    for (std::int64_t i = 0; i < count; ++i) axes.push_back(r.between(-rank - 1, rank));
    return axes;
}

}  // namespace

TEST_CASE("conformance: broadcast agrees with numpy's rule under every policy") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        std::vector<Ints> shapes(static_cast<std::size_t>(r.between(1, 3)));
        for (auto& s : shapes) s = r.shape(4, 3);
        const auto policy = static_cast<BroadcastPolicy>(r.between(0, 2));
        ShapeEnv env;
        std::vector<Shape> sy;
        for (const auto& s : shapes) sy.push_back(sym(s));
        INFO(std::string(format_shapes(sy)));
        CHECK(show(run([&] { return shape::broadcast(env, sy, policy); })) == show(ref_broadcast(shapes)));
        INFO(std::string(format_shapes(sy)));
        CHECK(show(run([&] { return shape::expand(env, sy[0], sy.back(), policy); })) == show(ref_broadcast({shapes[0], shapes.back()})));
    }
}

TEST_CASE("conformance: concat") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        const Ints base = r.shape(3, 3);
        std::vector<Ints> shapes(static_cast<std::size_t>(r.between(1, 3)), base);
        for (auto& s : shapes) {
            if (!s.empty() && r.coin(70)) s[static_cast<std::size_t>(r.between(0, static_cast<std::int64_t>(s.size()) - 1))] = r.between(0, 3);
            if (r.coin(5)) s.push_back(2);
        }
        const std::int64_t axis = r.between(-4, 3);
        ShapeEnv env;
        std::vector<Shape> sy;
        for (const auto& s : shapes) sy.push_back(sym(s));
        INFO(std::string(format_shapes(sy) + " axis " + std::to_string(axis)));
        CHECK(show(run([&] { return shape::concat(env, sy, axis); })) == show(ref_concat(shapes, axis)));
    }
}

TEST_CASE("conformance: reshape with 0, -1 and allowzero") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        const Ints input = r.shape(4, 4);
        Ints target;
        // half the targets are a regrouping of the input's sizes, the rest random
        if (r.coin()) {
            std::int64_t acc = 1;
            for (auto d : input) {
                acc *= d;
                if (r.coin()) {
                    target.push_back(acc);
                    acc = 1;
                }
            }
            if (acc != 1 || target.empty()) target.push_back(acc);
        } else {
            target = r.shape(4, 6);
        }
        for (auto& t : target)
            if (r.coin(15)) t = r.coin(60) ? -1 : (r.coin() ? 0 : -2);
        const bool allowzero = r.coin(25);
        ShapeEnv env;
        INFO(std::string(ints(input) + " -> " + ints(target) + (allowzero ? " allowzero" : "")));
        CHECK(show(run([&] { return shape::reshape(env, sym(input), sym(target), allowzero); })) == show(ref_reshape(input, target, allowzero)));
    }
}

TEST_CASE("conformance: slice agrees with ONNX's Slice clamps") {
    Random r;
    const std::int64_t big[] = {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
    for (int i = 0; i < cases; ++i) {
        const Ints input = r.shape(3, 6);
        const auto rank = static_cast<std::int64_t>(input.size());
        const std::int64_t n = r.between(0, std::max<std::int64_t>(rank, 1));
        Ints starts, ends, axes, steps;
        for (std::int64_t k = 0; k < n; ++k) {
            starts.push_back(r.coin(10) ? big[r.between(0, 1)] : r.between(-8, 8));
            ends.push_back(r.coin(15) ? big[r.between(0, 1)] : r.between(-8, 8));
            axes.push_back(r.coin(90) ? k : r.between(-rank - 1, rank));
            steps.push_back(r.coin(5) ? 0 : r.coin(3) ? big[r.between(0, 1)] : (r.coin() ? 1 : 1 - 2 * r.coin()) * r.between(1, 3));
        }
        ShapeEnv env;
        INFO(std::string(ints(input) + " starts " + ints(starts) + " ends " + ints(ends) + " axes " + ints(axes) + " steps " + ints(steps)));
        CHECK(show(run([&] { return shape::slice(env, sym(input), sym(starts), sym(ends), axes, steps); })) == show(ref_slice(input, starts, ends, axes, steps)));
    }
}

TEST_CASE("conformance: gather, squeeze, unsqueeze, transpose") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        const Ints data = r.shape(4, 3);
        const auto rank = static_cast<std::int64_t>(data.size());
        const Ints indices = r.shape(2, 3);
        const std::int64_t axis = r.between(-rank - 1, rank);
        INFO(std::string(ints(data) + " " + ints(indices) + " axis " + std::to_string(axis)));
        CHECK(show(run([&] { return shape::gather(sym(data), sym(indices), axis); })) == show(ref_gather(data, indices, axis)));

        const std::optional<Ints> axes = r.coin(20) ? std::nullopt : std::optional<Ints>(ref_axes(r, rank, r.between(0, 2)));
        ShapeEnv env;
        INFO(std::string(ints(data) + " axes " + (axes ? ints(*axes) : "none")));
        CHECK(show(run([&] { return shape::squeeze(env, sym(data), axes); })) == show(ref_squeeze(data, axes)));

        const Ints uaxes = ref_axes(r, rank + 2, r.between(0, 3));
        INFO(std::string(ints(data) + " axes " + ints(uaxes)));
        CHECK(show(run([&] { return shape::unsqueeze(sym(data), uaxes); })) == show(ref_unsqueeze(data, uaxes)));

        Ints perm(data.size());
        for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<std::int64_t>(k);
        std::shuffle(perm.begin(), perm.end(), r.gen);
        if (r.coin(20) && !perm.empty()) perm[static_cast<std::size_t>(r.between(0, rank - 1))] = r.between(-1, rank);
        if (r.coin(5)) perm.push_back(rank);
        INFO(std::string(ints(data) + " perm " + ints(perm)));
        CHECK(show(run([&] { return shape::transpose(sym(data), perm); })) == show(ref_transpose(data, perm)));
    }
}

TEST_CASE("conformance: matmul agrees with numpy's matmul shapes") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        Ints a = r.shape(4, 3), b = r.shape(4, 3);
        if (!a.empty() && !b.empty() && r.coin(80)) a.back() = b.size() == 1 ? b[0] : b[b.size() - 2];  // mostly valid
        ShapeEnv env;
        INFO(std::string(ints(a) + " @ " + ints(b)));
        CHECK(show(run([&] { return shape::matmul(env, sym(a), sym(b)); })) == show(ref_matmul(a, b)));
    }
}

TEST_CASE("conformance: shape with start and end, and size") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        const Ints input = r.shape(5, 9);
        const std::int64_t start = r.between(-7, 7);
        const std::int64_t end = r.coin(30) ? std::numeric_limits<std::int64_t>::max() : r.between(-7, 7);
        const Ints expected = ref_shape_values(input, start, end);
        INFO(std::string(ints(input) + " start " + std::to_string(start)));
        CHECK(show(run([&] { return shape::shape_values(sym(input), start, end); })) == show(std::optional<Ints>(expected)));
        std::int64_t n = 1;
        for (auto d : input) n *= d;
        CHECK(shape::numel(sym(input)).constant_value() == n);
    }
}

TEST_CASE("conformance: Slice and Gather on shape tensor values take the elements ONNX's Slice takes") {
    Random r;
    for (int i = 0; i < cases; ++i) {
        const std::int64_t length = r.between(0, 6);
        std::vector<SymInt> values;
        for (std::int64_t k = 0; k < length; ++k) values.push_back(10 + k);
        const std::int64_t start = r.between(-8, 8), end = r.between(-8, 8);
        const std::int64_t step = r.coin(3) ? (r.coin() ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min())
                                             : (r.coin() ? 1 : -1) * r.between(1, 3);
        // ONNX: start counted from the end when negative, clamped, then start + k*step
        const std::int64_t first = std::min<std::int64_t>(std::max<std::int64_t>(start < 0 ? start + length : start, 0),
                                                          step < 0 ? length - 1 : length);
        Ints expected;
        for (std::int64_t k = 0; k < ref_slice_length(length, start, end, step); ++k) expected.push_back(10 + first + k * step);
        ShapeEnv env;
        ShapeInference si(env);
        const SymTensor out = si.slice(SymTensor::from_values(values), SymTensor::from_values({start}), SymTensor::from_values({end}),
                                       std::nullopt, Ints{step});
        INFO(std::string("length " + std::to_string(length) + " [" + std::to_string(start) + ":" + std::to_string(end) + ":" +
                         std::to_string(step) + "]"));
        REQUIRE(out.values().has_value());
        CHECK(show(run([&] { return *out.values(); })) == show(expected));

        if (length == 0) continue;
        const std::int64_t index = r.between(-length, length - 1);
        const SymTensor g = si.gather(SymTensor::from_values(values), SymTensor::scalar(index));
        CHECK(g.values()->at(0).constant_value() == 10 + (index < 0 ? index + length : index));
    }
}
