// yobx/adapters/onnx/detail/type_writer.hpp — every value's type written into a graph, once the walk is over.
//
// TypeWriter writes what the walk inferred: value_info for the intermediate values, the graph
// outputs' types, each dim a constant or its expression printed (dim_param), the model's own
// declaration kept where yobx knows less, a contradiction with it reported; and it counts what
// it wrote into the ShapeReport. The types go into a TypeProto (ProtoType) or as wire bytes
// (WireType, for a caller that merges them into its copy of the model): type_sinks.hpp.
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <yobx/adapters/onnx/detail/onnx_fallback.hpp>
#include <yobx/adapters/onnx/detail/type_sinks.hpp>
#include <yobx/adapters/onnx/detail/walk_record.hpp>
#include <yobx/adapters/onnx/inference_options.hpp>
#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/report.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory_resource>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace yobx::onnx::detail {

/// The values of a graph by name. The names are views of the model's strings (node outputs,
/// inputs, initializers), which live as long as the walk and which it never changes.
using Scope = std::pmr::unordered_map<std::string_view, TensorInfo>;

/// Where the walk put each node output of a graph in its scope, by node and output in the
/// graph's order, so that write_graph_types reaches them without looking each name up again:
/// null where the name was in the scope already (an input's or initializer's, written again).
struct Produced {
    std::vector<std::size_t> first;  // a node's first output among `slots`
    std::vector<const TensorInfo*> slots;
};

/// Writes the walk's types into a graph and counts them in the report.
class TypeWriter {
public:
    TypeWriter(const InferenceOptions& options, ShapeReport& report, ShapeEnv& env, const WalkRecord& record, const OnnxFallback& onnx)
        : options_(options), report_(report), env_(env), record_(record), onnx_(onnx) {}

    /// Whether the graphs written are subgraphs (their values are not counted in unknown_type).
    void set_in_subgraph(bool in_subgraph) noexcept { in_subgraph_ = in_subgraph; }

    /// Every value's type into the graph: value_info for intermediate values, the outputs' types.
    /// With `value_info` given, the intermediate values are serialized there instead (each a
    /// GraphProto value_info field, the bytes protobuf writes for them) and the graph's own
    /// value_info is left out: what a caller that holds the model merges into its copy.
    /// `produced`, the walk's record of this graph (Produced), spares a lookup of each name.
    template <class Graph>
    void write_graph_types(Graph& g, const Scope& scope, std::string* value_info = nullptr, const Produced* produced = nullptr) {
        // the graph's output, input and initializer names (views), made at the first name looked up
        std::unordered_set<std::string_view> outputs, inputs;
        const auto graph_output_or_input = [&](std::string_view name) {
            if (outputs.empty() && inputs.empty()) {
                for (const auto& o : g.output()) outputs.insert(o.name());
                inputs.reserve(static_cast<std::size_t>(g.input_size() + g.initializer_size()));
                for (const auto& i : g.input()) inputs.insert(i.name());
                for (const auto& i : g.initializer()) inputs.insert(i.name());
            }
            return outputs.count(name) > 0 || inputs.count(name) > 0;
        };
        // the values of the graph's outputs, sorted: a node output recorded in `produced` is one of
        // them when its value is (the scope has one value per name)
        std::vector<const TensorInfo*> output_values;
        if (produced != nullptr) {
            for (const auto& o : g.output())
                if (const auto it = scope.find(o.name()); it != scope.end()) output_values.push_back(&it->second);
            std::sort(output_values.begin(), output_values.end(), std::less<>{});
        }
        // the model's own value_info, moved out (on the graph's arena, if any, so that nothing is copied)
        google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> before(g.GetArena());
        before.Swap(g.mutable_value_info());
        std::unordered_map<std::string_view, const ::onnx::ValueInfoProto*> declared_info;
        for (const auto& v : before) declared_info[v.name()] = &v;
        if (value_info == nullptr) g.mutable_value_info()->Reserve(g.node_size());
        WireType wire;
        std::size_t slot = 0;
        for (const auto& n : g.node())
            for (const auto& name : n.output()) {
                const TensorInfo* info = produced != nullptr ? produced->slots[slot++] : nullptr;
                if (info != nullptr) {
                    if (std::binary_search(output_values.begin(), output_values.end(), info, std::less<>{})) continue;
                } else {  // not recorded: looked up by name
                    if (name.empty() || graph_output_or_input(name)) continue;
                    const auto it = scope.find(name);
                    if (it == scope.end()) continue;
                    info = &it->second;
                }
                const auto d = declared_info.empty() ? declared_info.end() : declared_info.find(name);
                const ::onnx::TypeProto* declared = d == declared_info.end() ? nullptr : &d->second->type();
                if (value_info != nullptr) {
                    wire.clear();
                    if (write_type(*info, declared, name, wire)) wire.append_value_info(*value_info, name);
                    continue;
                }
                auto* v = g.add_value_info();
                v->set_name(std::string(name));
                ProtoType proto{*v->mutable_type()};
                if (!write_type(*info, declared, name, proto)) g.mutable_value_info()->RemoveLast();
            }
        for (auto& o : *g.mutable_output()) {
            const auto it = scope.find(o.name());
            if (it == scope.end()) continue;
            const bool typed = o.has_type();
            const ::onnx::TypeProto old = o.type();
            o.clear_type();
            ProtoType proto{*o.mutable_type()};
            if (!write_type(it->second, &old, o.name(), proto)) {
                if (typed) *o.mutable_type() = old;
                else o.clear_type();
            }
        }
    }

    /// One value's type. Where the model declared a dimension, the inferred one is written
    /// when it differs (a contradiction, reported); a declared dim yobx does not know is kept.
    /// False, and nothing written, for a value whose element type nobody knows (an operator
    /// neither yobx nor ONNX types): onnxruntime refuses a model holding a tensor type of
    /// element type 0 ("Invalid tensor data type 0"); ONNX's inference writes nothing there too.
    template <class Out>
    bool write_type(const TensorInfo& info, const ::onnx::TypeProto* model, std::string_view name, Out& out) {
        ++report_.values;
        if (!info.shape && info.elem_type == elem::undefined) {
            // not a tensor as far as yobx knows: a sequence, map or optional value keeps the type
            // the model declares, or ONNX's inference gives it
            const ::onnx::TypeProto* other = model && model->value_case() != ::onnx::TypeProto::VALUE_NOT_SET && !model->has_tensor_type()
                                                 ? model
                                                 : nullptr;
            if (other == nullptr)
                if (const OnnxFallback::Type* t = onnx_.type_of(name); t != nullptr && t->other) other = &*t->other;
            if (other != nullptr) {
                out.other(*other);
                ++report_.not_tensor;
                return true;
            }
        }
        const bool model_tensor = model && model->has_tensor_type();
        if (!in_subgraph_ && (info.elem_type == elem::undefined ||
                              (!options_.guess_output_rank && onnx_.declared_only(name))))
            ++report_.unknown_type;
        int type = info.elem_type;
        if (type == elem::undefined && model_tensor) type = model->tensor_type().elem_type();
        const bool model_shape = model_tensor && model->tensor_type().has_shape();
        if (type == elem::undefined) {
            if (!info.shape && !model_shape) ++report_.unknown_rank;
            return false;
        }
        out.elem_type(type);
        if (!info.shape) {
            if (model_shape) {
                // the model's own shape, but never a negative dim it may hold
                for (const auto& md : model->tensor_type().shape().dim()) {
                    if (md.has_dim_value() && md.dim_value() >= 0) out.dim_value(md.dim_value());
                    else if (md.has_dim_param() && readable(md.dim_param())) out.dim_param(md.dim_param());
                    else out.unknown_dim();
                }
                report_.dims_from_model += static_cast<std::size_t>(model->tensor_type().shape().dim_size());
            } else {
                ++report_.unknown_rank;
            }
            return true;
        }
        out.start_shape();
        const bool same_rank = model_shape && static_cast<int>(info.shape->size()) == model->tensor_type().shape().dim_size();
        for (std::size_t i = 0; i < info.shape->size(); ++i) {
            const SymInt& d0 = (*info.shape)[i];
            ++report_.dims;
            if (!same_rank && d0.is_constant()) {  // most dims: nothing to simplify, compare or print
                out.dim_value(*d0.maybe_constant());
                ++report_.constant;
                continue;
            }
            const SymInt& d = simplified(d0);
            const ::onnx::TensorShapeProto_Dimension* md = same_rank ? &model->tensor_type().shape().dim(static_cast<int>(i)) : nullptr;
            const bool fresh = record_.is_fresh(d);
            if (md && md->has_dim_value() && md->dim_value() >= 0 && fresh) {
                out.dim_value(md->dim_value());
                ++report_.dims_from_model;
                continue;
            }
            // the model's constant against what yobx inferred: a different constant, or an expression proven never equal to it
            if (md && md->has_dim_value() && md->dim_value() >= 0 &&
                (d.maybe_constant() ? *d.maybe_constant() != md->dim_value() : env_.statically_known_true(d != md->dim_value())))
                report_.contradictions.push_back({std::string(name), static_cast<std::int64_t>(i), std::to_string(md->dim_value()), d.to_string()});
            if (const auto c = d.maybe_constant()) {
                out.dim_value(*c);
                ++report_.constant;
            } else {
                out.dim_param(printed(d));
                ++(fresh ? report_.fresh : report_.symbolic);
            }
        }
        return true;
    }

    /// A dim as written, simplified once: the same dims of many values reuse it (the walk is
    /// over: the ShapeEnv learns nothing more).
    const SymInt& simplified(const SymInt& d) {
        auto it = simplified_.find(d);
        if (it == simplified_.end()) it = simplified_.emplace(d, env_.simplify(d)).first;
        return it->second;
    }

    /// An expression as written: printed once, the same dims of many values reuse the text.
    const std::string& printed(const SymInt& d) {
        auto it = printed_.find(d);
        if (it == printed_.end()) it = printed_.emplace(d, d.to_string()).first;
        return it->second;
    }

    /// A dim_param that parse_sym reads (what yobx writes must be).
    static bool readable(const std::string& text) {
        try {
            (void)parse_sym(text);
            return true;
        } catch (const yobx::error&) {
            return false;
        }
    }

private:
    const InferenceOptions& options_;
    ShapeReport& report_;
    ShapeEnv& env_;
    const WalkRecord& record_;
    const OnnxFallback& onnx_;
    bool in_subgraph_ = false;
    std::unordered_map<SymInt, std::string> printed_;
    std::unordered_map<SymInt, SymInt> simplified_;  // write_type's dims, simplified once each
};

}  // namespace yobx::onnx::detail
