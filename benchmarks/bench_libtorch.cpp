// The observer's cost on the LibTorch demo's decode step (examples/tiny_llm.hpp:
// batch 2, 5 cached tokens, 1 new token): the model called directly, through
// a wrapper that passes through (its store_n_calls is used up), and through a
// wrapper that records (inputs and outputs cloned, the call stored). Prints
// each wrapper's cost over the direct call.
#include "../examples/tiny_llm.hpp"
#include "times_reporter.hpp"

#include <yobx/adapters/libtorch.hpp>

#include <iostream>

namespace {

// The model and one decode step's arguments, after a prefill of 5 tokens.
struct DecodeStep {
    tiny_llm::TinyLLM model = tiny_llm::make_model();
    at::Tensor ids, mask, positions;
    tiny_llm::KVCache cache;

    DecodeStep() {
        torch::NoGradGuard no_grad;
        const at::Tensor prompt = tiny_llm::make_prompt(2, 5, model->config.vocab_size, 1);
        auto out = model->forward(prompt, {at::ones({2, 5}, at::kLong), std::nullopt, std::nullopt});
        cache = out.past_key_values;
        ids = out.logits.select(1, -1).argmax(-1, true);
        mask = at::ones({2, 6}, at::kLong);
        positions = at::full({2, 1}, 5, at::kLong);
    }
    tiny_llm::ForwardKwargs kwargs() const { return {mask, positions, cache}; }
    auto forward() {
        return [this](const at::Tensor& input_ids, const tiny_llm::ForwardKwargs& kw) { return model->forward(input_ids, kw); };
    }
};

DecodeStep& step() {
    static DecodeStep s;
    return s;
}

void BM_decode_direct(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    auto& s = step();
    const auto kw = s.kwargs();
    for (auto _ : state) benchmark::DoNotOptimize(s.model->forward(s.ids, kw));
}
BENCHMARK(BM_decode_direct);

void BM_decode_pass_through(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    auto& s = step();
    const auto kw = s.kwargs();
    yobx::InputObserver<at::Tensor> observer;
    auto forward = observer.wrap(s.forward(), tiny_llm::forward_signature(), /*store_n_calls=*/0);
    for (auto _ : state) benchmark::DoNotOptimize(forward(s.ids, kw));
}
BENCHMARK(BM_decode_pass_through);

// A new observer per iteration, so that every call is recorded.
void BM_decode_recording(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    auto& s = step();
    const auto kw = s.kwargs();
    for (auto _ : state) {
        yobx::InputObserver<at::Tensor> observer;
        auto forward = observer.wrap(s.forward(), tiny_llm::forward_signature(), 1);
        benchmark::DoNotOptimize(forward(s.ids, kw));
    }
}
BENCHMARK(BM_decode_recording);

void print_ratios(const bench::Times& times) {
    const auto get = [&](const char* name) { return times.count(name) ? times.at(name) : -1.0; };
    const double direct = get("BM_decode_direct");
    if (direct <= 0) return;
    for (const char* name : {"BM_decode_pass_through", "BM_decode_recording"})
        if (const double t = get(name); t > 0)
            std::cout << name << ": +" << (t - direct) / 1000 << " us per decode step, ratio to direct: " << t / direct
                      << "x\n";
}

}  // namespace

int main(int argc, char** argv) { return bench::run(argc, argv, print_ratios); }
