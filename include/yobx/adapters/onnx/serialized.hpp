// yobx/adapters/onnx/serialized.hpp — shape inference from bytes to bytes: what a language binding calls.
//
// A binding (the Python module `yobx`) hands over a serialized model and takes back
// bytes: no protobuf object crosses the boundary, so the binding does not depend on
// which protobuf implementation the other side uses. The model is read as ModelFile
// reads a file, without copying the payloads of its large initializers; the shaped
// model comes back with them left out, and their positions, for a caller that holds
// the model to copy them over (one copy of the weights in all), or put back here for
// a caller that holds only bytes. A caller that holds the model can take back only what
// inference writes (the graph's value_info and outputs) and merge it into its own copy.
//
//   yobx::onnx::SerializedShapes out = yobx::onnx::infer_shapes_serialized(bytes, options);
//   // out.model: the shaped model's bytes; out.left_out: the initializers it leaves out
#pragma once

#include <yobx/adapters/onnx/shapes.hpp>
#include <yobx/adapters/onnx/detail/light_model.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// What infer_shapes_serialized returns.
struct SerializedShapes {
    /// The shaped model, serialized; the initializers at `left_out` without their payloads.
    std::string model;
    /// Positions among the graph's initializers of those `model` holds without their payloads
    /// (ascending; empty when the payloads were put back or the model had none to leave out).
    std::vector<std::size_t> left_out;
    /// Payloads::none, on a model without subgraphs: `model` is a serialized GraphProto holding
    /// only the graph's value_info and outputs, all that inference writes.
    bool graph_types = false;
    ShapeReport report;
};

/// What comes back of the model: the model with its large initializer payloads left out (the
/// caller holds the model and copies them over) or put back (the caller holds only bytes); or
/// none of the model but what inference wrote, the graph's value_info and outputs (the caller
/// holds the model, copies it whole and replaces those two fields), when no node of the graph
/// has a subgraph (whose types are written inside the node), else as left_out.
enum class Payloads { left_out, put_back, none };

namespace detail {
inline bool has_subgraph(const ::onnx::GraphProto& g) {
    for (const auto& n : g.node())
        for (const auto& a : n.attribute())
            if (a.has_g() || a.graphs_size() > 0) return true;
    return false;
}

/// Payloads::none on a model LightModel reads (no subgraph, no control flow): the graph's types
/// written as the walk of the parsed model writes them, without protobuf's parse of the graph
/// (ONNX's inference, if a node needs it, gets the model parsed then). False if it does not read it.
inline bool infer_light(std::string_view bytes, const InferenceOptions& options, const std::string& name, std::size_t left_from,
                        Leftovers* leftovers, SerializedShapes& out) {
    auto light = std::make_unique<LightModel>();
    if (!light->read(bytes, options.model_dir)) return false;
    std::unique_ptr<ModelFile> whole;
    out.report = infer_shapes(*light, options, &out.model, leftovers, [&]() -> const ::onnx::ModelProto* {
        if (!whole) whole = std::make_unique<ModelFile>(ModelFile::view(bytes, name, left_from));
        return &whole->model();
    });
    for (const auto& v : light->graph().output()) wire::put_message(out.model, 12, v);  // GraphProto.output
    out.graph_types = true;
    if (leftovers != nullptr) {
        leftovers->keep(std::move(light));
        if (whole) leftovers->keep(std::move(whole));
    }
    return true;
}

/// infer_shapes_serialized; `light` false: never through LightModel (what tests compare it with).
inline SerializedShapes infer_shapes_serialized(std::string_view bytes, const InferenceOptions& options, Payloads payloads,
                                                std::string name, std::size_t left_from, Leftovers* leftovers, bool light) {
    SerializedShapes out;
    if (light && payloads == Payloads::none && infer_light(bytes, options, name, left_from, leftovers, out)) return out;
    auto file = std::make_unique<ModelFile>(ModelFile::view(bytes, std::move(name), left_from));
    if (payloads == Payloads::none && !has_subgraph(file->model().graph())) {
        // the value_info serialized as the walk writes it (no message built), then the outputs
        out.report = infer_shapes(file->model(), options, &out.model, leftovers);
        for (const auto& v : file->model().graph().output()) wire::put_message(out.model, 12, v);  // GraphProto.output
        out.graph_types = true;
    } else {
        out.report = infer_shapes(file->model(), options, nullptr, leftovers);
        if (payloads == Payloads::put_back) {
            out.model = file->serialize();
        } else {
            out.left_out = file->left_out();
            if (!file->model().SerializeToString(&out.model)) throw value_error("the shaped model does not serialize");
        }
    }
    if (leftovers != nullptr) leftovers->keep(std::move(file));
    return out;
}
}  // namespace detail

/// infer_shapes on a serialized model (`name` stands for it in errors). The payloads left out
/// are those ModelFile leaves in a file of at least `left_from` bytes each (a caller that copies
/// each back by hand, as Python does, gains nothing from leaving out small ones). Errors are
/// infer_shapes' and ModelFile's value_errors: bytes that are not a model, a model without a
/// graph, an unknown opset, a cycle, an undecidable question in strict mode. `leftovers`, if
/// given, takes the parsed model and the walk's state to free later (Leftovers).
inline SerializedShapes infer_shapes_serialized(std::string_view bytes, const InferenceOptions& options,
                                                Payloads payloads = Payloads::left_out, std::string name = "<bytes>",
                                                std::size_t left_from = 1024, Leftovers* leftovers = nullptr) {
    return detail::infer_shapes_serialized(bytes, options, payloads, std::move(name), left_from, leftovers, true);
}

/// A value's shape at given sizes: each dim's value, nullopt where it is not known
/// (a dim without a value or an expression, or one over symbols that have no size).
using ConcreteShape = std::vector<std::optional<std::int64_t>>;

/// The concrete shape of every value of a model whose dims are written (dim_value, or a
/// dim_param that parse_sym reads, as yobx writes them): graph inputs, initializers,
/// value_info and outputs, in subgraphs too, by name; a value with no shape is nullopt.
/// A size that names no symbol of the model is a value_error (a misspelt name); so is an
/// expression that cannot be evaluated at the sizes (a division by zero). `report`, the
/// inference's, reads an input dim_param that is not a symbol name as its symbol
/// (name_mapping: `"batch size"` is `batch_size`, which the dims inferred from it use): a size
/// may name either.
inline std::map<std::string, std::optional<ConcreteShape>, std::less<>> evaluate_shapes(const ::onnx::ModelProto& model,
                                                                                       const SymbolValues& given,
                                                                                       const ShapeReport& report = {}) {
    const SymbolValues sizes = report.by_symbol(given);
    std::map<std::string, std::optional<ConcreteShape>, std::less<>> out;
    std::map<std::string, SymInt, std::less<>> parsed;  // dim_param -> expression (none: not one)
    std::set<std::string, std::less<>> seen;            // every symbol and dim_param of the model
    const auto dim_of = [&](const ::onnx::TensorShapeProto_Dimension& d) -> std::optional<std::int64_t> {
        if (d.has_dim_value()) return d.dim_value() >= 0 ? std::optional<std::int64_t>(d.dim_value()) : std::nullopt;
        if (!d.has_dim_param() || d.dim_param().empty()) return std::nullopt;
        const std::string& text = d.dim_param();
        seen.insert(text);
        if (const auto it = given.find(text); it != given.end()) return it->second;  // a name parse_sym does not read
        auto it = parsed.find(text);
        if (it == parsed.end()) {
            const std::string symbol = report.symbol_of(text);
            if (symbol == text && detail::hyphenated_name(text)) return std::nullopt;  // a name ("seq-len"), not given
            SymInt e;
            try {
                e = parse_sym(symbol);
            } catch (const yobx::error&) {
                return std::nullopt;
            }
            it = parsed.emplace(text, std::move(e)).first;
        }
        bool all = true;
        for (const auto& s : it->second.free_symbols()) {
            seen.insert(s);
            all = all && sizes.count(s);
        }
        if (!all) return std::nullopt;
        try {
            return it->second.evaluate_with(sizes);
        } catch (const yobx::error& e) {
            throw value_error("evaluate_shapes: the dim '" + text + "' at the given sizes: " + e.what());
        }
    };
    const auto add = [&](const std::string& name, const ::onnx::TypeProto& type) {
        if (name.empty()) return;
        if (!type.has_tensor_type() || !type.tensor_type().has_shape()) {
            out.emplace(name, std::nullopt);
            return;
        }
        ConcreteShape s;
        for (const auto& d : type.tensor_type().shape().dim()) s.push_back(dim_of(d));
        out.insert_or_assign(name, std::move(s));
    };
    const auto graph = [&](const auto& self, const ::onnx::GraphProto& g) -> void {
        for (const auto& t : g.initializer()) out.insert_or_assign(t.name(), ConcreteShape(t.dims().begin(), t.dims().end()));
        for (const auto& v : g.input())
            if (!out.count(v.name())) add(v.name(), v.type());
        for (const auto& v : g.value_info()) add(v.name(), v.type());
        for (const auto& v : g.output()) add(v.name(), v.type());
        for (const auto& n : g.node())
            for (const auto& a : n.attribute()) {
                if (a.has_g()) self(self, a.g());
                for (const auto& sub : a.graphs()) self(self, sub);
            }
    };
    graph(graph, model.graph());
    for (const auto& [name, v] : given)
        if (!seen.count(name)) {
            std::string known;
            for (const auto& s : seen) {
                bool symbol = true;
                try {
                    symbol = parse_sym(s).free_symbols() == std::vector<std::string>{s};
                } catch (const yobx::error&) {
                }
                if (symbol) known += (known.empty() ? "" : ", ") + s;
            }
            throw value_error("evaluate_shapes: size '" + name + "' names no dim of the model (its symbols: " +
                              (known.empty() ? "none" : known) + ")");
        }
    return out;
}

}  // namespace yobx::onnx
