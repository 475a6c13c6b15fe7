// An ONNX model built in C++ (a convolution, then a reshape whose target comes
// from Shape -> Gather -> Concat), its shapes inferred and written in: every
// dimension exact, in terms of the input's dim_params.
#include <yobx/onnx.hpp>

#include <iostream>

namespace {

::onnx::NodeProto* add_node(::onnx::GraphProto& g, const char* op, std::initializer_list<const char*> in,
                            std::initializer_list<const char*> out) {
    ::onnx::NodeProto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(*out.begin());
    for (const char* i : in) n->add_input(i);
    for (const char* o : out) n->add_output(o);
    return n;
}

void add_ints(::onnx::NodeProto* n, const char* name, std::initializer_list<std::int64_t> values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (auto v : values) a->add_ints(v);
}

::onnx::ModelProto make_model() {
    ::onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    ::onnx::GraphProto& g = *model.mutable_graph();
    auto* x = g.add_input();
    x->set_name("x");
    auto* tt = x->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const char* d : {"batch", "3", "height", "width"}) {
        auto* dim = tt->mutable_shape()->add_dim();
        if (d[0] == '3') dim->set_dim_value(3);
        else dim->set_dim_param(d);
    }
    auto* w = g.add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : {16, 3, 3, 3}) w->add_dims(d);
    w->mutable_float_data()->Resize(16 * 3 * 3 * 3, 0.0f);
    auto* zero = g.add_initializer();
    zero->set_name("zero");
    zero->set_data_type(::onnx::TensorProto::INT64);
    zero->add_dims(1);
    zero->add_int64_data(0);
    auto* minus_one = g.add_initializer();
    minus_one->set_name("minus_one");
    minus_one->set_data_type(::onnx::TensorProto::INT64);
    minus_one->add_dims(1);
    minus_one->add_int64_data(-1);
    auto* conv = add_node(g, "Conv", {"x", "w"}, {"conv"});
    add_ints(conv, "strides", {2, 2});
    add_ints(conv, "pads", {1, 1, 1, 1});
    add_node(g, "Shape", {"conv"}, {"shape"});
    add_node(g, "Gather", {"shape", "zero"}, {"batch_size"});
    add_node(g, "Concat", {"batch_size", "minus_one"}, {"target"})->add_attribute()->CopyFrom([] {
        ::onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(::onnx::AttributeProto::INT);
        a.set_i(0);
        return a;
    }());
    add_node(g, "Reshape", {"conv", "target"}, {"y"});
    g.add_output()->set_name("y");
    return model;
}

std::string dims(const ::onnx::TypeProto& t) {
    std::string s;
    for (const auto& d : t.tensor_type().shape().dim()) s += (s.empty() ? "" : ", ") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
    return "[" + s + "]";
}

}  // namespace

int main() {
    ::onnx::ModelProto model = make_model();
    const yobx::onnx::ShapeReport report = yobx::onnx::infer_shapes(model);
    for (const auto& v : model.graph().value_info()) std::cout << v.name() << ": " << dims(v.type()) << "\n";
    std::cout << "y: " << dims(model.graph().output(0).type()) << "\n";
    std::cout << report.nodes << " nodes, " << report.dims << " dims: " << report.constant << " constant, " << report.symbolic
              << " symbolic, " << report.fresh << " fresh\n";
}
