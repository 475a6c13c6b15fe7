// yobx/adapters/libtorch/module.hpp — TorchScript modules observed: signatures, calls, wrapped methods.
//
// signature_from_schema and signature_of read a method's Signature from its c10::FunctionSchema;
// call_method, method_runner, wrap_method and wrap_forward run a torch::jit::Module's method
// with an InputObserver recording each call; called_operators lists the aten operators it calls.
#pragma once

#include <yobx/adapters/libtorch/ivalue.hpp>
#include <yobx/error.hpp>
#include <yobx/observer.hpp>
#include <yobx/value.hpp>

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

namespace libtorch {

/// The Signature of a TorchScript method from its schema: parameter names,
/// defaults and keyword-only parameters; `self` is skipped. A default that is
/// not None, bool, int, float or str throws not_implemented_error naming it.
///   signature_from_schema(module.get_method("forward").function().getSchema())
inline Signature signature_from_schema(const c10::FunctionSchema& schema) {
    std::vector<Parameter> params;
    const auto& arguments = schema.arguments();
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const c10::Argument& a = arguments[i];
        if (i == 0 && a.name() == "self") continue;
        const ParamKind kind = a.kwarg_only() ? ParamKind::keyword_only : ParamKind::positional_or_keyword;
        std::optional<DefaultValue> def;
        if (const auto& d = a.default_value()) {
            if (d->isNone()) def = DefaultValue();
            else if (d->isBool()) def = DefaultValue(d->toBool());
            else if (d->isInt()) def = DefaultValue(d->toInt());
            else if (d->isDouble()) def = DefaultValue(d->toDouble());
            else if (d->isString()) def = DefaultValue(d->toStringRef());
            else
                throw not_implemented_error("signature_from_schema: parameter '" + a.name() + "' of " + schema.name() +
                                            " has a default of tag " + d->tagKind() +
                                            "; a yobx::Signature default is None, bool, int, float or str");
        }
        params.push_back(Parameter{a.name(), kind, std::move(def)});
    }
    if (schema.is_vararg()) params.push_back(var_args("args"));
    return Signature(std::move(params));
}

/// The Signature of a method of a TorchScript module (forward by default).
inline Signature signature_of(const torch::jit::Module& module, const std::string& method = "forward") {
    const auto m = module.find_method(method);
    if (!m) throw value_error("signature_of: the module has no method '" + method + "'");
    return signature_from_schema(m->function().getSchema());
}

/// Calls a TorchScript method with Values: positional arguments by position, keywords by name,
/// each converted with to_ivalue; the method's IValue as it returned it.
inline c10::IValue call_method(const torch::jit::Method& method, const Args<at::Tensor>& args,
                               const Kwargs<at::Tensor>& kwargs = {}) {
    std::vector<c10::IValue> in;
    in.reserve(args.size());
    for (const auto& a : args) in.push_back(to_ivalue(a));
    torch::jit::Kwargs kw;
    for (const auto& [k, x] : kwargs) kw.emplace(k, to_ivalue(x));
    return method(std::move(in), kw);
}

/// The runner InputObserver::check_discrepancies takes, for a method of a TorchScript module: each
/// call, given as (args, kwargs), goes to call_method, and the result comes back as a Value.
///   observer.check_discrepancies(yobx::libtorch::method_runner(module));
/// A module without that method throws value_error naming it.
inline auto method_runner(const torch::jit::Module& module, const std::string& method = "forward") {
    const auto m = module.find_method(method);
    if (!m) throw value_error("method_runner: the module has no method '" + method + "'");
    return [m = *m](const TValue& args_kwargs) {
        return from_ivalue(call_method(m, args_kwargs[0].items(), args_kwargs[1].dict()));
    };
}

/// A callable that records calls of a TorchScript module's method `method` in
/// `observer`, then calls it. It takes what Module::forward takes:
///   auto lstm = yobx::libtorch::wrap_method(observer, module, "forward__0");
///   lstm({x, state});
/// The signature comes from the method's schema (signature_of). Positional arguments
/// are given by position, keyword arguments by name; the result is the method's
/// IValue as it returned it. The arguments are converted with from_ivalue on every
/// call (type_error for a kind it does not convert); the result only when the call
/// is recorded. A module without that method throws value_error naming it.
inline auto wrap_method(InputObserver<at::Tensor>& observer, torch::jit::Module module, const std::string& method,
                        std::size_t store_n_calls = 3) {
    Signature signature = signature_of(module, method);
    // The result is the method's IValue, untouched: only a recorded call converts it (to store its tensors).
    auto call = [m = module.get_method(method)](Args<at::Tensor> args, Kwargs<at::Tensor> kwargs) -> c10::IValue {
        return call_method(m, args, kwargs);
    };
    auto recorded = observer.wrap(std::move(call), std::move(signature), store_n_calls);
    return [recorded](std::vector<c10::IValue> inputs, const torch::jit::Kwargs& kwargs = {}) mutable {
        Args<at::Tensor> args;
        args.reserve(inputs.size());
        for (const auto& i : inputs) args.push_back(from_ivalue(i));
        Kwargs<at::Tensor> kw;
        for (const auto& [k, x] : kwargs) kw.insert_or_assign(k, from_ivalue(x));
        return recorded(std::move(args), std::move(kw));
    };
}

/// The operators a method of a TorchScript module calls (`aten::relu_`, `aten::add_`, ...), in the
/// order of their first call, the calls of its submodules inlined and the blocks of `if` and loops
/// visited; the interpreter's own nodes (`prim::`) are left out. Scripted and traced models call the
/// in-place kernels, so this is the list to patch (kernel_patch) from:
///   called_operators(module)  // {"aten::_convolution", "aten::batch_norm", "aten::relu_", ...}
/// A module without that method throws value_error naming it.
inline std::vector<std::string> called_operators(const torch::jit::Module& module, const std::string& method = "forward") {
    const auto m = module.find_method(method);
    if (!m) throw value_error("called_operators: the module has no method '" + method + "'");
    std::shared_ptr<torch::jit::Graph> graph = m->graph()->copy();
    torch::jit::Inline(*graph);
    std::vector<std::string> ops;
    const auto visit = [&](const auto& self, torch::jit::Block* block) -> void {
        for (torch::jit::Node* node : block->nodes()) {
            const std::string kind = node->kind().toQualString();
            if (kind.rfind("prim::", 0) != 0 && std::find(ops.begin(), ops.end(), kind) == ops.end()) ops.push_back(kind);
            for (torch::jit::Block* b : node->blocks()) self(self, b);
        }
    };
    visit(visit, graph->block());
    return ops;
}

/// wrap_method for `forward`:
///   auto forward = yobx::libtorch::wrap_forward(observer, module);
///   forward({input_ids}, {{"attention_mask", mask}});
inline auto wrap_forward(InputObserver<at::Tensor>& observer, torch::jit::Module module,
                         std::size_t store_n_calls = 3) {
    return wrap_method(observer, std::move(module), "forward", store_n_calls);
}

}  // namespace libtorch

}  // namespace yobx
