// Observes a TorchScript model written by script_model.py while C++ calls it,
// then writes what check_export.py and yobx-export export with the real torch.export:
// <name>/ (save_observations: export_args.pt, dynamic_shapes.py, calls.pt with absent
// inputs filled as check_fills chose, made.pt) and <name>_derived_shapes.py (to_python()
// with derived_dims). The detector
// (fasterrcnn) and the LSTM (whose scripted method is forward__0) are only
// observed, and their calls replayed on the module.
//   observe_scripted <resnet18|encoder|bert|flat_decoder|patches|convnet|fasterrcnn|lstm> <module.pt> <output directory>
// With `--package <name>.pt2` (an AOTInductor package yobx-export compiled from those files), it
// observes the same calls again and checks the package on each, absent inputs filled as
// check_fills chose: its outputs must be the module's on the call as made.
#include <yobx/adapters/aoti.hpp>
#include <yobx/adapters/libtorch.hpp>

#include <torch/script.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

// resnet18 at batch 2 to 4 and image sizes from 96x128 to 224x224.
void call_resnet(auto& forward) {
    for (const auto& [batch, height, width] :
         {std::tuple{2, 96, 128}, std::tuple{3, 160, 192}, std::tuple{4, 224, 224}, std::tuple{2, 128, 96}})
        forward({torch::randn({batch, 3, height, width})});
}

// The encoder with a padding mask (true = padded) in some calls only; no row is all padding.
void call_encoder(auto& forward) {
    for (const auto& [batch, seq, masked] : {std::tuple{2, 5, true}, std::tuple{3, 7, false}, std::tuple{2, 6, true},
                                             std::tuple{4, 3, false}, std::tuple{3, 8, true}}) {
        const at::Tensor src = torch::randn({batch, seq, 32});
        if (!masked) {
            forward({src});
            continue;
        }
        at::Tensor mask = torch::zeros({batch, seq}, at::kBool);
        for (std::int64_t row = 0; row < batch; ++row) mask.index_put_({row, torch::indexing::Slice(seq - row, seq)}, true);
        forward({src}, {{"src_key_padding_mask", mask}});
    }
}

// The BERT-like encoder on 4 calls, its mask (0 = padded, some rows padded) and token types given as
// keywords in some only: absent, they mean "attend everywhere" and "type 0".
void call_bert(auto& forward) {
    for (const auto& [batch, seq, masked, typed] : {std::tuple{2, 5, false, false}, std::tuple{3, 7, true, true},
                                                    std::tuple{2, 6, false, true}, std::tuple{4, 3, true, false}}) {
        const at::Tensor ids = torch::randint(0, 64, {batch, seq}, at::kLong);
        torch::jit::Kwargs kwargs;
        if (masked) {
            at::Tensor mask = torch::ones({batch, seq}, at::kLong);
            for (std::int64_t row = 0; row < batch; ++row) mask.index_put_({row, torch::indexing::Slice(seq - row, seq)}, 0);
            kwargs.emplace("attention_mask", mask);
        }
        if (typed) kwargs.emplace("token_type_ids", torch::randint(0, 2, {batch, seq}, at::kLong));
        forward({ids}, kwargs);
    }
}

// A GPT-style decoder on two prompts, each a prefill with an empty cache then 3 decode steps, its
// KV cache a flat list [key_0, value_0, key_1, value_1, key_2, value_2] fed back from the outputs.
void call_flat_decoder(auto& forward) {
    for (const auto& [batch, prompt] : {std::tuple{2, 5}, std::tuple{3, 7}}) {
        std::vector<at::Tensor> cache(6, torch::zeros({batch, 4, 0, 8}));
        at::Tensor ids = torch::randint(0, 64, {batch, prompt}, at::kLong);
        for (int step = 0; step < 4; ++step) {
            const c10::IValue out = forward({ids, c10::List<at::Tensor>(cache)});
            cache = out.toTupleRef().elements()[1].toTensorVector();
            ids = torch::randint(0, 64, {batch, 1}, at::kLong);
        }
    }
}

// A patch embedding on images whose sides are multiples of its 8x8 patches.
void call_patches(auto& forward) {
    for (const auto& [batch, height, width] : {std::tuple{2, 16, 24}, std::tuple{3, 32, 16}, std::tuple{2, 24, 40}})
        forward({torch::randn({batch, 3, height, width})});
}

// A convolutional classifier on channels-last images (the layout a vision service often feeds).
void call_convnet(auto& forward) {
    for (const auto& [batch, height, width] : {std::tuple{2, 16, 24}, std::tuple{3, 20, 12}, std::tuple{2, 32, 32}})
        forward({torch::randn({batch, 3, height, width}).contiguous(at::MemoryFormat::ChannelsLast)});
}

// A detector on lists of two images of different sizes.
void call_detector(auto& forward) {
    for (const auto& [h0, w0, h1, w1] : {std::tuple{96, 128, 112, 96}, std::tuple{128, 128, 96, 160}, std::tuple{160, 112, 128, 128}})
        forward({c10::List<at::Tensor>({torch::rand({3, h0, w0}), torch::rand({3, h1, w1})})});
}

// An LSTM on batches of sequences, with its initial state (h0, c0) in some calls only.
void call_lstm(auto& forward) {
    for (const auto& [batch, seq, state] : {std::tuple{2, 5, true}, std::tuple{3, 7, false}, std::tuple{4, 6, true}}) {
        const at::Tensor x = torch::randn({batch, seq, 4});
        if (state) forward({x, c10::ivalue::Tuple::create(torch::randn({1, batch, 8}), torch::randn({1, batch, 8}))});
        else forward({x});
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 && !(argc == 6 && std::string(argv[4]) == "--package")) {
        std::cerr << "usage: observe_scripted <resnet18|encoder|bert|flat_decoder|patches|convnet|fasterrcnn|lstm> <module.pt> <output directory> "
                     "[--package <file.pt2>]\n";
        return 2;
    }
    const std::string name = argv[1], dir = argv[3];
    if (name == "fasterrcnn") {
        // A scripted torchvision detector calls torchvision::nms and torchvision::roi_align, which
        // torchvision's own library registers: load it before torch::jit::load.
        if (!dlopen(YOBX_TORCHVISION_OPS, RTLD_NOW | RTLD_GLOBAL))
            throw std::runtime_error(std::string("cannot load torchvision's operators: ") + dlerror());
    }
    torch::jit::Module module = torch::jit::load(argv[2]);
    module.eval();
    torch::NoGradGuard no_grad;
    torch::manual_seed(0);
    yobx::InputObserver<at::Tensor> observer;
    // A scripted nn.LSTM has no forward: its overloads are forward__0 (a tensor) and forward__1 (packed).
    const std::string method = name == "lstm" ? "forward__0" : "forward";
    auto forward = yobx::libtorch::wrap_method(observer, module, method, /*store_n_calls=*/8);
    if (name == "resnet18") call_resnet(forward);
    else if (name == "encoder") call_encoder(forward);
    else if (name == "bert") call_bert(forward);
    else if (name == "flat_decoder") call_flat_decoder(forward);
    else if (name == "patches") call_patches(forward);
    else if (name == "convnet") call_convnet(forward);
    else if (name == "fasterrcnn") call_detector(forward);
    else if (name == "lstm") call_lstm(forward);
    else throw std::runtime_error("unknown model " + name);

    // Each call replayed on the module as it was made.
    const auto replay = observer.check_discrepancies(yobx::libtorch::method_runner(module, method));
    for (const auto& d : replay)
        if (!d.success) throw std::runtime_error("call " + std::to_string(d.index) + " replayed: " + d.error);
    std::cout << name << ": " << replay.size() << " calls replayed as made, same outputs\n";
    if (name == "fasterrcnn" || name == "lstm") {
        std::cout << "dynamic_shapes = " << observer.infer_dynamic_shapes({.dim_names = true}).to_python() << "\n";
        return 0;
    }

    // The fills of absent inputs, checked on the module: each call with an absent input must give the
    // same outputs filled as made (the BERT mask: ones, not the automatic zeros).
    const yobx::ExportSpec spec = observer.infer_export_spec(yobx::libtorch::method_runner(module, method));
    for (const auto& a : spec.absent) {
        std::cout << a.to_string() << "\n";
        if (!a.checked || !a.failing.empty()) throw std::runtime_error("a fill does not reproduce the calls: " + a.to_string());
    }
    // The dimensions of these models are independent (batch, image size, sequence length): a relation
    // found between them would be a chance one.
    for (const auto& r : spec.relations) throw std::runtime_error("a chance relation: " + r.to_string());
    if (argc == 6) {
        // The package in place of the module, on every observed call (absent inputs filled).
        const yobx::libtorch::PackageRunner package(argv[5], observer.info().signature());
        const auto checked = observer.check_discrepancies(package, 1e-4, 0.1, yobx::Replay::inferred);
        double worst = 0;
        for (const auto& d : checked) {
            if (!d.success)
                throw std::runtime_error("call " + std::to_string(d.index) + " on the package: " +
                                         (d.error.empty() ? "differs by " + std::to_string(d.abs) : d.error));
            worst = std::max(worst, d.abs);
        }
        // A call that breaks the exported spec (its first input one rank short) is refused before it
        // runs: AOTInductor itself would run it and return garbage.
        yobx::Value<at::Tensor> call = observer.infer_arguments(0, {.as_args_kwargs = true});
        yobx::Value<at::Tensor>::List args = call[0].items();
        yobx::Kwargs<at::Tensor> kwargs = call[1].dict();
        yobx::Value<at::Tensor>& first = args.empty() ? kwargs.begin()->second : args[0];
        first = yobx::Value<at::Tensor>(first.tensor().flatten());
        try {
            (void)package(yobx::Value<at::Tensor>::tuple({yobx::Value<at::Tensor>::tuple(args), yobx::Value<at::Tensor>::dict(kwargs)}));
            throw std::runtime_error("a call of the wrong rank was not refused");
        } catch (const yobx::value_error& e) {
            std::cout << e.what() << "\n";
        }
        // Inputs that disagree on a dynamic dimension (a mask of another batch): refused, naming both.
        if (name == "bert") {
            const yobx::Value<at::Tensor> made = observer.infer_arguments(0, {.as_args_kwargs = true});
            kwargs = made[1].dict();
            kwargs.insert_or_assign("attention_mask", yobx::Value<at::Tensor>(torch::ones({3, 5}, at::kLong)));
            try {
                (void)package(yobx::Value<at::Tensor>::tuple({made[0], yobx::Value<at::Tensor>::dict(kwargs)}));
                throw std::runtime_error("inputs disagreeing on a dimension were not refused");
            } catch (const yobx::value_error& e) {
                const std::string m = e.what();
                if (m.find(" axis 0 is 3, ") == std::string::npos || m.find("requires them equal (batch_size)") == std::string::npos)
                    throw;  // yobx's label of torch's s0
                std::cout << m << "\n";
            }
        }
        // The decoder's layer 1 with a key cache of 6 positions and a value cache of 7: torch.export
        // holds the equality only after the decompositions AOTInductor compiles (the package itself
        // fails inside its bmm); refused before running, naming both.
        if (name == "flat_decoder") {
            const yobx::Value<at::Tensor> made = observer.infer_arguments(1, {.as_args_kwargs = true});
            yobx::Value<at::Tensor>::List cache = made[0].items()[1].items();
            const at::Tensor key = cache[2].tensor();
            cache[3] = yobx::Value<at::Tensor>(torch::randn({key.size(0), key.size(1), key.size(2) + 1, key.size(3)}));
            const auto broken = yobx::Value<at::Tensor>::tuple(
                {yobx::Value<at::Tensor>::tuple({made[0].items()[0], yobx::Value<at::Tensor>::list(cache)}), made[1]});
            try {
                (void)package(broken);
                throw std::runtime_error("a layer whose key and value lengths differ was not refused");
            } catch (const yobx::value_error& e) {
                const std::string m = e.what();
                // torch's assertion is Eq(value's symbol, key's): the value named first
                if (m != "PackageRunner: args[1][3] axis 2 is " + std::to_string(key.size(2) + 1) + ", args[1][2] axis 2 is " +
                             std::to_string(key.size(2)) + ": '" + std::string(argv[5]) +
                             "' requires them equal (past_sequence_length): refused before running")
                    throw;
                std::cout << m << "\n";
            }
            // A batch of 5, never observed (2 and 3 were): the program takes it, as_observed refuses it.
            const yobx::Value<at::Tensor> wide = yobx::Value<at::Tensor>::tuple(
                {yobx::Value<at::Tensor>::tuple({yobx::Value<at::Tensor>(torch::randint(0, 64, {5, 1}, at::kLong)),
                                                 yobx::Value<at::Tensor>::list(yobx::Value<at::Tensor>::List(
                                                     6, yobx::Value<at::Tensor>(torch::randn({5, 4, 6, 8}))))}),
                 yobx::Value<at::Tensor>::dict({})});
            (void)package(wide);
            const yobx::libtorch::PackageRunner strict(argv[5], observer.info().signature(), {.as_observed = true});
            try {
                (void)strict(wide);
                throw std::runtime_error("a batch never observed was not refused with as_observed");
            } catch (const yobx::value_error& e) {
                const std::string m = e.what();
                if (m.find("args[0] axis 0 is 5, yobx observed ") == std::string::npos || m.find(" in [2, 3]") == std::string::npos)
                    throw;
                std::cout << m << "\n";
            }
        }
        // Images of 20x24: the program asserts the sides divisible by 8 (its reshape into patches).
        if (name == "patches") {
            try {
                (void)package(yobx::Value<at::Tensor>::tuple(
                    {yobx::Value<at::Tensor>::tuple({yobx::Value<at::Tensor>(torch::randn({2, 3, 20, 24}))}),
                     yobx::Value<at::Tensor>::dict({})}));
                throw std::runtime_error("an image of 20x24 was not refused");
            } catch (const yobx::value_error& e) {
                const std::string m = e.what();
                if (m.find("args[0] axis 2 is 20") == std::string::npos || m.find(" requires Eq(") == std::string::npos) throw;
                std::cout << m << "\n";
            }
        }
        // Exported from channels-last images, the package was compiled for that layout: the runner
        // gives it each call so laid out, a contiguous image as well (its outputs the module's).
        if (name == "convnet") {
            std::string strides;
            for (const auto& s : package.inputs().inputs()[0].strides) strides += (strides.empty() ? "" : ", ") + s.to_string();
            std::cout << "the package's images: strides [" << strides << "]\n";
            if (package.inputs().inputs()[0].strides.at(1).maybe_constant() != 1)
                throw std::runtime_error("the package was not compiled for channels-last images");
            const at::Tensor image = torch::randn({2, 3, 24, 16});
            const auto want = module.get_method(method)({image}).toTensor();
            const auto got = package(yobx::Value<at::Tensor>::tuple(
                {yobx::Value<at::Tensor>::tuple({yobx::Value<at::Tensor>(image.contiguous())}), yobx::Value<at::Tensor>::dict({})}));
            const double diff = (got.tensor() - want).abs().max().item<double>();
            if (!(diff < 1e-4)) throw std::runtime_error("a contiguous image on the channels-last package differs by " + std::to_string(diff));
            std::cout << "a contiguous image, laid out channels last by the runner: the module's outputs\n";
        }
        // A file that is not a package.
        try {
            const yobx::libtorch::PackageRunner missing(dir + "/no_such_package.pt2");
            throw std::runtime_error("a missing package was loaded");
        } catch (const yobx::runtime_error& e) {
            const std::string m = e.what();
            if (m.rfind("PackageRunner: cannot load '" + dir + "/no_such_package.pt2': ", 0) != 0) throw;
            std::cout << m.substr(0, m.find('\n')) << "\n";
        }
        std::cout << "package check ok: " << name << ", " << checked.size() << " calls, the package's outputs equal the "
                  << "module's on each call as made (max difference " << worst << ")\n";
        return 0;
    }
    const yobx::DynamicShapes ds = observer.infer_dynamic_shapes({.dim_names = true});
    const yobx::DynamicShapes derived = observer.infer_dynamic_shapes({.dim_names = true, .derived_dims = true});
    const yobx::Value<at::Tensor> export_args = observer.infer_export_arguments();
    // <dir>/<name>/: export_args.pt, dynamic_shapes.py, calls.pt, made.pt, what yobx-export reads
    yobx::libtorch::save_observations(observer, dir + "/" + name);
    // the files check_export.py runs: to_python() with derived_dims, code ending in `dynamic_shapes = ...`
    yobx::libtorch::save_python(dir + "/" + name + "_derived_shapes.py", derived.to_python(), "The dynamic shapes of " + name + ", inferred by yobx.");
    // the labels as strings, for an ONNX export's dynamic axes (tests/onnx/check_models.py)
    yobx::libtorch::save_python(dir + "/" + name + "_dynamic_axes.py", ds.to_python_strings(), "The dynamic axes of " + name + ", inferred by yobx.");
    std::cout << name << ": " << observer.num_obs() << " calls observed\nexport arguments: " << export_args
              << "\ndynamic_shapes = " << ds.to_python() << "\n";
}
