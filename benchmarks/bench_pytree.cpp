// Flatten and unflatten of an LLM's keyword arguments (67 tensors) as a
// Value<T>. Run through compare_pytree.py to see the ratio against
// torch.utils._pytree. The typed-struct rows are in bench_pytree_static.cpp,
// the fixed-size rows in bench_pytree_fixed.cpp (see bench_pytree_data.hpp).
#include "bench_pytree_data.hpp"

#include <span>

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

static void dynamic_unflatten_moved(benchmark::State& state) {
    unflatten_moved_batches(state, [](std::vector<DenseTensor> l, const yobx::TreeSpec& s) {
        return yobx::tree_unflatten<V>(std::move(l), s);
    });
}
BENCHMARK(dynamic_unflatten_moved)->UseManualTime();

BENCHMARK_MAIN();
