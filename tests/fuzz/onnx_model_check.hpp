// ONNX models as the reader meets them from untrusted files: serialized
// ModelProtos, and real-looking models mutated field by field (dims, opsets,
// op types, attributes, inputs, nodes, initializers, subgraphs). infer_shapes
// must fail only with a yobx::error, and what it writes must be readable: each
// dim_param parses with parse_sym and the model serializes.
#pragma once

#include "generators.hpp"

#include <yobx/adapters/onnx/shapes.hpp>
#include <yobx/adapters/onnx/model_memory.hpp>
#include <yobx/adapters/onnx/serialized.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace fuzzgen {

namespace onnx_detail {

inline ::onnx::NodeProto* node(::onnx::GraphProto& g, const char* op, std::initializer_list<const char*> in,
                               std::initializer_list<const char*> out) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(*out.begin());
    for (const char* i : in) n->add_input(i);
    for (const char* o : out) n->add_output(o);
    return n;
}
inline void ints(::onnx::NodeProto* n, const char* name, std::initializer_list<std::int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}
inline void integer(::onnx::NodeProto* n, const char* name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
}
inline void input(::onnx::GraphProto& g, const char* name, int type, std::initializer_list<const char*> dims) {
    auto* v = g.add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (const char* d : dims) {
        auto* dim = tt->mutable_shape()->add_dim();
        if (d[0] >= '0' && d[0] <= '9') dim->set_dim_value(std::stoll(d));
        else dim->set_dim_param(d);
    }
}
inline void int_init(::onnx::GraphProto& g, const char* name, std::initializer_list<std::int64_t> v) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
}

}  // namespace onnx_detail

/// One of a few small models of the kinds exporters write: a convolution and pooling,
/// a shape computation feeding a Reshape, attention-like MatMuls and Softmax, an If.
inline ::onnx::ModelProto base_model(std::size_t which) {
    using namespace onnx_detail;
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto& g = *m.mutable_graph();
    const int f = ::onnx::TensorProto::FLOAT;
    switch (which % 4) {
        case 0: {
            input(g, "x", f, {"batch", "3", "height", "width"});
            auto* w = g.add_initializer();
            w->set_name("w");
            w->set_data_type(f);
            for (auto d : {16, 3, 3, 3}) w->add_dims(d);  // 1.7 KB: left in the file by ModelFile
            w->mutable_float_data()->Resize(432, 0.0f);
            auto* c = node(g, "Conv", {"x", "w"}, {"c"});
            ints(c, "pads", {1, 1, 1, 1});
            ints(c, "strides", {2, 2});
            auto* p = node(g, "MaxPool", {"c"}, {"p"});
            ints(p, "kernel_shape", {3, 3});
            integer(p, "ceil_mode", 1);
            node(g, "GlobalAveragePool", {"p"}, {"y"});
            break;
        }
        case 1: {
            input(g, "x", f, {"a", "b", "4"});
            int_init(g, "zero", {0});
            int_init(g, "minus_one", {-1});
            int_init(g, "axes", {0});
            node(g, "Shape", {"x"}, {"s"});
            node(g, "Gather", {"s", "zero"}, {"g"});
            integer(node(g, "Concat", {"g", "minus_one"}, {"t"}), "axis", 0);
            node(g, "Reshape", {"x", "t"}, {"r"});
            node(g, "Unsqueeze", {"r", "axes"}, {"y"});
            break;
        }
        case 2: {
            input(g, "q", f, {"batch", "seq", "8"});
            input(g, "k", f, {"batch", "past + seq", "8"});
            auto* t = node(g, "Transpose", {"k"}, {"kt"});
            ints(t, "perm", {0, 2, 1});
            node(g, "MatMul", {"q", "kt"}, {"scores"});
            integer(node(g, "Softmax", {"scores"}, {"p"}), "axis", -1);
            node(g, "MatMul", {"p", "k"}, {"y"});
            break;
        }
        default: {
            input(g, "x", f, {"n", "m"});
            int_init(g, "lo", {1});
            int_init(g, "hi", {3});
            node(g, "Size", {"x"}, {"size"});
            node(g, "Greater", {"size", "hi"}, {"cond"});
            auto* i = node(g, "If", {"cond"}, {"y"});
            for (const char* branch : {"then_branch", "else_branch"}) {
                auto* a = i->add_attribute();
                a->set_name(branch);
                a->set_type(::onnx::AttributeProto::GRAPH);
                auto& b = *a->mutable_g();
                b.set_name(branch);
                auto* s = node(b, "Slice", {"x", "lo", "hi"}, {branch[0] == 't' ? "yt" : "ye"});
                (void)s;
                b.add_output()->set_name(branch[0] == 't' ? "yt" : "ye");
            }
            break;
        }
    }
    g.add_output()->set_name("y");
    return m;
}

/// Changes one field of the model, chosen and valued by the bytes: the mutations
/// of a structure-aware fuzzer (libprotobuf-mutator is not in Debian).
inline void mutate_model(::onnx::ModelProto& m, Bytes& in) {
    auto& g = *m.mutable_graph();
    static const char* const ops[] = {"Add", "Reshape", "Concat", "Slice", "Gather", "Conv", "MaxPool", "Split", "Squeeze",
                                      "Unsqueeze", "Expand", "Range", "Where", "If", "Loop", "Resize", "Pad", "TopK",
                                      "NonZero", "Einsum", "Transpose", "Tile", "ConstantOfShape", "LSTM", "MyOp"};
    static const std::int64_t numbers[] = {0, 1, -1, 2, 3, -2, 7, 1 << 20, std::numeric_limits<std::int64_t>::max(),
                                           std::numeric_limits<std::int64_t>::min(), std::int64_t{1} << 62, -7};
    static const char* const params[] = {"batch", "a b", "x::y", "s + 1", "Max(a, b)", "", "2*n", "a//0", "(", "Mod(h, 3)"};
    switch (in.below(10)) {
        case 0: {  // a dim of an input
            if (g.input_size() == 0) break;
            auto* shape = g.mutable_input(static_cast<int>(in.below(static_cast<std::size_t>(g.input_size()))))
                              ->mutable_type()->mutable_tensor_type()->mutable_shape();
            if (shape->dim_size() == 0) {
                shape->add_dim()->set_dim_value(in.pick(numbers));
                break;
            }
            auto* d = shape->mutable_dim(static_cast<int>(in.below(static_cast<std::size_t>(shape->dim_size()))));
            if (in.coin()) d->set_dim_value(in.pick(numbers));
            else d->set_dim_param(in.pick(params));
            break;
        }
        case 1: m.mutable_opset_import(0)->set_version(static_cast<std::int64_t>(in.below(25))); break;
        case 2:  // an op type
            if (g.node_size()) g.mutable_node(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size()))))->set_op_type(in.pick(ops));
            break;
        case 3: {  // an attribute's value
            if (!g.node_size()) break;
            auto* n = g.mutable_node(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size()))));
            static const char* const names[] = {"axis", "axes", "perm", "pads", "strides", "kernel_shape", "split", "to",
                                                "num_outputs", "allowzero", "keepdims", "equation", "auto_pad"};
            auto* a = n->add_attribute();
            a->set_name(in.pick(names));
            switch (in.below(3)) {
                case 0: a->set_type(::onnx::AttributeProto::INT); a->set_i(in.pick(numbers)); break;
                case 1:
                    a->set_type(::onnx::AttributeProto::INTS);
                    for (std::size_t k = in.below(5); k > 0; --k) a->add_ints(in.pick(numbers));
                    break;
                default: a->set_type(::onnx::AttributeProto::STRING); a->set_s(in.coin() ? "ab,bc->ac" : "SAME_UPPER"); break;
            }
            break;
        }
        case 4: {  // an input of a node renamed to another value, or emptied
            if (!g.node_size()) break;
            auto* n = g.mutable_node(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size()))));
            if (!n->input_size()) break;
            const int k = static_cast<int>(in.below(static_cast<std::size_t>(n->input_size())));
            const auto& other = g.node(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size()))));
            n->set_input(k, in.coin() && other.output_size() ? other.output(0) : std::string());
            break;
        }
        case 5:  // a node removed
            if (g.node_size()) g.mutable_node()->DeleteSubrange(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size()))), 1);
            break;
        case 6: {  // an initializer's values or dims
            if (!g.initializer_size()) break;
            auto* t = g.mutable_initializer(static_cast<int>(in.below(static_cast<std::size_t>(g.initializer_size()))));
            if (in.coin()) {
                t->clear_int64_data();
                for (std::size_t k = in.below(4); k > 0; --k) t->add_int64_data(in.pick(numbers));
            } else if (t->dims_size()) {
                t->set_dims(0, in.pick(numbers));
            }
            if (in.coin()) t->set_data_type(static_cast<std::int32_t>(in.below(17)));
            break;
        }
        case 7: {  // a node's outputs doubled or dropped
            if (!g.node_size()) break;
            auto* n = g.mutable_node(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size()))));
            if (in.coin()) n->add_output(std::string("extra") + std::to_string(in.below(4)));
            else n->clear_output();
            break;
        }
        case 8: {  // a declared value_info with a shape of its own
            auto* v = g.add_value_info();
            v->set_name(g.node_size() ? g.node(0).output_size() ? g.node(0).output(0) : "none" : "none");
            auto* tt = v->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(static_cast<std::int32_t>(in.below(17)));
            for (std::size_t k = in.below(5); k > 0; --k) tt->mutable_shape()->add_dim()->set_dim_value(in.pick(numbers));
            break;
        }
        default: {  // a Constant node feeding an input
            if (!g.node_size()) break;
            auto* c = g.add_node();
            c->set_op_type("Constant");
            c->add_output("k");
            auto* a = c->add_attribute();
            a->set_name(in.coin() ? "value_ints" : "value_int");
            a->set_type(a->name() == "value_ints" ? ::onnx::AttributeProto::INTS : ::onnx::AttributeProto::INT);
            if (a->type() == ::onnx::AttributeProto::INT) a->set_i(in.pick(numbers));
            else
                for (std::size_t k = in.below(4); k > 0; --k) a->add_ints(in.pick(numbers));
            auto* n = g.mutable_node(static_cast<int>(in.below(static_cast<std::size_t>(g.node_size() - 1))));
            if (n->input_size()) n->set_input(static_cast<int>(in.below(static_cast<std::size_t>(n->input_size()))), "k");
            break;
        }
    }
}

/// The shaped model's types readable: each dim_param parses, no negative dim.
inline void check_written_types(const ::onnx::ModelProto& m) {
    const auto check_type = [&](const ::onnx::ValueInfoProto& v) {
        for (const auto& d : v.type().tensor_type().shape().dim())
            if (d.has_dim_param()) {
                try {
                    (void)yobx::parse_sym(d.dim_param());
                } catch (const yobx::error& e) {
                    defect("a written dim_param does not parse: '" + d.dim_param() + "' of " + v.name() + ": " + e.what());
                }
            } else if (d.has_dim_value() && d.dim_value() < 0) {
                defect("a negative dim written for " + v.name());
            }
    };
    for (const auto& v : m.graph().value_info()) check_type(v);
    for (const auto& v : m.graph().output()) check_type(v);
}

/// The memory of a shaped model: only yobx errors (an expression too large for int64), and
/// the peak, evaluated, the largest of the steps' sums.
inline void check_memory(const ::onnx::ModelProto& m) {
    std::optional<yobx::onnx::MemoryReport> memory;
    try {
        memory = yobx::onnx::memory_of(m);
    } catch (const yobx::error& e) {
        if (std::string(e.what()).empty()) defect("a memory error without a message");
        return;
    }
    yobx::SymbolValues sizes;
    for (const auto& s : memory->symbols()) sizes[s] = 3;
    std::int64_t peak = 0, largest = 0;
    try {
        peak = memory->peak.evaluate_with(sizes);
        for (const auto& e : memory->step_sums) largest = std::max(largest, e.evaluate_with(sizes));
    } catch (const yobx::error&) {
        return;  // a division by a size that is 0 at these sizes, an overflow
    }
    if (!memory->step_sums.empty() && peak != largest)
        defect("the peak " + memory->peak.to_string() + " is " + std::to_string(peak) + ", the largest step " + std::to_string(largest));
}

/// infer_shapes' error message, or "" when it succeeds.
inline std::string infer_or_error(::onnx::ModelProto& m, const yobx::onnx::InferenceOptions& options) {
    try {
        yobx::onnx::infer_shapes(m, options);
    } catch (const yobx::error& e) {
        if (std::string(e.what()).empty()) defect("an error without a message");
        return e.what();
    }
    return {};
}

/// A serialized model through infer_shapes: only yobx errors, and a readable result.
/// Read three times: parsed whole by protobuf, by ModelFile, which leaves the large
/// initializer payloads out, and by LightModel (Payloads::none), which reads the nodes itself;
/// all must read the same model, infer the same shapes and write the same bytes once
/// reparsed.
inline void check_onnx_bytes(const std::uint8_t* data, std::size_t size) {
    ::onnx::ModelProto m;
    const bool parsed = size <= static_cast<std::size_t>(std::numeric_limits<int>::max()) &&
                        m.ParseFromArray(data, static_cast<int>(size)) && m.has_graph();
    std::optional<yobx::onnx::ModelFile> file;
    try {
        file.emplace(yobx::onnx::ModelFile::from_bytes(std::string(reinterpret_cast<const char*>(data), size)));
    } catch (const yobx::value_error& e) {
        if (parsed) defect(std::string("ModelFile refuses what protobuf reads: ") + e.what());
        return;  // load_model's clean error
    }
    if (!parsed) defect("ModelFile reads what protobuf refuses");
    const auto reparsed = [&] {
        ::onnx::ModelProto back;
        if (!back.ParseFromString(file->serialize())) defect("what ModelFile writes does not parse");
        return back.SerializeAsString();
    };
    if (reparsed() != m.SerializeAsString()) defect("ModelFile writes another model than it read");
    yobx::onnx::InferenceOptions options;
    options.onnx_fallback = false;  // ONNX's own inference is not under test (and not built with the sanitizers)
    if (size % 3 == 1) options.strict = true;
    if (size % 3 == 2) options.hints = {{"batch", 2}, {"a", 3}, {"b", 4}, {"n", 5}, {"m", 1}, {"seq", 7}};
    const std::string error = infer_or_error(m, options);
    if (infer_or_error(file->model(), options) != error) defect("the model read by ModelFile infers otherwise");
    // the Python module's entry: the same bytes, the same error or the same model
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    std::optional<yobx::onnx::SerializedShapes> light;
    std::string light_error;
    try {
        light = yobx::onnx::infer_shapes_serialized(bytes, options);
    } catch (const yobx::error& e) {
        light_error = e.what();
    }
    if (light_error != error) defect("infer_shapes_serialized fails otherwise than infer_shapes: '" + light_error + "'");
    // read by LightModel (what Payloads::none reads, unless it gives up): only what protobuf reads, the same error
    if (yobx::onnx::detail::LightModel().read(bytes, {}) && !parsed) defect("LightModel reads what protobuf refuses");
    std::string none_error;
    try {
        (void)yobx::onnx::infer_shapes_serialized(bytes, options, yobx::onnx::Payloads::none);
    } catch (const yobx::error& e) {
        none_error = e.what();
    }
    if (none_error != error) defect("Payloads::none fails otherwise than infer_shapes: '" + none_error + "'");
    if (!error.empty()) return;
    check_written_types(m);
    check_memory(m);
    std::string out;
    if (!m.SerializeToString(&out)) defect("the shaped model does not serialize");
    if (reparsed() != out) defect("ModelFile writes other shapes than the model parsed whole");
    // completed as the module completes it: the initializers left out copied from the model the caller holds
    const auto complete = [&](const yobx::onnx::SerializedShapes& s, ::onnx::ModelProto& into) {
        if (!into.ParseFromString(s.model)) defect("the model infer_shapes_serialized returns does not parse");
        for (const std::size_t i : s.left_out) {
            if (i >= static_cast<std::size_t>(into.graph().initializer_size())) defect("a position left out past the initializers");
            *into.mutable_graph()->mutable_initializer(static_cast<int>(i)) = m.graph().initializer(static_cast<int>(i));
        }
    };
    ::onnx::ModelProto completed;
    complete(*light, completed);
    if (completed.SerializeAsString() != out) defect("infer_shapes_serialized's model, completed, is not the model shaped whole");
    ::onnx::ModelProto whole;
    if (!whole.ParseFromString(yobx::onnx::infer_shapes_serialized(bytes, options, yobx::onnx::Payloads::put_back).model) ||
        whole.SerializeAsString() != out)
        defect("infer_shapes_serialized with the payloads put back is not the model shaped whole");
    // none of the model back but its graph's types, merged as the module merges them into a copy of the model it holds;
    // what the walk leaves to free freed first, as the module's thread frees it once the result is out
    yobx::onnx::Leftovers leftovers;
    const auto types = yobx::onnx::infer_shapes_serialized(bytes, options, yobx::onnx::Payloads::none, "<bytes>", 1024, &leftovers);
    if (leftovers.empty()) defect("infer_shapes_serialized leaves nothing to free to the Leftovers given");
    leftovers.clear();
    if (types.graph_types == yobx::onnx::detail::has_subgraph(m.graph())) defect("Payloads::none sends the graph's types only with a subgraph, or whole without");
    ::onnx::ModelProto held;
    if (!held.ParseFromArray(data, static_cast<int>(size))) defect("the model does not parse twice");
    if (types.graph_types) {
        held.mutable_graph()->clear_value_info();
        held.mutable_graph()->clear_output();
        if (!held.mutable_graph()->MergeFromString(types.model)) defect("the graph's types infer_shapes_serialized returns do not parse");
    } else {
        complete(types, held);
    }
    if (held.SerializeAsString() != out) defect("infer_shapes_serialized's graph types, merged into the model, are not the model shaped whole");
}

/// A base model mutated by the bytes, then checked: the replay of the fuzz target.
inline void check_mutated_model(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    ::onnx::ModelProto m = base_model(in.below(4));
    for (std::size_t k = 1 + in.below(6); k > 0; --k) mutate_model(m, in);
    std::string bytes;
    m.SerializeToString(&bytes);
    check_onnx_bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace fuzzgen
