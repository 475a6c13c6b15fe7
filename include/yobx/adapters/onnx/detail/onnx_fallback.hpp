// yobx/adapters/onnx/detail/onnx_fallback.hpp — ONNX's own inference, the walk's fallback.
//
// For a node no rule of yobx's covers, the walk takes what ONNX's shape inference says of its
// outputs: ONNX runs once on a copy of the model, at the first node that needs it, and its
// types are kept by value name. Which nodes ONNX knows (a schema at the model's opset, or a
// function the model defines) tells a real answer from the model's own declaration echoed back.
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <onnx/shape_inference/implementation.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace yobx::onnx::detail {

class OnnxFallback {
public:
    /// A dim as ONNX's inference writes it: a value, a dim_param, or neither.
    struct Dim {
        std::optional<std::int64_t> value;
        std::string param;
    };
    /// A value's type as ONNX's inference writes it.
    struct Type {
        int elem_type = 0;
        std::optional<std::vector<Dim>> dims;
        std::optional<::onnx::TypeProto> other;  // a sequence, map or optional type: written as ONNX gives it
    };

    /// The model ONNX's own inference runs on...
    void set_model(const ::onnx::ModelProto* model) {
        source_ = model != nullptr ? std::function<const ::onnx::ModelProto*()>([model] { return model; }) : nullptr;
    }
    /// ... or where it comes from, asked at the first node that needs it (a LightModel's walk
    /// parses the model then); none: no fallback.
    void set_model_source(std::function<const ::onnx::ModelProto*()> source) { source_ = std::move(source); }
    bool has_model() const noexcept { return static_cast<bool>(source_); }

    /// Whether ONNX's inference ran (it runs at the first infer() with a model).
    bool ran() const noexcept { return types_ != nullptr; }
    /// ONNX's inference, run once on a copy of the model; false when there is no model.
    bool run() {
        if (types_ != nullptr) return true;
        const ::onnx::ModelProto* model = source_ ? source_() : nullptr;
        if (model == nullptr) return false;
        infer(*model);
        return true;
    }
    /// The type ONNX's inference gave a value, or nullptr (run() first).
    const Type* type_of(std::string_view name) const {
        if (types_ == nullptr) return nullptr;
        const auto it = types_->find(std::string(name));
        return it == types_->end() ? nullptr : &it->second;
    }

    /// Whether ONNX has a schema for the node, or the model a function of that name (whose body
    /// ONNX's inference walks): if neither, its inference gives the node's outputs nothing but
    /// the types the model declares for them.
    template <class Node>
    bool knows(const Node& node, const std::map<std::string_view, int, std::less<>>& opsets) const {
        const std::string_view domain = node.domain() == "ai.onnx" ? std::string_view() : std::string_view(node.domain());
        for (const auto& [d, name] : local_functions_)
            if (d == domain && name == node.op_type()) return true;
        const auto it = opsets.find(domain);
        return it != opsets.end() && ::onnx::OpSchemaRegistry::Schema(std::string(node.op_type()), it->second, std::string(it->first)) != nullptr;
    }

    /// The outputs typed from the model's declaration alone (ONNX knows not their node).
    void add_declared_only(std::string_view name) { declared_only_.emplace(name); }
    bool declared_only(std::string_view name) const { return !declared_only_.empty() && declared_only_.count(std::string(name)) > 0; }

private:
    void infer(const ::onnx::ModelProto& model) {
        for (const auto& f : model.functions()) local_functions_.emplace_back(f.domain(), f.name());
        auto types = std::make_unique<std::unordered_map<std::string, Type>>();
        try {
            ::onnx::ModelProto copy = model;
            copy.mutable_graph()->clear_value_info();
            ::onnx::ShapeInferenceOptions o;
            o.check_type = false;
            o.error_mode = 0;
            // no data propagation: ONNX's (1.12 to 1.17) dereferences a null pointer on some
            // shape computations (an Add of an empty Shape slice), which would take the process
            // down; yobx propagates the values itself
            o.enable_data_propagation = false;
            ::onnx::shape_inference::InferShapes(copy, ::onnx::OpSchemaRegistry::Instance(), o);
            const auto add = [&](const ::onnx::ValueInfoProto& v) {
                Type t;
                if (!v.type().has_tensor_type()) {
                    if (v.type().value_case() == ::onnx::TypeProto::VALUE_NOT_SET) return;
                    t.other = v.type();
                    (*types)[v.name()] = std::move(t);
                    return;
                }
                t.elem_type = v.type().tensor_type().elem_type();
                if (v.type().tensor_type().has_shape()) {
                    t.dims.emplace();
                    for (const auto& d : v.type().tensor_type().shape().dim())
                        t.dims->push_back(Dim{d.has_dim_value() ? std::optional<std::int64_t>(d.dim_value()) : std::nullopt, d.dim_param()});
                }
                (*types)[v.name()] = std::move(t);
            };
            for (const auto& v : copy.graph().value_info()) add(v);
            for (const auto& v : copy.graph().output()) add(v);
        } catch (const std::exception&) {
            // ONNX's inference refused the model: no fallback, yobx's rules only
        }
        types_ = std::move(types);
    }

    std::function<const ::onnx::ModelProto*()> source_;
    std::unique_ptr<std::unordered_map<std::string, Type>> types_;
    // the model's own functions, (domain, name): nodes ONNX's inference types through their bodies
    std::vector<std::pair<std::string, std::string>> local_functions_;
    std::unordered_set<std::string> declared_only_;
};

}  // namespace yobx::onnx::detail
