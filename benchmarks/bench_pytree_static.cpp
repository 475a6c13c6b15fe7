// Flatten and unflatten of the same keyword arguments as a typed struct
// (Boost.Hana, optionals, vectors and the registered KV cache), and the
// references: the struct built by hand, and one vector of leaf copies.
#include "bench_pytree_data.hpp"

#include <span>

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

// An unflatten that owns copies of the leaves in a new block costs at least
// this: the 67 copied into one vector, then destroyed (a reference count up
// and down each, a malloc and a free). The floor without the allocation is
// in bench_pytree_floor.cpp.
static void leaves_vector_copy(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_kwargs());
    for (auto _ : state) {
        std::vector<DenseTensor> r(leaves);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(leaves_vector_copy);
