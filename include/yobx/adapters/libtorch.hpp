// yobx/adapters/libtorch.hpp — yobx for LibTorch: at::Tensor, c10::IValue,
// TorchScript modules, a KV cache and kernel patches.
//
// The only yobx header that includes LibTorch. It makes at::Tensor a yobx
// tensor, converts c10::IValue to and from Value<at::Tensor>, derives a
// Signature from a c10::FunctionSchema, observes a torch::jit::Module's
// forward, registers KVCache (the C++ counterpart of transformers'
// DynamicCache) as a pytree node, and turns a dispatcher kernel override into
// a PatchInfo. See docs/libtorch.md.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/error.hpp>
#include <yobx/observer.hpp>
#include <yobx/patches.hpp>
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/library.h>
#include <torch/version.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

namespace libtorch {

/// A tensor's dtype as yobx prints it: `float32`, `int64`, ... (Python's names
/// without `torch.`). It converts to c10::ScalarType.
struct DType {
    c10::ScalarType scalar_type = c10::ScalarType::Undefined;

    operator c10::ScalarType() const noexcept { return scalar_type; }
    friend bool operator==(const DType&, const DType&) = default;
    /// Python's name: DType{at::kFloat}.name() == "float32".
    std::string name() const {
        switch (scalar_type) {
            case c10::ScalarType::Float: return "float32";
            case c10::ScalarType::Double: return "float64";
            case c10::ScalarType::Half: return "float16";
            case c10::ScalarType::BFloat16: return "bfloat16";
            case c10::ScalarType::Long: return "int64";
            case c10::ScalarType::Int: return "int32";
            case c10::ScalarType::Short: return "int16";
            case c10::ScalarType::Char: return "int8";
            case c10::ScalarType::Byte: return "uint8";
            case c10::ScalarType::Bool: return "bool";
            case c10::ScalarType::ComplexFloat: return "complex64";
            case c10::ScalarType::ComplexDouble: return "complex128";
            default: return c10::toString(scalar_type);
        }
    }
    friend std::ostream& operator<<(std::ostream& os, const DType& d) { return os << d.name(); }
};

}  // namespace libtorch

/// at::Tensor as a yobx tensor. clone() is detached (the copy records no
/// autograd history); empty() and zeros() have the dtype and device of `like`.
template <>
struct tensor_traits<at::Tensor> {
    static std::vector<std::int64_t> shape(const at::Tensor& t) { return t.sizes().vec(); }
    static libtorch::DType dtype(const at::Tensor& t) { return {t.scalar_type()}; }
    static at::Tensor clone(const at::Tensor& t) { return t.detach().clone(); }
    static at::Tensor empty(const std::vector<std::int64_t>& shape, const at::Tensor& like) {
        return at::empty(shape, like.options().requires_grad(false));
    }
    static at::Tensor zeros(const std::vector<std::int64_t>& shape, const at::Tensor& like) {
        return at::zeros(shape, like.options().requires_grad(false));
    }
    /// `value` everywhere (the observer's ones and constant fills).
    static at::Tensor full(const std::vector<std::int64_t>& shape, double value, const at::Tensor& like) {
        return at::full(shape, value, like.options().requires_grad(false));
    }
    /// The elements as doubles (row-major), for InputObserver::check_discrepancies.
    static std::vector<double> to_doubles(const at::Tensor& t) {
        const at::Tensor d = t.detach().to(at::kCPU, at::kDouble).contiguous();
        const double* p = d.data_ptr<double>();
        return std::vector<double>(p, p + d.numel());
    }
};

namespace libtorch {

using TValue = Value<at::Tensor>;

/// How to_ivalue converts a registered node (a KVCache seen as a DynamicCache):
/// refuse it, or write it as the list of its children, the form torch.export's
/// dynamic shapes give such a node.
enum class CustomNodes { error, as_lists };

namespace detail {

inline std::string tag_of(const c10::IValue& v) { return v.tagKind(); }

// The type TorchScript declares for such a value: Tensor rather than the
// shaped Float(2, 3) an IValue reports (lists are invariant, so
// List[Float(2, 3)] would not be accepted as a List[Tensor]).
inline c10::TypePtr general_type(const c10::IValue& v) {
    if (v.isTensor()) return c10::TensorType::get();
    if (v.isTuple()) {
        std::vector<c10::TypePtr> types;
        for (const auto& e : v.toTupleRef().elements()) types.push_back(general_type(e));
        return c10::TupleType::create(std::move(types));
    }
    return v.type();
}

// The element type a TorchScript list or dict of these values needs: the
// unified type when there is one (List[Tensor], Dict[str, int]), Any otherwise.
inline c10::TypePtr element_type(const std::vector<c10::IValue>& items) {
    if (items.empty()) return c10::AnyType::get();
    std::vector<c10::TypePtr> types;
    types.reserve(items.size());
    for (const auto& i : items) types.push_back(general_type(i));
    std::ostringstream why_not;
    if (auto t = c10::unifyTypeList(types, why_not)) return *t;
    return c10::AnyType::get();
}

}  // namespace detail

/// c10::IValue -> Value<at::Tensor>: None, bool, int, float, str, Tensor (an
/// undefined tensor is None, as TorchScript passes an absent Optional[Tensor]),
/// List, Tuple and Dict with str keys, recursively. Anything else throws
/// type_error naming the IValue's tag:
///   from_ivalue(c10::IValue(c10::Device("cpu")))  // type_error: ... an IValue with tag Device ...
inline TValue from_ivalue(const c10::IValue& v) {
    if (v.isNone()) return TValue();
    if (v.isBool()) return TValue(v.toBool());
    if (v.isInt()) return TValue(v.toInt());
    if (v.isDouble()) return TValue(v.toDouble());
    if (v.isString()) return TValue(v.toStringRef());
    if (v.isTensor()) {
        const at::Tensor& t = v.toTensor();
        return t.defined() ? TValue(t) : TValue();
    }
    if (v.isList()) {
        TValue::List items;
        const auto list = v.toListRef();
        items.reserve(list.size());
        for (const auto& i : list) items.push_back(from_ivalue(i));
        return TValue::list(std::move(items));
    }
    if (v.isTuple()) {
        TValue::List items;
        const auto& elements = v.toTupleRef().elements();
        items.reserve(elements.size());
        for (const auto& i : elements) items.push_back(from_ivalue(i));
        return TValue::tuple(std::move(items));
    }
    if (v.isGenericDict()) {
        TValue::Dict d;
        for (const auto& entry : v.toGenericDict()) {
            if (!entry.key().isString())
                throw type_error("from_ivalue: a dict key is an IValue with tag " + detail::tag_of(entry.key()) +
                                 "; yobx::Value dicts have str keys");
            d.insert_or_assign(entry.key().toStringRef(), from_ivalue(entry.value()));
        }
        return TValue::dict(std::move(d));
    }
    throw type_error("from_ivalue: cannot convert an IValue with tag " + detail::tag_of(v) +
                     " to a yobx::Value (supported: None, Bool, Int, Double, String, Tensor, List, Tuple, "
                     "GenericDict with str keys)");
}

namespace detail {

// to_ivalue, with the element types of lists and dicts unified (`typed`: List[Tensor], as TorchScript
// declares them) or Any (what save_value pickles: a typed list or dict pickles with
// torch.jit._pickle globals, which torch.load's weights_only unpickler refuses).
inline c10::IValue to_ivalue(const TValue& v, CustomNodes custom, bool typed) {
    using K = TValue::Kind;
    const auto items_of = [&](const TValue::List& list) {
        std::vector<c10::IValue> out;
        out.reserve(list.size());
        for (const auto& i : list) out.push_back(to_ivalue(i, custom, typed));
        return out;
    };
    const auto type_of = [&](const std::vector<c10::IValue>& items) {
        return typed ? detail::element_type(items) : c10::AnyType::get();
    };
    const auto list_of = [&](const TValue::List& list) {
        std::vector<c10::IValue> items = items_of(list);
        c10::impl::GenericList out(type_of(items));
        out.reserve(items.size());
        for (auto& i : items) out.push_back(std::move(i));
        return c10::IValue(std::move(out));
    };
    switch (v.kind()) {
        case K::none: return c10::IValue();
        case K::boolean: return c10::IValue(v.as_bool());
        case K::integer: return c10::IValue(v.as_int());
        case K::floating: return c10::IValue(v.as_double());
        case K::string: return c10::IValue(v.as_string());
        case K::tensor: return c10::IValue(v.tensor());
        case K::list: return list_of(v.items());
        case K::tuple: return c10::IValue(c10::ivalue::Tuple::create(items_of(v.items())));
        case K::dict: {
            std::vector<std::string> keys;
            std::vector<c10::IValue> values;
            for (const auto& [k, x] : v.dict()) {
                keys.push_back(k);
                values.push_back(to_ivalue(x, custom, typed));
            }
            c10::impl::GenericDict d(c10::StringType::get(), type_of(values));
            for (std::size_t i = 0; i < keys.size(); ++i) d.insert(keys[i], std::move(values[i]));
            return c10::IValue(std::move(d));
        }
        case K::custom: {
            if (custom == CustomNodes::error)
                throw type_error("to_ivalue: " + v.type_name() +
                                 " is a registered node, which has no IValue form; pass CustomNodes::as_lists "
                                 "to write it as the list of its children");
            return list_of(v.custom().children);
        }
    }
    throw type_error("to_ivalue: unknown Value kind");
}

}  // namespace detail

/// Value<at::Tensor> -> c10::IValue, the inverse of from_ivalue. A list's or
/// dict's element type is the unified type of its items (List[Tensor] for a
/// list of tensors), so TorchScript accepts it where it declares one. A
/// registered node (Kind::custom) throws type_error unless `custom` is
/// CustomNodes::as_lists.
inline c10::IValue to_ivalue(const TValue& v, CustomNodes custom = CustomNodes::error) {
    return detail::to_ivalue(v, custom, /*typed=*/true);
}

}  // namespace libtorch

namespace detail {

/// c10::IValue as a run-time-structured pytree node, read through its Value
/// form: tree_flatten<at::Tensor>(ivalue) works on what from_ivalue converts,
/// so an observed forward may return an IValue.
template <>
struct dynamic_node<c10::IValue> {
    using leaf_type = at::Tensor;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const c10::IValue& v, Ctx& c) {
        dynamic_node<libtorch::TValue>::flatten(libtorch::from_ivalue(v), c);
    }
    template <class R>
    static c10::IValue unflatten(R& r) {
        return libtorch::to_ivalue(dynamic_node<libtorch::TValue>::unflatten(r));
    }
};

}  // namespace detail

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

/// The bytes of a torch.save file holding `v` (registered nodes as lists of their children), which
/// Python's torch.load reads, with torch 2.6's default weights_only=True too: lists and dicts are
/// pickled untagged (torch::pickle_save tags them with torch.jit._pickle.restore_type_tag, a global
/// the weights_only unpickler refuses), tensors as torch.save writes them.
///   std::vector<char> bytes = pickle_value(observer.infer_arguments());
inline std::vector<char> pickle_value(const TValue& v) {
    std::vector<char> pickle;
    torch::jit::Pickler pickler([&](const char* p, std::size_t n) { pickle.insert(pickle.end(), p, p + n); },
                                /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                                /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(detail::to_ivalue(v, CustomNodes::as_lists, /*typed=*/false));
    pickler.stop();
    std::vector<char> out;
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* p, std::size_t n) {
        const char* bytes = static_cast<const char*>(p);
        out.insert(out.end(), bytes, bytes + n);
        return n;
    });
    // The layout of torch::pickle_save: the storages as data/<i>, the pickle as data.pkl.
    const std::vector<at::Tensor>& tensors = pickler.tensorData();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const torch::jit::WriteableTensorData data = torch::jit::getWriteableTensorData(tensors[i]);
        writer.writeRecord("data/" + std::to_string(i), data.data(), data.sizeInBytes());
    }
    writer.writeRecord("data.pkl", pickle.data(), pickle.size());
    writer.writeEndOfFile();
    return out;
}

/// Writes a Value as pickle_value does, to a file Python reads with torch.load (no
/// weights_only=False needed on torch >= 2.6):
///   save_value(observer.infer_arguments(), "args.pt");   // Python: torch.load("args.pt")
inline void save_value(const TValue& v, const std::string& path) {
    const std::vector<char> bytes = pickle_value(v);
    std::ofstream out(path, std::ios::binary);
    if (!out) throw runtime_error("save_value: cannot open '" + path + "' for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw runtime_error("save_value: writing '" + path + "' failed");
}

/// What save_observations writes: the options of the export arguments and of the
/// dynamic shapes (labels named by default, so that the literal reads like the model).
struct SaveObservationsOptions {
    ExportArgumentsOptions arguments{};
    DynamicShapesOptions dynamic_shapes{.dim_names = true};
};

/// Writes a Python file defining `name` as `literal`, what torch.export's user runs or yobx-export
/// execs: `# <comment>`, `import torch` when the literal needs it, then `<name> = <literal>`; a
/// literal that is already code ending in `<name> = ...` (to_python with derived_dims) is
/// written as it is. A file that cannot be written is a runtime_error naming it.
///   save_python(dir + "/dynamic_shapes.py", shapes.to_python(), "The dynamic shapes of my model.");
///   save_python(dir + "/dynamic_axes.py", shapes.to_python_strings(), "yobx's labels.", "dynamic_axes");
inline void save_python(const std::string& path, const std::string& literal, const std::string& comment,
                        const std::string& name = "dynamic_shapes") {
    std::ofstream py(path);
    py << "# " << comment << "\n";
    if (literal.find("torch.") != std::string::npos) py << "import torch\n\n";
    py << (literal.find(name + " = ") == std::string::npos ? name + " = " : "") << literal << "\n";
    if (!py) throw runtime_error("save_python: cannot write '" + path + "'");
}

/// Writes the files `yobx-export` (tools/yobx_export.py) reads, into `dir` (created):
///   export_args.pt      infer_export_arguments(): the arguments to export with (save_value);
///   dynamic_shapes.py   `dynamic_shapes = ` and infer_dynamic_shapes().to_python(), as printed;
///   calls.pt            every observed call, infer_arguments(i): absent inputs filled (with
///                       the fills check_fills chose, when it ran);
///   made.pt             every call as it was made, (args, kwargs), None or no key for an
///                       absent input: what the eager model is run on to check the export;
///   dynamic_axes.py     `dynamic_axes = ` and to_python_strings(): yobx's labels of the dynamic
///                       dimensions, which yobx-export gives the package's symbols (and
///                       torch.onnx.export takes as dynamic_axes).
/// torch.load reads the .pt files with its default weights_only=True.
///   yobx::libtorch::save_observations(observer, "observed");
///   // $ yobx-export --model mymodels:make_model --observed observed --aoti model.pt2
inline void save_observations(InputObserver<at::Tensor>& observer, const std::string& dir,
                              const SaveObservationsOptions& options = {}) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw runtime_error("save_observations: cannot create '" + dir + "': " + ec.message());
    const DynamicShapes shapes = observer.infer_dynamic_shapes(options.dynamic_shapes);
    const std::string literal = shapes.to_python();
    save_value(observer.infer_export_arguments(options.arguments), dir + "/export_args.pt");
    TValue::List calls, made;
    for (std::size_t i = 0; i < observer.num_obs(); ++i) {
        calls.push_back(observer.infer_arguments(i));
        made.push_back(observer.info().observed_arguments(i));
    }
    save_value(TValue::list(std::move(calls)), dir + "/calls.pt");
    save_value(TValue::list(std::move(made)), dir + "/made.pt");
    save_python(dir + "/dynamic_shapes.py", literal,
                "The dynamic shapes inferred by yobx from " + std::to_string(observer.num_obs()) + " observed calls.");
    save_python(dir + "/dynamic_axes.py", shapes.to_python_strings(), "yobx's labels of the dynamic dimensions, by input and axis.",
                "dynamic_axes");
}

/// The C++ counterpart of transformers' DynamicCache: per layer, a key and a
/// value tensor of shape [batch, heads, sequence, head_dim]. Registered as
/// the pytree node "DynamicCache" with children key_cache and value_cache.
///   KVCache cache;
///   auto [k, v] = cache.update(key_states, value_states, layer);  // everything cached so far
struct KVCache {
    std::vector<at::Tensor> key_cache;
    std::vector<at::Tensor> value_cache;

    std::size_t num_layers() const noexcept { return key_cache.size(); }
    /// The cached sequence length (dimension 2) of a layer, 0 for a layer not cached yet.
    std::int64_t get_seq_length(std::size_t layer = 0) const {
        return layer < key_cache.size() ? key_cache[layer].size(2) : 0;
    }
    /// Appends the new keys and values of `layer` along the sequence dimension
    /// and returns the whole cached keys and values. Layers are filled in order:
    /// a layer beyond the next one throws value_error.
    std::pair<at::Tensor, at::Tensor> update(const at::Tensor& key, const at::Tensor& value, std::size_t layer) {
        if (key.dim() != 4 || value.dim() != 4)
            throw value_error("KVCache::update: key and value must be 4-D [batch, heads, sequence, head_dim], got " +
                              std::to_string(key.dim()) + "-D and " + std::to_string(value.dim()) + "-D");
        if (layer > key_cache.size())
            throw value_error("KVCache::update: layer " + std::to_string(layer) + " comes before layer " +
                              std::to_string(key_cache.size()) + " was cached");
        if (layer == key_cache.size()) {
            key_cache.push_back(key);
            value_cache.push_back(value);
        } else {
            key_cache[layer] = at::cat({key_cache[layer], key}, 2);
            value_cache[layer] = at::cat({value_cache[layer], value}, 2);
        }
        return {key_cache[layer], value_cache[layer]};
    }
};

namespace detail {

// LibTorch 2.x moved the warning handler to c10::WarningUtils, and its process() takes the Warning.
#if TORCH_VERSION_MAJOR >= 2
using WarningHandlerGuard = c10::WarningUtils::WarningHandlerGuard;
inline c10::WarningHandler* current_warning_handler() { return c10::WarningUtils::get_warning_handler(); }
#else
using WarningHandlerGuard = c10::Warning::WarningHandlerGuard;
inline c10::WarningHandler* current_warning_handler() { return c10::Warning::get_warning_handler(); }
#endif

// Whether a dispatcher message is its override warning: "Overriding a previously registered kernel"
// at the start (LibTorch 1.x), or after 2.x's warn-once preamble ("Warning only once for all
// operators,  other operators may also be overridden.\n  Overriding ...").
inline bool is_override_warning(std::string_view msg) {
    constexpr std::string_view text = "Overriding a previously registered kernel";
    const auto at = msg.find(text);
    return at == 0 || (at != std::string_view::npos && msg.starts_with("Warning only once for all operators"));
}

// Drops the dispatcher's override warning (the override is the point of a kernel patch) and
// forwards the others.
class OverrideWarningFilter : public c10::WarningHandler {
public:
    explicit OverrideWarningFilter(c10::WarningHandler* next) : next_(next) {}
#if TORCH_VERSION_MAJOR >= 2
    void process(const c10::Warning& warning) override {
        if (is_override_warning(warning.msg())) return;
        next_->process(warning);
    }
#else
    void process(const c10::SourceLocation& where, const std::string& msg, const bool verbatim) override {
        if (is_override_warning(msg)) return;
        next_->process(where, msg, verbatim);
    }
#endif

private:
    c10::WarningHandler* next_;
};

}  // namespace detail

/// A patch that overrides the kernel of an aten (or other) operator for one
/// dispatch key: apply() registers `kernel` through the dispatcher, undo()
/// ends the registration and the previous kernel is back. It is a PatchInfo,
/// so a PatchGuard scopes it and PatchDetails reports it.
///   yobx::PatchDetails details;
///   details.append(yobx::libtorch::kernel_patch("aten::relu", c10::DispatchKey::CPU, &leaky_relu_kernel));
///   { yobx::PatchGuard guard(details); ... at::relu(x) calls leaky_relu_kernel ... }
/// `op` is "namespace::name" or "namespace::name.overload"; the kernel's C++
/// signature must match the operator's schema (type_error otherwise). The
/// patch's name is `name`, or the kernel's YOBX_PATCH_SOURCE name, or
/// "<op>[<dispatch key>]"; its family is "libtorch". The dispatcher's own
/// messages about the registration name `where`, the caller by default.
template <class Kernel>
PatchInfo kernel_patch(const std::string& op, c10::DispatchKey key, Kernel kernel, std::string name = {},
                       source_location where = source_location::current()) {
    const auto colons = op.find("::");
    if (colons == std::string::npos || colons == 0 || colons + 2 == op.size())
        throw value_error("kernel_patch: '" + op + "' is not an operator name (namespace::name[.overload])");
    const std::string ns = op.substr(0, colons);
    const std::string rest = op.substr(colons + 2);
    const auto dot = rest.find('.');
    const c10::OperatorName opname(op.substr(0, colons + 2 + std::min(dot, rest.size())),
                                   dot == std::string::npos ? "" : rest.substr(dot + 1));
    if (!c10::Dispatcher::singleton().findSchema(opname))
        throw value_error("kernel_patch: no operator '" + op + "' is registered with the dispatcher");
    const std::string target = op + "[" + c10::toString(key) + "]";
    std::optional<SourceText> source = yobx::detail::source_of_value(kernel);
    if (name.empty()) name = source ? std::string(source->name) : target;
    auto library = std::make_shared<std::optional<torch::Library>>();
    PatchInfo p(
        std::move(name), target, "libtorch",
        [library, ns, rest, key, kernel, op, where] {
            detail::OverrideWarningFilter filter(detail::current_warning_handler());
            detail::WarningHandlerGuard guard(&filter);
            try {
                library->emplace(torch::Library::IMPL, ns, key, where.file_name(), where.line());
                (*library)->impl(rest.c_str(), kernel);
            } catch (const c10::Error& e) {
                library->reset();  // no registration stays behind
                throw type_error("kernel_patch(" + op + "): the dispatcher refused the kernel: " +
                                 e.what_without_backtrace());
            }
        },
        [library] { library->reset(); });
    if (source) p.set_patch_source(*source);
    return p;
}

/// The RAII form for one kernel: the override holds until the guard ends.
///   { auto guard = yobx::libtorch::override_kernel("aten::relu", c10::DispatchKey::CPU, &my_relu); ... }
template <class Kernel>
[[nodiscard]] PatchGuard override_kernel(const std::string& op, c10::DispatchKey key, Kernel kernel, std::string name = {},
                                         source_location where = source_location::current()) {
    return PatchGuard(PatchDetails{kernel_patch(op, key, std::move(kernel), std::move(name), where)});
}

}  // namespace libtorch

/// KVCache as a pytree node: DynamicCache(key_cache=[...], value_cache=[...]).
template <>
struct pytree_node<libtorch::KVCache> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const libtorch::KVCache& c) { return std::tie(c.key_cache, c.value_cache); }
    static auto flatten_with_keys(const libtorch::KVCache& c) {
        return std::tuple{attr("key_cache", c.key_cache), attr("value_cache", c.value_cache)};
    }
    static libtorch::KVCache unflatten(std::vector<at::Tensor> k, std::vector<at::Tensor> v) {
        return {std::move(k), std::move(v)};
    }
};

}  // namespace yobx
