// Shape inference speed: broadcasting concrete shapes against a hand-written
// int64 loop (the cost of going through SymInt and the hook table when nothing
// is symbolic), symbolic broadcasting, and the Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape chain. The ratios are printed at the end of the run.
#include <yobx/shape_inference.hpp>

#include "times_reporter.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace yobx;

namespace {

const std::vector<std::int64_t> kLeft{8, 1, 128, 64}, kRight{1, 16, 128, 1};

// The reference: numpy's rule on plain integers.
std::vector<std::int64_t> broadcast_loop(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y) {
    const std::size_t rank = std::max(x.size(), y.size());
    std::vector<std::int64_t> out(rank, 1);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t a = i < x.size() ? x[x.size() - 1 - i] : 1;
        const std::int64_t b = i < y.size() ? y[y.size() - 1 - i] : 1;
        if (a != b && a != 1 && b != 1) throw std::runtime_error("cannot broadcast");
        out[rank - 1 - i] = a == 1 ? b : a;
    }
    return out;
}

void BM_broadcast_constant_loop(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(broadcast_loop(kLeft, kRight));
}
BENCHMARK(BM_broadcast_constant_loop);

void BM_broadcast_constant_yobx(benchmark::State& state) {
    ShapeEnv env;
    const Shape x(kLeft.begin(), kLeft.end()), y(kRight.begin(), kRight.end());
    for (auto _ : state) benchmark::DoNotOptimize(shape::broadcast(env, {x, y}));
}
BENCHMARK(BM_broadcast_constant_yobx);

void BM_broadcast_symbolic_yobx(benchmark::State& state) {
    ShapeEnv env;
    const SymInt b = env.create_symbol("batch", 8, ValueRange::at_least(2));
    const SymInt s = env.create_symbol("seq", 128, ValueRange::at_least(2));
    const Shape x{b, 1, s, 64}, y{1, 16, s, 1};
    for (auto _ : state) benchmark::DoNotOptimize(shape::broadcast(env, {x, y}));
}
BENCHMARK(BM_broadcast_symbolic_yobx);

void BM_reshape_chain_symbolic_yobx(benchmark::State& state) {
    ShapeEnv env;
    ShapeInference si(env);
    const SymTensor x({env.create_symbol("batch", 2, ValueRange::at_least(2)), env.create_symbol("seq", 7, ValueRange::at_least(2)), 4, 16},
                      DType::float32);
    for (auto _ : state) {
        const SymTensor shape = si.shape(x);
        const SymTensor b = si.unsqueeze(si.gather(shape, SymTensor::scalar(0)), {0});
        const SymTensor s = si.unsqueeze(si.gather(shape, SymTensor::scalar(1)), {0});
        benchmark::DoNotOptimize(si.reshape(x, si.concat({b, s, SymTensor::from_values({-1})}, 0)));
    }
}
BENCHMARK(BM_reshape_chain_symbolic_yobx);

}  // namespace

int main(int argc, char** argv) {
    return bench::run(argc, argv, [](const bench::Times& times) {
        const auto it = times.find("BM_broadcast_constant_yobx"), ref = times.find("BM_broadcast_constant_loop");
        if (it != times.end() && ref != times.end())
            std::cout << "ratio broadcast_constant yobx/loop: " << it->second / ref->second << "x\n";
    });
}
