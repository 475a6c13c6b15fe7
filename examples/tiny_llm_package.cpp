// The demo's decoder deployed without TorchScript: the AOTInductor package that
// yobx-export compiled from the files tiny_llm_generate saved (tiny_llm/, with the
// Python twin of the model as the eager model), loaded back in C++ and checked on
// the same calls: the two prompts' prefill and decode steps, past + sequence dims.
//   tiny_llm_generate .      # observes, writes tiny_llm/
//   yobx-export --model models:tiny_llm --observed tiny_llm --aoti tiny_llm.pt2
//   tiny_llm_package tiny_llm.pt2
#include "tiny_llm.hpp"

#include <yobx/adapters/aoti.hpp>
#include <yobx/adapters/libtorch.hpp>

#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: tiny_llm_package <package.pt2>\n";
        return 2;
    }
    tiny_llm::TinyLLM model = tiny_llm::make_model();
    const yobx::Signature signature = tiny_llm::forward_signature();
    yobx::InputObserver<at::Tensor> observer;
    auto forward = observer.wrap([&](const at::Tensor& input_ids, const tiny_llm::ForwardKwargs& kw) {
        return model->forward(input_ids, kw);
    }, signature, /*store_n_calls=*/8);
    const int64_t vocab = model->config.vocab_size;
    for (const auto& [batch, length, seed] : {std::tuple{2, 5, 1}, std::tuple{3, 7, 2}})
        (void)tiny_llm::generate(forward, tiny_llm::make_prompt(batch, length, vocab, seed), 4);

    // The package in place of the model, on every observed call; the prefill calls' absent
    // cache filled as infer_arguments fills it (empty, sequence 0).
    const yobx::libtorch::PackageRunner package(argv[1], signature);
    const auto checked = observer.check_discrepancies(package, 1e-4, 0.1, yobx::Replay::inferred);
    double worst = 0;
    for (const auto& d : checked) {
        std::cout << "call " << d.index << ": " << (d.success ? "same outputs" : "DIFFERENT: " + d.error) << "\n";
        if (!d.success) return 1;
        worst = std::max(worst, d.abs);
    }
    std::cout << checked.size() << " calls: the package gives the model's outputs (max difference "
              << (worst < 1e-5 ? "below 1e-5" : std::to_string(worst)) << ")\n";

    // Four threads, each loading the package and running every call at once: loading is
    // serialized by PackageRunner (LibTorch 2.6's loader is not safe to run concurrently).
    std::vector<yobx::Value<at::Tensor>> calls, outputs;
    for (std::size_t i = 0; i < observer.num_obs(); ++i) {
        calls.push_back(observer.infer_arguments(i, {.as_args_kwargs = true}));
        outputs.push_back(package(calls.back()));
    }
    std::atomic<int> differing{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k)
        threads.emplace_back([&] {
            try {
                const yobx::libtorch::PackageRunner own(argv[1], signature);
                for (std::size_t i = 0; i < calls.size(); ++i) {
                    const auto want = yobx::tree_leaves<at::Tensor>(outputs[i]), got = yobx::tree_leaves<at::Tensor>(own(calls[i]));
                    bool same = want.size() == got.size();
                    for (std::size_t j = 0; same && j < want.size(); ++j) same = at::equal(want[j], got[j]);
                    if (!same) ++differing;
                }
            } catch (const std::exception& e) {
                std::cerr << e.what() << "\n";
                ++differing;
            }
        });
    for (auto& t : threads) t.join();
    std::cout << "4 threads loaded the package and ran the " << calls.size() << " calls: " << differing.load() << " differing\n";
    if (differing.load() != 0) return 1;

    // A decode step whose mask is one longer than past + sequence: the package would run it
    // (AOTInductor checks no size); PackageRunner refuses it, naming the rule it breaks.
    yobx::Value<at::Tensor> call = observer.infer_arguments(1, {.as_args_kwargs = true});
    yobx::Kwargs<at::Tensor> kwargs = call[1].dict();
    const at::Tensor mask = kwargs.at("attention_mask").tensor();
    kwargs.insert_or_assign("attention_mask", yobx::Value<at::Tensor>(at::ones({mask.size(0), mask.size(1) + 1}, mask.options())));
    try {
        (void)package(yobx::Value<at::Tensor>::tuple({call[0], yobx::Value<at::Tensor>::dict(kwargs)}));
        std::cout << "a mask of the wrong length was run\n";
        return 1;
    } catch (const yobx::value_error& e) {
        std::cout << e.what() << "\n";
    }
}
