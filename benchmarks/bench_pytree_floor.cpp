// The floor of any unflatten that owns copies of the 67 leaves. A unit of its
// own: GCC's inlining budget is counted per unit, so a row added to another
// unit can change what that unit's rows inline (see docs/performance.md).
#include "bench_pytree_data.hpp"

#include <memory>

// The 67 leaves copied into storage kept from one iteration to the next,
// then destroyed: only the reference counts go up and down, nothing is
// allocated.
static void leaves_copy_no_allocation(benchmark::State& state) {
    const auto [leaves, spec] = yobx::tree_flatten(make_kwargs());
    std::allocator<DenseTensor> alloc;
    DenseTensor* storage = alloc.allocate(leaves.size());
    for (auto _ : state) {
        std::uninitialized_copy(leaves.begin(), leaves.end(), storage);
        benchmark::DoNotOptimize(storage);
        benchmark::ClobberMemory();
        std::destroy_n(storage, leaves.size());
    }
    alloc.deallocate(storage, leaves.size());
}
BENCHMARK(leaves_copy_no_allocation);
