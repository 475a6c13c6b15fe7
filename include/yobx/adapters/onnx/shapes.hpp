// yobx/adapters/onnx/shapes.hpp — ONNX models: read a .onnx file, give every value its shape, write it back.
//
// The adapter does the protobuf I/O and the graph walk with one ShapeEnv
// (yobx/adapters/onnx/detail/walker.hpp); the operator rules are protobuf-free
// (yobx/onnx/ops.hpp), found by (domain, op type, opset), as ONNX finds its
// schemas. It needs Debian's libonnx-dev: link onnx_proto, onnx (ONNX's own
// inference, the fallback for operators yobx does not cover) and
// protobuf::libprotobuf, and define ONNX_ML=1.
//
//   ::onnx::ModelProto model = yobx::onnx::load_model("model.onnx");
//   yobx::onnx::ShapeReport report = yobx::onnx::infer_shapes(model);
//   yobx::onnx::save_model(model, "shaped.onnx");
//   std::cout << report.summary() << "\n";
//
// ModelFile (yobx/adapters/onnx/model_file.hpp) does the same for a file without
// copying its weights: what the command yobx-onnx-shapes uses.
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <yobx/adapters/onnx/model_file.hpp>
#include <yobx/adapters/onnx/inference_options.hpp>
#include <yobx/adapters/onnx/detail/walker.hpp>
#include <yobx/onnx/ops.hpp>
#include <yobx/onnx/report.hpp>


#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <memory_resource>
#include <string>
#include <type_traits>
#include <vector>

namespace yobx::onnx {

/// Reads a model file; a value_error names the file and what is wrong (missing, not an ONNX model).
inline ::onnx::ModelProto load_model(const std::string& path) {
    errno = 0;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in || std::filesystem::is_directory(path))
        throw file_error("cannot open '" + path + "'", path, errno != 0 ? errno : std::filesystem::is_directory(path) ? EISDIR : ENOENT);
    const std::streamoff size = in.tellg();
    if (size < 0 || size > std::numeric_limits<int>::max()) throw value_error("'" + path + "' is larger than protobuf reads (2 GiB)");
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    if (!in.read(bytes.data(), size)) throw value_error("cannot read '" + path + "'");
    ::onnx::ModelProto model;
    if (bytes.empty() || !model.ParseFromString(bytes))
        throw value_error("'" + path + "' is not an ONNX model (the protobuf does not parse: malformed or truncated)");
    if (!model.has_graph()) throw value_error("'" + path + "' has no graph");
    return model;
}

/// Writes a model to a temporary file beside `path`, then renames it: no partial file on failure.
inline void save_model(const ::onnx::ModelProto& model, const std::string& path) {
    const std::string tmp = path + ".yobx-tmp";
    {
        errno = 0;
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out || !model.SerializeToOstream(&out)) {
            const int code = errno != 0 ? errno : EIO;
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw file_error("cannot write '" + path + "'", path, code);
        }
    }
    std::filesystem::rename(tmp, path);
}

/// What a call leaves to free once its result is out: the walk's values and ShapeEnv, the model
/// it parsed (a 96-layer decoder's take about 2 ms to free). A caller with the result to hand on
/// first (the Python module hands it to Python) passes one and destroys it after, or on another
/// thread; what it holds is freed the last kept first, and refers to nothing the call returned.
class Leftovers {
public:
    Leftovers() = default;
    Leftovers(Leftovers&&) noexcept = default;
    Leftovers& operator=(Leftovers&&) = delete;
    Leftovers(const Leftovers&) = delete;
    Leftovers& operator=(const Leftovers&) = delete;
    ~Leftovers() { clear(); }

    template <class T>
    void keep(std::unique_ptr<T> p) {
        held_.emplace_back(std::move(p));
    }
    bool empty() const noexcept { return held_.empty(); }
    /// Frees what is kept, the last kept first.
    void clear() noexcept {
        while (!held_.empty()) held_.pop_back();
    }

private:
    std::vector<std::shared_ptr<void>> held_;
};

namespace detail {
/// infer_shapes, the main graph's value_info serialized into `value_info` if given (see
/// Walker::write_graph_types) instead of written into the model; the walk's state left to
/// `leftovers` to free, if given. `model` is a ModelProto, or a LightModel (with `whole`, the
/// ModelProto ONNX's inference takes if a node needs the fallback, asked then).
template <class Model>
ShapeReport infer_shapes(Model& model, const InferenceOptions& options, std::string* value_info, Leftovers* leftovers = nullptr,
                         std::function<const ::onnx::ModelProto*()> whole = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    // by domain, views of the model's names (it outlives the walk)
    std::map<std::string_view, int, std::less<>> opsets;
    for (const auto& o : model.opset_import())
        opsets[o.domain() == "ai.onnx" ? std::string_view() : std::string_view(o.domain())] = static_cast<int>(o.version());
    const auto def = opsets.find("");
    if (def == opsets.end()) throw value_error("the model imports no opset of the default domain");
    if (def->second < min_known_opset || def->second > max_known_opset)
        throw value_error("unknown opset " + std::to_string(def->second) + " of the default domain (yobx knows " +
                          std::to_string(min_known_opset) + " to " + std::to_string(max_known_opset) + ")");
    ShapeReport report;
    // on the heap, so that `leftovers` can take them (the walker's references to `report`,
    // `opsets` and `options` are not used by its destructor)
    auto walker = std::make_unique<Walker>(options, report, opsets);
    if constexpr (std::is_same_v<Model, ::onnx::ModelProto>) walker->set_model(&model);
    else walker->set_model_source(std::move(whole));
    // the main graph's values (a hash node each) from one growing buffer, freed at once
    auto memory = std::make_unique<std::pmr::monotonic_buffer_resource>(std::size_t{256} * (Walker::values_of(model.graph()) + 8));
    auto scope = std::make_unique<Walker::Scope>(memory.get());
    auto produced = std::make_unique<Walker::Produced>();
    // the walk reads the model and writes nothing: an error leaves it as it was
    walker->walk(*model.mutable_graph(), *scope, {}, produced.get());
    walker->check_hints();
    walker->write_subgraphs();
    walker->write_graph_types(*model.mutable_graph(), *scope, value_info, produced.get());
    walker->set_model_source(nullptr);  // (a source refers to the caller's locals)
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (leftovers != nullptr) {
        leftovers->keep(std::move(memory));  // (freed last)
        leftovers->keep(std::move(produced));
        leftovers->keep(std::move(scope));
        leftovers->keep(std::move(walker));
    }
    return report;
}
}  // namespace detail

/// Infers the type and shape of every value of `model` and writes them in: each
/// intermediate value in graph.value_info, the outputs' types. Returns the report.
/// Errors (value_error, nothing written): an unknown default-domain opset, a graph that is
/// not a DAG, an input produced by nothing; in strict mode, an undecidable question.
inline ShapeReport infer_shapes(::onnx::ModelProto& model, const InferenceOptions& options = {}) {
    return detail::infer_shapes(model, options, nullptr);
}

}  // namespace yobx::onnx
