// A model scripted and saved in Python (docs/libtorch.md, "A model saved from
// Python"), loaded with torch::jit::load and observed through wrap_forward: the
// calls are replayed on the module as they were made, and what torch.export
// needs is saved for Python. Usage: observe_scripted_model [directory, default .]
// (it reads encoder_scripted.pt there and writes encoder_export_args.pt and
// encoder_dynamic_shapes.py next to it).
#include <yobx/adapters/libtorch.hpp>

#include <torch/script.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    torch::jit::Module module = torch::jit::load(dir + "/encoder_scripted.pt");
    module.eval();
    yobx::InputObserver<at::Tensor> observer;
    auto forward = yobx::libtorch::wrap_forward(observer, module);
    // Three calls: two with a padding mask, one without (mask is Optional[Tensor] = None).
    torch::manual_seed(0);
    forward({torch::randn({2, 5, 8}), torch::ones({2, 5})});
    forward({torch::randn({3, 7, 8})});
    forward({torch::randn({4, 6, 8}), torch::ones({4, 6})});
    std::cout << "signature: " << observer.info().signature().to_string() << "\n";

    // Each call replayed on the module as it was made (the second one without a mask).
    const auto replay = observer.check_discrepancies(yobx::libtorch::method_runner(module));
    for (const auto& d : replay)
        std::cout << "call " << d.index << ": " << (d.success ? "same outputs" : "differs: " + d.error) << "\n";
    // What the absent mask means, asked of the module: the automatic fill (zeros) would zero every
    // output, ones reproduce the call. Replays and export arguments use the chosen fill from now on.
    for (const auto& absent : observer.check_fills(yobx::libtorch::method_runner(module)))
        std::cout << absent.to_string() << "\n";

    const yobx::DynamicShapes dynamic_shapes = observer.infer_dynamic_shapes({.dim_names = true});
    const yobx::Value<at::Tensor> args = observer.infer_export_arguments();
    std::cout << "export arguments: " << args << "\n";
    std::cout << "dynamic_shapes = " << dynamic_shapes.to_python() << "\n";
    yobx::libtorch::save_value(args, dir + "/encoder_export_args.pt");
    yobx::libtorch::save_python(dir + "/encoder_dynamic_shapes.py", dynamic_shapes.to_python(), "The encoder's dynamic shapes.");
}
