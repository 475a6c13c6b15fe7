// yobx/adapters/aoti.hpp — an AOTInductor package (.pt2) run on observed calls.
//
// torch.export then torch._inductor.aoti_compile_and_package write a .pt2
// package; LibTorch 2.6's AOTIModelPackageLoader loads it in C++ and runs it on
// a flat list of tensors, whose order and structure are the exported program's
// call spec (torch's pytree JSON). PackageRunner reads that spec, flattens a
// call (args, kwargs) as torch does (flatten_call) and rebuilds the outputs as
// the model returned them, so that the package is a runner of
// check_discrepancies: one call compares it with the model it replaces on
// every observed call,
//   yobx::libtorch::PackageRunner runner("model.pt2", observer.info().signature());
//   observer.check_fills(yobx::libtorch::method_runner(module));   // absent inputs mean what they meant
//   observer.check_discrepancies(runner, 1e-4, 0.1, yobx::Replay::inferred);
// Its own header: it needs LibTorch >= 2.6 (Debian 13's libtorch-dev), and the
// rest of the adapter does not.
#pragma once

// the first thing a compiler says with an older LibTorch
#if !__has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#error "yobx/adapters/aoti.hpp needs LibTorch >= 2.6 (torch::inductor::AOTIModelPackageLoader in torch/csrc/inductor/aoti_package/model_package_loader.h); Debian 12's LibTorch 1.13 has none: build with Debian 13's libtorch-dev"
#endif

#include <yobx/adapters/libtorch.hpp>
#include <yobx/pytree.hpp>
#include <yobx/program.hpp>
#include <yobx/treespec_torch.hpp>

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace yobx::libtorch {

/// A .pt2 package as a callable on a call (args, kwargs), returning the outputs in the model's
/// structure. Copies share the loaded package.
class PackageRunner {
public:
    /// Loads the package; a file that is not a package, or a package without a call spec, is a
    /// runtime_error naming the path. With the model's signature, each call is first bound to the
    /// package's layout (arrange_call): an input the call passed by position and the export by
    /// name, or the other way round, finds its place.
    /// `options` (RunnerOptions): with `.as_observed = true`, a call is also refused when it breaks
    /// what yobx observed (the dimensions of one label equal, each label within its observed range
    /// and `.range_slack`). A constraint of the program yobx cannot evaluate is said once, here, on
    /// std::clog (and listed by inputs().unchecked()).
    explicit PackageRunner(const std::string& path, const Signature& signature = {}, RunnerOptions options = {})
        : path_(path), options_(options) {
        if (options_.range_slack < 0)
            throw value_error("PackageRunner: range_slack is " + std::to_string(options_.range_slack) + ", expected 0 or more");
        for (const auto& p : signature.parameters())
            if (p.kind != ParamKind::var_positional && p.kind != ParamKind::var_keyword) parameters_.push_back(p.name);
        try {
            // One load at a time in the process: LibTorch 2.6's loader reads the package's JSON
            // into a shared static object (load_json_file; torch pull request 194128), and two
            // loads at once corrupt memory. Running loaded packages concurrently is safe.
            static std::mutex loading;
            const std::lock_guard<std::mutex> lock(loading);
            loader_ = std::make_shared<torch::inductor::AOTIModelPackageLoader>(path);
        } catch (const c10::Error& e) {
            throw runtime_error("PackageRunner: cannot load '" + path + "': " + e.what_without_backtrace());
        } catch (const std::exception& e) {  // a file that is not a zip archive: std::runtime_error
            throw runtime_error("PackageRunner: cannot load '" + path + "': " + e.what());
        }
        const std::vector<std::string> spec = loader_->get_call_spec();
        if (spec.size() != 2)
            throw runtime_error("PackageRunner: '" + path + "' has a call spec of " + std::to_string(spec.size()) +
                                " entries, expected the input and output specs");
        try {
            in_spec_ = treespec_loads(spec[0]);
            out_spec_ = treespec_loads(spec[1]);
        } catch (const value_error& e) {
            throw runtime_error("PackageRunner: the call spec of '" + path + "': " + e.what());
        }
        const auto metadata = loader_->get_metadata();
        if (const auto it = metadata.find(std::string(inputs_key)); it != metadata.end()) {
            try {
                inputs_ = ProgramInputs::from_json(it->second);
            } catch (const value_error& e) {
                throw runtime_error("PackageRunner: the " + std::string(inputs_key) + " metadata of '" + path + "': " + e.what());
            }
            for (const auto* c : inputs_.unchecked())
                std::clog << "PackageRunner: '" << path << "': the program's constraint " << c->text
                          << " is not checked before running: " << c->reason << "\n";
        }
    }

    /// The metadata entry in which a package describes its tensor inputs, as JSON:
    /// {"inputs": [{"dtype": "int64", "shape": ["s0", "s1 + s11"]}, ...], "ranges": {"s0": [2, null]},
    ///  "constraints": ["Eq(Mod(s1, 8), 0)"], "labels": {"s0": "batch"}, "observed": {"batch": {"min": 2, "max": 4, "tied": true}}},
    /// a dynamic dimension by its symbol or expression, the exported program's range constraints
    /// and runtime assertions, yobx's labels and what the observed calls said of them
    /// (ProgramInputs). A package compiled with it (yobx-export writes it through
    /// inductor_configs' aot_inductor.metadata) has each call checked before it runs: AOTInductor
    /// itself runs an input of another rank and returns garbage, and fails inside its compiled
    /// code on sizes the program's assertions forbid.
    static constexpr std::string_view inputs_key = "yobx.inputs";

    /// The package's input spec (the exported program's in_spec), and its output spec.
    const TreeSpec& in_spec() const noexcept { return in_spec_; }
    const TreeSpec& out_spec() const noexcept { return out_spec_; }
    /// What a call is checked against (the yobx.inputs metadata; empty without it).
    const ProgramInputs& inputs() const noexcept { return inputs_; }

    /// Runs the package on `call`, the tuple (args, kwargs): a missing or extra input is a
    /// value_error naming it (flatten_call); the outputs come back in the model's structure.
    TValue operator()(const TValue& call) const {
        std::vector<std::string> paths;
        std::vector<at::Tensor> flat =
            flatten_call(parameters_.empty() ? call : arrange_call(call, in_spec_, parameters_), in_spec_, &paths);
        SymbolValues sizes;
        try {
            sizes = inputs_.check(flat, paths, "'" + path_ + "'", options_);
        } catch (const value_error& e) {
            throw value_error(std::string("PackageRunner: ") + e.what());
        }
        // AOTInductor's code assumes the strides the program was compiled for, those of the export
        // arguments, and checks none: a cache that is a transposed view, as a first decode step's
        // often is, or a contiguous image given to a program exported from channels-last ones, runs
        // and returns garbage. A copy with the program's strides (yobx.inputs), contiguous without them.
        for (std::size_t i = 0; i < flat.size(); ++i) {
            at::Tensor& t = flat[i];
            if (const auto strides = inputs_.strides_of(i, sizes)) {
                if (t.strides() != c10::IntArrayRef(*strides)) {
                    at::Tensor laid = at::empty_strided(t.sizes(), *strides, t.options());
                    laid.copy_(t);
                    t = std::move(laid);
                }
            } else if (!t.is_contiguous()) {
                t = t.contiguous();
            }
        }
        std::vector<at::Tensor> out;
        try {
            out = loader_->run(flat);
        } catch (const c10::Error& e) {
            throw runtime_error("PackageRunner: '" + path_ + "' failed on the call: " + e.what_without_backtrace());
        } catch (const std::exception& e) {
            throw runtime_error("PackageRunner: '" + path_ + "' failed on the call: " + e.what());
        }
        if (out.size() != out_spec_.num_leaves())
            throw runtime_error("PackageRunner: '" + path_ + "' returned " + std::to_string(out.size()) +
                                " tensors, its output spec has " + std::to_string(out_spec_.num_leaves()));
        return tree_unflatten<TValue>(std::move(out), out_spec_);
    }

private:
    std::string path_;
    RunnerOptions options_;
    ProgramInputs inputs_;
    std::vector<std::string> parameters_;
    std::shared_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
    TreeSpec in_spec_;
    TreeSpec out_spec_;
};

}  // namespace yobx::libtorch
