// Flatten and unflatten of an LLM's keyword arguments: input_ids,
// attention_mask, position_ids and a 32-layer KV cache (67 tensors).
// Run through compare_pytree.py to see the ratio against torch.utils._pytree.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <benchmark/benchmark.h>
#include <boost/hana/define_struct.hpp>

#include <array>
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

static DenseTensor t(std::vector<std::int64_t> s) { return DenseTensor::zeros(std::move(s), DType::float32); }

static Kwargs make_kwargs() {
    KVCache c;
    for (int i = 0; i < kLayers; ++i) {
        c.key_cache.push_back(t({1, 1, 1, 1}));
        c.value_cache.push_back(t({1, 1, 1, 1}));
    }
    return {t({1, 1}), t({1, 1}), t({1, 1}), c};
}

static FixedKwargs make_fixed() {
    FixedKwargs f{t({1, 1}), t({1, 1}), t({1, 1}), {}};
    for (auto& [k, v] : f.past_key_values) {
        k = t({1, 1, 1, 1});
        v = t({1, 1, 1, 1});
    }
    return f;
}

static void static_flatten(benchmark::State& state) {
    const Kwargs kw = make_kwargs();
    for (auto _ : state) {
        auto r = yobx::tree_flatten(kw);
        benchmark::DoNotOptimize(r);
    }
    state.counters["leaves"] = 67;
}
BENCHMARK(static_flatten);

static void static_unflatten(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_kwargs());
    for (auto _ : state) {
        auto r = yobx::tree_unflatten<Kwargs>(std::span<const DenseTensor>(leaves), spec);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(static_unflatten);

static void dynamic_flatten(benchmark::State& state) {
    const V v = yobx::to_value(make_kwargs());
    for (auto _ : state) {
        auto r = yobx::tree_flatten(v);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_flatten);

static void dynamic_flatten_ptrs(benchmark::State& state) {
    const V v = yobx::to_value(make_kwargs());
    for (auto _ : state) {
        auto r = yobx::tree_flatten_ptrs(v);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_flatten_ptrs);

static void dynamic_unflatten(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(yobx::to_value(make_kwargs()));
    for (auto _ : state) {
        auto r = yobx::tree_unflatten<V>(std::span<const DenseTensor>(leaves), spec);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_unflatten);

// Time per leaf of the 67, shown next to the time per iteration.
static void report_per_leaf(benchmark::State& state) {
    state.counters["per_leaf"] =
        benchmark::Counter(67, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Fixed-size flatten into a std::array of copies (one reference count each).
static void fixed_leaves_copies(benchmark::State& state) {
    const FixedKwargs f = make_fixed();
    for (auto _ : state) {
        auto r = yobx::tree_leaves_fixed(f);
        benchmark::DoNotOptimize(r);
    }
    report_per_leaf(state);
}
BENCHMARK(fixed_leaves_copies);

// Fixed-size flatten into a std::array of addresses (no copy at all).
static void fixed_leaf_ptrs(benchmark::State& state) {
    const FixedKwargs f = make_fixed();
    for (auto _ : state) {
        benchmark::DoNotOptimize(&f);
        auto r = yobx::tree_leaf_ptrs(f);
        benchmark::DoNotOptimize(r);
    }
    report_per_leaf(state);
}
BENCHMARK(fixed_leaf_ptrs);

// The reference for both: the same 67 addresses gathered by a hand-written loop.
static void fixed_hand_written(benchmark::State& state) {
    const FixedKwargs f = make_fixed();
    for (auto _ : state) {
        benchmark::DoNotOptimize(&f);
        std::array<const DenseTensor*, 67> r;
        r[0] = &f.input_ids;
        r[1] = &f.attention_mask;
        r[2] = &f.position_ids;
        for (int i = 0; i < kLayers; ++i) {
            r[3 + 2 * i] = &f.past_key_values[i].first;
            r[4 + 2 * i] = &f.past_key_values[i].second;
        }
        benchmark::DoNotOptimize(r);
    }
    report_per_leaf(state);
}
BENCHMARK(fixed_hand_written);

BENCHMARK_MAIN();
