// yobx/adapters/libtorch/save.hpp — observed values saved for Python: torch.save files and literals.
//
// pickle_value and save_value write a Value as a torch.save file Python's torch.load reads (with
// weights_only=True too); save_observations writes an observer's calls, arguments and dynamic
// shapes as files a Python script loads.
#pragma once

#include <yobx/adapters/libtorch/ivalue.hpp>
#include <yobx/error.hpp>
#include <yobx/observer.hpp>
#include <yobx/value.hpp>

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace yobx {

namespace libtorch {

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

}  // namespace libtorch

}  // namespace yobx
