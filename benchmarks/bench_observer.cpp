// InputObserver speed on LLM-like inputs (input_ids, attention_mask,
// position_ids and a 32-layer KV cache: 67 tensors):
//  - the wrapper's pass-through cost once store_n_calls calls are recorded,
//    against calling the function directly;
//  - the cost of recording one call, against the clones alone (the part no
//    observer can avoid);
//  - infer_dynamic_shapes on 3 recorded calls (alignment included).
// The ratios are printed at the end of the run.
#include "times_reporter.hpp"

#include <yobx/dense_tensor.hpp>
#include <yobx/observer.hpp>

#include <benchmark/benchmark.h>

#include <boost/hana/define_struct.hpp>

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

using yobx::DenseTensor;
using yobx::DType;

namespace {

struct KVCache {
    std::vector<DenseTensor> key_cache;
    std::vector<DenseTensor> value_cache;
};

struct ForwardKwargs {
    BOOST_HANA_DEFINE_STRUCT(ForwardKwargs,
        (std::optional<DenseTensor>, attention_mask),
        (std::optional<DenseTensor>, position_ids),
        (std::optional<KVCache>, past_key_values));
};

}  // namespace

template <>
struct yobx::pytree_node<KVCache> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const KVCache& c) { return std::tie(c.key_cache, c.value_cache); }
    static KVCache unflatten(std::vector<DenseTensor> k, std::vector<DenseTensor> v) { return {std::move(k), std::move(v)}; }
};
template <>
inline constexpr bool yobx::enable_keyword_arguments<ForwardKwargs> = true;

namespace {

constexpr int kLayers = 32;

const yobx::Signature kSignature{yobx::param("input_ids"), yobx::param("attention_mask", yobx::none),
                                 yobx::param("position_ids", yobx::none), yobx::param("past_key_values", yobx::none)};

// One decode step's inputs: batch 1, a past of `past` tokens, 4 heads of 32.
ForwardKwargs decode_kwargs(std::int64_t past) {
    KVCache cache;
    for (int i = 0; i < kLayers; ++i) {
        cache.key_cache.push_back(DenseTensor::zeros({1, 4, past, 32}, DType::float32));
        cache.value_cache.push_back(DenseTensor::zeros({1, 4, past, 32}, DType::float32));
    }
    return {DenseTensor::zeros({1, past + 1}, DType::int64), DenseTensor::zeros({1, 1}, DType::int64), std::move(cache)};
}

// The model: returns its first input (a copy sharing the storage, as a view would).
DenseTensor forward(const DenseTensor& ids, const ForwardKwargs&) { return ids; }

const DenseTensor kIds = DenseTensor::zeros({1, 1}, DType::int64);

void BM_call_direct(benchmark::State& state) {
    const ForwardKwargs kw = decode_kwargs(64);
    auto* f = &forward;
    benchmark::DoNotOptimize(f);
    for (auto _ : state) benchmark::DoNotOptimize(f(kIds, kw));
}
BENCHMARK(BM_call_direct);

void BM_call_pass_through(benchmark::State& state) {
    const ForwardKwargs kw = decode_kwargs(64);
    yobx::InputObserver<DenseTensor> observer;
    auto* f = &forward;
    benchmark::DoNotOptimize(f);
    auto wrapped = observer.wrap(f, kSignature, 0);  // records nothing: every call passes through
    for (auto _ : state) benchmark::DoNotOptimize(wrapped(kIds, kw));
}
BENCHMARK(BM_call_pass_through);

// The reference for recording: cloning the 67 inputs and the output.
void BM_clones_only(benchmark::State& state) {
    const ForwardKwargs kw = decode_kwargs(64);
    for (auto _ : state) {
        std::vector<DenseTensor> copies;
        copies.reserve(2 * kLayers + 4);
        copies.push_back(kIds.clone());
        copies.push_back(kw.attention_mask->clone());
        copies.push_back(kw.position_ids->clone());
        for (const auto& t : kw.past_key_values->key_cache) copies.push_back(t.clone());
        for (const auto& t : kw.past_key_values->value_cache) copies.push_back(t.clone());
        copies.push_back(forward(kIds, kw).clone());
        benchmark::DoNotOptimize(copies);
    }
}
BENCHMARK(BM_clones_only);

// One recorded call (a fresh observer each time, so every call records).
void BM_record_call(benchmark::State& state) {
    const ForwardKwargs kw = decode_kwargs(64);
    for (auto _ : state) {
        yobx::InputObserver<DenseTensor> observer;
        auto wrapped = observer.wrap(&forward, kSignature, 1);
        benchmark::DoNotOptimize(wrapped(kIds, kw));
    }
}
BENCHMARK(BM_record_call);

// Phases 2 and 3 on 3 recorded calls: the info is copied each time so that the
// alignment is not cached; the copy alone is measured apart.
yobx::InputObserver<DenseTensor>& observed() {
    static yobx::InputObserver<DenseTensor> observer = [] {
        yobx::InputObserver<DenseTensor> o;
        auto wrapped = o.wrap(&forward, kSignature);
        for (std::int64_t past = 64; past < 67; ++past) wrapped(kIds, decode_kwargs(past));
        return o;
    }();
    return observer;
}

void BM_copy_info(benchmark::State& state) {
    const auto& info = observed().info();
    for (auto _ : state) {
        auto copy = info;
        benchmark::DoNotOptimize(copy);
    }
}
BENCHMARK(BM_copy_info);

void BM_infer_dynamic_shapes(benchmark::State& state) {
    const auto& info = observed().info();
    for (auto _ : state) {
        auto copy = info;
        benchmark::DoNotOptimize(copy.infer_dynamic_shapes({.dim_names = true}));
    }
}
BENCHMARK(BM_infer_dynamic_shapes);

void print_ratios(const bench::Times& times) {
    const auto get = [&](const char* name) { return times.count(name) ? times.at(name) : -1.0; };
    const double direct = get("BM_call_direct"), through = get("BM_call_pass_through");
    if (direct > 0 && through > 0)
        std::cout << "pass-through: +" << through - direct << " ns per call, ratio wrapped/direct: "
                  << through / direct << "x\n";
    const double clones = get("BM_clones_only"), record = get("BM_record_call");
    if (clones > 0 && record > 0) std::cout << "recording/clones ratio: " << record / clones << "x\n";
    const double copy = get("BM_copy_info"), infer = get("BM_infer_dynamic_shapes");
    if (copy > 0 && infer > 0)
        std::cout << "infer_dynamic_shapes (3 calls x 67 tensors, alignment included): " << (infer - copy) / 1000
                  << " us\n";
}

}  // namespace

int main(int argc, char** argv) { return bench::run(argc, argv, print_ratios); }
