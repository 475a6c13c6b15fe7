// The demo: a tiny LibTorch decoder generates text for two prompts (different
// batch sizes and lengths) under an InputObserver, which then prints what
// torch.export needs (arguments it can trace without specializing, and the
// dynamic shapes) and saves them for Python: the export arguments and every
// observed call's arguments with save_value (torch.load reads them), the
// dynamic shapes as a .py file. Usage: tiny_llm_generate [output directory, default .]
#include "tiny_llm.hpp"

#include <yobx/adapters/libtorch.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    tiny_llm::TinyLLM model = tiny_llm::make_model();

    // The parameters of forward: input_ids, attention_mask=None, position_ids=None, past_key_values=None.
    const yobx::Signature signature = tiny_llm::forward_signature();
    yobx::InputObserver<at::Tensor> observer;
    // Records up to 8 calls (2 prompts x (prefill + 3 decode steps)), then passes through.
    auto forward = observer.wrap([&](const at::Tensor& input_ids, const tiny_llm::ForwardKwargs& kw) {
        return model->forward(input_ids, kw);
    }, signature, /*store_n_calls=*/8);

    const int64_t vocab = model->config.vocab_size;
    for (const auto& [batch, length, seed] : {std::tuple{2, 5, 1}, std::tuple{3, 7, 2}}) {
        const at::Tensor tokens = tiny_llm::generate(forward, tiny_llm::make_prompt(batch, length, vocab, seed), 4);
        std::cout << "prompt of batch " << batch << " and length " << length << ": generated "
                  << tokens.size(1) << " tokens per row\n";
    }

    std::cout << "observed calls: " << observer.num_obs() << "\n";
    // Every dynamic dimension at least 2 and distinct (torch.export specializes 0 and 1, and decode
    // calls have sequence_length 1), the relation total = past + sequence kept.
    const yobx::Value<at::Tensor> kwargs = observer.infer_export_arguments({.set_batch_dimension_for = true});
    std::cout << "export arguments:\n";
    for (const auto& [name, value] : kwargs.dict()) std::cout << "  " << name << ": " << value << "\n";

    const yobx::DynamicShapes dynamic_shapes =
        observer.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true});
    std::cout << "dynamic_shapes = " << dynamic_shapes.to_python() << "\n";

    // For Python: torch.load reads the arguments, the .py file defines dynamic_shapes.
    yobx::Value<at::Tensor>::List calls;  // each observed call, an absent cache filled as empty
    for (std::size_t i = 0; i < observer.num_obs(); ++i) calls.push_back(observer.infer_arguments(i));
    yobx::libtorch::save_value(kwargs, dir + "/tiny_llm_export_args.pt");
    yobx::libtorch::save_value(yobx::Value<at::Tensor>::list(std::move(calls)), dir + "/tiny_llm_calls.pt");
    const std::string comment = "The dynamic shapes of TinyLLM.forward, inferred by yobx from " +
                                std::to_string(observer.num_obs()) + " observed calls.";
    yobx::libtorch::save_python(dir + "/tiny_llm_dynamic_shapes.py", dynamic_shapes.to_python(), comment);
    // The same with derived_dims: one name per label, the relation found as a comment.
    yobx::libtorch::save_python(dir + "/tiny_llm_derived_shapes.py",
                                observer.infer_dynamic_shapes({.set_batch_dimension_for = true, .derived_dims = true}).to_python(),
                                comment);
    std::cout << "saved tiny_llm_export_args.pt, tiny_llm_calls.pt (torch.load), tiny_llm_dynamic_shapes.py and "
                 "tiny_llm_derived_shapes.py\n";
    // The files yobx-export reads (export_args.pt, dynamic_shapes.py, calls.pt, made.pt), in tiny_llm/:
    //   yobx-export --model models:tiny_llm --observed tiny_llm --aoti tiny_llm.pt2
    yobx::libtorch::save_observations(observer, dir + "/tiny_llm",
                                      {.arguments = {.set_batch_dimension_for = true},
                                       .dynamic_shapes = {.set_batch_dimension_for = true, .dim_names = true}});
    std::cout << "saved tiny_llm/ for yobx-export\n";
}
