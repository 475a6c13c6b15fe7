// Flatten and unflatten of an LLM's keyword arguments: input_ids,
// attention_mask, position_ids and a 32-layer KV cache (67 tensors).
// Run through compare_pytree.py to see the ratio against torch.utils._pytree.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <benchmark/benchmark.h>
#include <boost/hana/define_struct.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <span>
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

// The same arguments as a tree of Values, as a caller or the observer holds
// them: to_value keeps a Value flat (see Value::is_flat); a non-const access
// builds its tree, which is then the value.
static V make_value() {
    V v = yobx::to_value(make_kwargs());
    v.dict();
    return v;
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
    const V v = make_value();
    for (auto _ : state) {
        auto r = yobx::tree_flatten(v);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_flatten);

static void dynamic_flatten_ptrs(benchmark::State& state) {
    const V v = make_value();
    for (auto _ : state) {
        auto r = yobx::tree_flatten_ptrs(v);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_flatten_ptrs);

// The reference for the copying flatten: the same traversal and leaf copies
// with no spec (tree_leaves).
static void dynamic_leaves(benchmark::State& state) {
    const V v = make_value();
    for (auto _ : state) {
        auto r = yobx::tree_leaves(v);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_leaves);

// A Value as tree_unflatten makes it: kept flat (the spec and a copy of the leaves).
static void dynamic_unflatten(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_value());
    for (auto _ : state) {
        auto r = yobx::tree_unflatten<V>(std::span<const DenseTensor>(leaves), spec);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_unflatten);

// The same, then one look inside (reading a key), which builds the tree of
// Values: what unflatten costs a caller who reads the structure.
static void dynamic_unflatten_look(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_value());
    for (auto _ : state) {
        const auto r = yobx::tree_unflatten<V>(std::span<const DenseTensor>(leaves), spec);
        benchmark::DoNotOptimize(&r["input_ids"]);
    }
}
BENCHMARK(dynamic_unflatten_look);

// Flattening a Value kept flat (what to_value and tree_map return): the
// spec shared and the leaves copied, no tree walked.
static void dynamic_flatten_kept_flat(benchmark::State& state) {
    const V v = yobx::to_value(make_kwargs());
    for (auto _ : state) {
        auto r = yobx::tree_flatten(v);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(dynamic_flatten_kept_flat);

// Leaves moved in (what tree_map does with the leaves it made). Moving
// consumes them, so each timed unflatten gets a fresh copy made untimed:
// batches of 8, timed by hand, the time given per unflatten (with a share of
// two clock reads, about 5 ns). The result is destroyed inside the timing,
// as Python frees the previous result inside its loop.
template <class F>
static void unflatten_moved_batches(benchmark::State& state, F unflatten) {
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

static void dynamic_unflatten_moved(benchmark::State& state) {
    unflatten_moved_batches(state, [](std::vector<DenseTensor> l, const yobx::TreeSpec& s) {
        return yobx::tree_unflatten<V>(std::move(l), s);
    });
}
BENCHMARK(dynamic_unflatten_moved)->UseManualTime();

// The reference for unflatten: the typed struct built by hand from the 67
// leaves, with no spec to read. No unflatten into owning containers does less.
static Kwargs hand_written_kwargs(std::span<const DenseTensor> l) {
    return {l[0], l[1], l[2],
            KVCache{{l.begin() + 3, l.begin() + 3 + kLayers}, {l.begin() + 3 + kLayers, l.begin() + 3 + 2 * kLayers}}};
}

static void hand_written_unflatten(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_kwargs());
    for (auto _ : state) {
        auto r = hand_written_kwargs(leaves);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(hand_written_unflatten);

static void hand_written_unflatten_moved(benchmark::State& state) {
    unflatten_moved_batches(state, [](std::vector<DenseTensor> l, const yobx::TreeSpec&) {
        const auto keys = l.begin() + 3, values = keys + kLayers;
        return Kwargs{std::move(l[0]), std::move(l[1]), std::move(l[2]),
                      KVCache{{std::make_move_iterator(keys), std::make_move_iterator(values)},
                              {std::make_move_iterator(values), std::make_move_iterator(values + kLayers)}}};
    });
}
BENCHMARK(hand_written_unflatten_moved)->UseManualTime();

// The floor of any unflatten that owns copies of the leaves: the 67 copied
// into one vector, then destroyed (a reference count up and down each).
static void leaves_vector_copy(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_kwargs());
    for (auto _ : state) {
        std::vector<DenseTensor> r(leaves);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(leaves_vector_copy);

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
