// The structure the pytree benchmarks flatten and unflatten: an LLM's
// keyword arguments, input_ids, attention_mask, position_ids and a 32-layer
// KV cache (67 tensors), as a typed struct, a fixed-size struct and a Value.
//
// The rows live in three translation units (dynamic, static, fixed) that
// share this header. GCC stops inlining once a translation unit has grown by
// a set share (--param inline-unit-growth): in one file, the rows competed
// for that budget, and a change to one row's code moved the others (the
// hand-written address loop went from 10 to 18 ns when the library's string
// comparison changed). Each family now gets the code generation it would get
// alone.
#pragma once

#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <benchmark/benchmark.h>
#include <boost/hana/define_struct.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <vector>

using yobx::DenseTensor;
using yobx::DType;
using V = yobx::Value<DenseTensor>;

constexpr int kLayers = 32;

struct KVCache {
    std::vector<DenseTensor> key_cache;
    std::vector<DenseTensor> value_cache;
};

template <>
struct yobx::pytree_node<KVCache> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const KVCache& c) { return std::tie(c.key_cache, c.value_cache); }
    static auto flatten_with_keys(const KVCache& c) {
        return std::tuple{yobx::attr("key_cache", c.key_cache), yobx::attr("value_cache", c.value_cache)};
    }
    static KVCache unflatten(std::vector<DenseTensor> k, std::vector<DenseTensor> v) { return {std::move(k), std::move(v)}; }
};

// The typed form a C++ caller would use (structure known at run time: optionals, vectors).
struct Kwargs {
    BOOST_HANA_DEFINE_STRUCT(Kwargs,
        (std::optional<DenseTensor>, input_ids),
        (std::optional<DenseTensor>, attention_mask),
        (std::optional<DenseTensor>, position_ids),
        (std::optional<KVCache>, past_key_values));
};

// The fixed form: every leaf count known from the type.
using Layers = std::array<std::pair<DenseTensor, DenseTensor>, kLayers>;
struct FixedKwargs {
    BOOST_HANA_DEFINE_STRUCT(FixedKwargs,
        (DenseTensor, input_ids),
        (DenseTensor, attention_mask),
        (DenseTensor, position_ids),
        (Layers, past_key_values));
};

inline DenseTensor t(std::vector<std::int64_t> s) { return DenseTensor::zeros(std::move(s), DType::float32); }

inline Kwargs make_kwargs() {
    KVCache c;
    for (int i = 0; i < kLayers; ++i) {
        c.key_cache.push_back(t({1, 1, 1, 1}));
        c.value_cache.push_back(t({1, 1, 1, 1}));
    }
    return {t({1, 1}), t({1, 1}), t({1, 1}), c};
}

// The same arguments as a tree of Values, as a caller or the observer holds
// them: to_value keeps a Value flat (see Value::is_flat); a non-const access
// builds its tree, which is then the value.
inline V make_value() {
    V v = yobx::to_value(make_kwargs());
    v.dict();
    return v;
}

inline FixedKwargs make_fixed() {
    FixedKwargs f{t({1, 1}), t({1, 1}), t({1, 1}), {}};
    for (auto& [k, v] : f.past_key_values) {
        k = t({1, 1, 1, 1});
        v = t({1, 1, 1, 1});
    }
    return f;
}

// Leaves moved in (what tree_map does with the leaves it made). Moving
// consumes them, so each timed unflatten gets a fresh copy made untimed:
// batches of 8, timed by hand, the time given per unflatten (with a share of
// two clock reads, about 5 ns). The result is destroyed inside the timing,
// as Python frees the previous result inside its loop.
template <class F>
void unflatten_moved_batches(benchmark::State& state, F unflatten) {
    constexpr int batch = 8;
    const auto [leaves, spec] = yobx::tree_flatten(make_kwargs());
    std::array<std::vector<DenseTensor>, batch> in;
    for (auto _ : state) {
        for (auto& x : in) x = leaves;
        const auto start = std::chrono::steady_clock::now();
        for (auto& x : in) {
            auto r = unflatten(std::move(x), spec);
            benchmark::DoNotOptimize(r);
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        state.SetIterationTime(took.count() / batch);
    }
}

// Time per leaf of the 67, shown next to the time per iteration.
inline void report_per_leaf(benchmark::State& state) {
    state.counters["per_leaf"] =
        benchmark::Counter(67, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
