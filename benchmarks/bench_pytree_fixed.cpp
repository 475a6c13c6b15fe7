// Fixed-size flatten of the same keyword arguments: every leaf count known
// from the type, the leaves in a std::array.
#include "bench_pytree_data.hpp"

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
