// Shape inference from bytes to bytes (what the Python module calls), evaluate_shapes,
// and the walk's options for onnxruntime's drop-in: guess_output_rank and auto_merge;
// sequence values keep their type.
#include <yobx/adapters/onnx/serialized.hpp>

#include "../error_of.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

using test::error_of;
using yobx::onnx::InferenceOptions;

namespace {

void value(::onnx::ValueInfoProto* v, const char* name, std::vector<const char*> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const char* d : dims) {
        auto* dim = tt->mutable_shape()->add_dim();
        if (d[0] >= '0' && d[0] <= '9') dim->set_dim_value(std::stoll(d));
        else dim->set_dim_param(d);
    }
}

::onnx::NodeProto* add_node(::onnx::GraphProto& g, const char* op, std::vector<const char*> in, const char* out, const char* domain = "") {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(out);
    n->set_domain(domain);
    for (const char* i : in) n->add_input(i);
    n->add_output(out);
    return n;
}

/// An If on `cond` (a bool input it adds) giving `out`, whose two branches hold one node each:
/// `op` of the domain on `in`, its output `r` the branch's.
void add_if(::onnx::GraphProto& g, const char* cond, const char* out, const char* op, const char* in, const char* domain = "") {
    auto* c = g.add_input();
    value(c, cond, {});
    c->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::BOOL);
    auto* node = add_node(g, "If", {cond}, out);
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto* a = node->add_attribute();
        a->set_name(branch);
        a->set_type(::onnx::AttributeProto::GRAPH);
        auto& body = *a->mutable_g();
        body.set_name(branch);
        add_node(body, op, {in}, "r", domain);
        body.add_output()->set_name("r");
    }
    g.add_output()->set_name(out);
}

::onnx::ModelProto model_with(std::vector<std::pair<const char*, int>> opsets = {{"", 17}}) {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    for (const auto& [d, v] : opsets) {
        auto* o = m.add_opset_import();
        o->set_domain(d);
        o->set_version(v);
    }
    return m;
}

/// x [batch, 3, h, w] -> Conv (a 16x3x3x3 weight, 1,728 bytes: left out) -> y.
::onnx::ModelProto conv_model() {
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"batch", "3", "h", "w"});
    auto* w = g.add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    for (int d : {16, 3, 3, 3}) w->add_dims(d);
    w->set_raw_data(std::string(16 * 27 * 4, '\x01'));
    auto* b = g.add_initializer();  // small: parsed, not left out
    b->set_name("b");
    b->set_data_type(::onnx::TensorProto::FLOAT);
    b->add_dims(16);
    b->set_raw_data(std::string(64, '\x02'));
    add_node(g, "Conv", {"x", "w", "b"}, "y");
    g.add_output()->set_name("y");
    return m;
}

std::vector<std::string> dims_of(const ::onnx::TypeProto& t) {
    std::vector<std::string> v;
    for (const auto& d : t.tensor_type().shape().dim()) v.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
    return v;
}

}  // namespace

TEST_CASE("infer_shapes_serialized leaves the large payloads out and says which: completed, it is infer_shapes' model") {
    const ::onnx::ModelProto m = conv_model();
    const std::string bytes = m.SerializeAsString();
    const auto light = yobx::onnx::infer_shapes_serialized(bytes, {});
    CHECK(light.left_out == std::vector<std::size_t>{0});
    CHECK(light.model.size() < bytes.size() / 4);
    ::onnx::ModelProto completed;
    REQUIRE(completed.ParseFromString(light.model));
    CHECK(completed.graph().initializer(0).raw_data().empty());
    *completed.mutable_graph()->mutable_initializer(0) = m.graph().initializer(0);
    ::onnx::ModelProto whole = m;
    const auto report = yobx::onnx::infer_shapes(whole);
    CHECK(completed.SerializeAsString() == whole.SerializeAsString());
    CHECK(dims_of(completed.graph().output(0).type()) == std::vector<std::string>{"batch", "16", "h - 2", "w - 2"});
    CHECK(light.report.dims == report.dims);
    // the payloads put back: the whole model, for a caller that holds only bytes
    const auto put_back = yobx::onnx::infer_shapes_serialized(bytes, {}, yobx::onnx::Payloads::put_back);
    CHECK(put_back.left_out.empty());
    CHECK(put_back.model == whole.SerializeAsString());
}

TEST_CASE("infer_shapes_serialized with Payloads::none sends the graph's types only, or the model when a node has a subgraph") {
    const ::onnx::ModelProto m = conv_model();
    ::onnx::ModelProto whole = m;
    (void)yobx::onnx::infer_shapes(whole);
    const auto types = yobx::onnx::infer_shapes_serialized(m.SerializeAsString(), {}, yobx::onnx::Payloads::none);
    REQUIRE(types.graph_types);
    CHECK(types.left_out.empty());
    ::onnx::GraphProto g;
    REQUIRE(g.ParseFromString(types.model));
    CHECK(g.node_size() == 0);
    CHECK(g.initializer_size() == 0);
    CHECK(g.output_size() == 1);
    CHECK(dims_of(g.output(0).type()) == std::vector<std::string>{"batch", "16", "h - 2", "w - 2"});
    // merged into the caller's model in place of its value_info and outputs: infer_shapes' model
    ::onnx::ModelProto merged = m;
    merged.mutable_graph()->clear_value_info();
    merged.mutable_graph()->clear_output();
    REQUIRE(merged.mutable_graph()->MergeFromString(types.model));
    CHECK(merged.SerializeAsString() == whole.SerializeAsString());

    // an If: its branches' types are written inside the node, so the model comes back (payloads left out)
    ::onnx::ModelProto with_if = conv_model();
    auto& outer = *with_if.mutable_graph();
    add_if(outer, "c", "z", "Relu", "y");
    ::onnx::ModelProto shaped = with_if;
    (void)yobx::onnx::infer_shapes(shaped);
    REQUIRE(shaped.graph().node(1).attribute(0).g().output(0).type().has_tensor_type());
    const auto back = yobx::onnx::infer_shapes_serialized(with_if.SerializeAsString(), {}, yobx::onnx::Payloads::none);
    CHECK_FALSE(back.graph_types);
    CHECK(back.left_out == std::vector<std::size_t>{0});
    ::onnx::ModelProto completed;
    REQUIRE(completed.ParseFromString(back.model));
    *completed.mutable_graph()->mutable_initializer(0) = with_if.graph().initializer(0);
    CHECK(completed.SerializeAsString() == shaped.SerializeAsString());
}

TEST_CASE("a node output named as a graph input, an initializer or another node's output: value_info as the names say") {
    // the walk records where each output went; a name the scope had already (an input's, an
    // initializer's) is looked up as before: neither is written, and each producer of `d` is
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"b", "4"});
    auto* w = g.add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    w->add_dims(4);
    for (int i = 0; i < 4; ++i) w->add_float_data(1.0F);
    add_node(g, "Relu", {"x"}, "a");
    add_node(g, "Add", {"a", "w"}, "w2");
    add_node(g, "Relu", {"w2"}, "w");  // an initializer's name
    add_node(g, "Relu", {"w"}, "x");   // the graph input's
    add_node(g, "Relu", {"x"}, "d");
    add_node(g, "Sigmoid", {"x"}, "d");  // a second producer
    add_node(g, "Relu", {"d"}, "y");
    auto* sink = g.add_node();  // last, without outputs (-D_GLIBCXX_ASSERTIONS: nothing indexed past the record)
    sink->set_op_type("Identity");
    sink->set_name("sink");
    sink->add_input("y");
    g.add_output()->set_name("y");
    g.add_output()->set_name("a");
    ::onnx::ModelProto whole = m;
    (void)yobx::onnx::infer_shapes(whole);
    std::vector<std::string> written;
    for (const auto& v : whole.graph().value_info()) {
        written.push_back(v.name());
        CHECK(dims_of(v.type()) == std::vector<std::string>{"b", "4"});
    }
    CHECK(written == std::vector<std::string>{"w2", "d", "d"});
    for (const auto& o : whole.graph().output()) CHECK(dims_of(o.type()) == std::vector<std::string>{"b", "4"});
    const auto types = yobx::onnx::infer_shapes_serialized(m.SerializeAsString(), {}, yobx::onnx::Payloads::none);
    REQUIRE(types.graph_types);
    ::onnx::ModelProto merged = m;
    merged.mutable_graph()->clear_value_info();
    merged.mutable_graph()->clear_output();
    REQUIRE(merged.mutable_graph()->MergeFromString(types.model));
    CHECK(merged.SerializeAsString() == whole.SerializeAsString());
}

TEST_CASE("infer_shapes_serialized leaves the parsed model and the walk to Leftovers, freed the last kept first: the result holds none of them") {
    const std::string bytes = conv_model().SerializeAsString();
    const auto alone = yobx::onnx::infer_shapes_serialized(bytes, {}, yobx::onnx::Payloads::none);
    std::optional<yobx::onnx::SerializedShapes> kept;
    {
        yobx::onnx::Leftovers leftovers;
        CHECK(leftovers.empty());
        kept = yobx::onnx::infer_shapes_serialized(bytes, {}, yobx::onnx::Payloads::none, "<bytes>", 1024, &leftovers);
        CHECK_FALSE(leftovers.empty());
        leftovers.clear();
        CHECK(leftovers.empty());
    }
    CHECK(kept->model == alone.model);  // read after the leftovers are freed (ASan: nothing of them read)
    CHECK(kept->report.nodes == 1);
    CHECK(kept->report.values == 1);
    // the other paths (the model sent back) leave theirs too, and an error leaves nothing
    yobx::onnx::Leftovers leftovers;
    const auto put_back = yobx::onnx::infer_shapes_serialized(bytes, {}, yobx::onnx::Payloads::put_back, "<bytes>", 1024, &leftovers);
    CHECK_FALSE(leftovers.empty());
    leftovers.clear();
    CHECK(put_back.model == yobx::onnx::infer_shapes_serialized(bytes, {}, yobx::onnx::Payloads::put_back).model);
    CHECK(error_of([&] { (void)yobx::onnx::infer_shapes_serialized("not a model", {}, yobx::onnx::Payloads::none, "<bytes>", 1024, &leftovers); }) ==
          "'<bytes>' is not an ONNX model (the protobuf does not parse: malformed or truncated)");
    CHECK(leftovers.empty());
}

TEST_CASE("infer_shapes_serialized's errors are infer_shapes' and ModelFile's, naming the bytes") {
    CHECK(error_of([] { (void)yobx::onnx::infer_shapes_serialized("not a model", {}); }) ==
          "'<bytes>' is not an ONNX model (the protobuf does not parse: malformed or truncated)");
    ::onnx::ModelProto m = conv_model();
    m.mutable_opset_import(0)->set_version(40);
    CHECK(error_of([&] { (void)yobx::onnx::infer_shapes_serialized(m.SerializeAsString(), {}, yobx::onnx::Payloads::left_out, "model.onnx"); }) ==
          "unknown opset 40 of the default domain (yobx knows 7 to 28)");
    ::onnx::ModelProto no_graph;
    no_graph.set_ir_version(8);
    CHECK(error_of([&] { (void)yobx::onnx::infer_shapes_serialized(no_graph.SerializeAsString(), {}); }) == "'<bytes>' has no graph");
}

TEST_CASE("an error's message on one line: the control characters of the names it quotes as escapes") {
    ::onnx::ModelProto m = model_with();
    value(m.mutable_graph()->add_input(), "x", {"n"});
    add_node(*m.mutable_graph(), "Add", {"x", "no\nwhere"}, "y")->set_name("a\r\nb\x01\x7f\t");
    const std::string message = error_of([&] { (void)yobx::onnx::infer_shapes(m); });
    CHECK(message == "node 'a\r\nb\x01\x7f\t' (Add): input 'no\nwhere' is produced by no node, initializer or graph input");
    CHECK(yobx::one_line(message) ==
          "node 'a\\r\\nb\\x01\\x7f\\t' (Add): input 'no\\nwhere' is produced by no node, initializer or graph input");
    CHECK(yobx::one_line("caf\xC3\xA9 \xE9 \\ '") == "caf\xC3\xA9 \xE9 \\ '");  // only control characters change
}

TEST_CASE("a malformed initializer or tensor attribute is an error naming it (and the attribute's node)") {
    const auto error_with_dims = [](bool as_attribute, std::vector<std::int64_t> dims) {
        ::onnx::ModelProto m = model_with();
        auto& g = *m.mutable_graph();
        value(g.add_input(), "x", {"2"});
        ::onnx::TensorProto* t = nullptr;
        if (as_attribute) {
            auto* a = add_node(g, "Constant", {}, "c")->add_attribute();
            a->set_name("value");
            a->set_type(::onnx::AttributeProto::TENSOR);
            t = a->mutable_t();
        } else {
            t = g.add_initializer();
            t->set_name("c");
        }
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (auto d : dims) t->add_dims(d);
        add_node(g, "Add", {"x", "c"}, "y");
        g.add_output()->set_name("y");
        return error_of([&] { (void)yobx::onnx::infer_shapes(m); });
    };
    CHECK(error_with_dims(false, {2, -1}) == "initializer 'c' has a negative dimension -1");
    CHECK(error_with_dims(false, {std::int64_t{1} << 40, std::int64_t{1} << 40}) == "initializer 'c': the element count of its dims overflows");
    CHECK(error_with_dims(true, {-3}) == "attribute 'value' of node 'c' has a negative dimension -3");
    CHECK(error_with_dims(true, {std::int64_t{1} << 62, 4}) == "attribute 'value' of node 'c': the element count of its dims overflows");
}

TEST_CASE("ModelFile::view reads bytes it does not copy, and saves with the payloads put back") {
    const std::string bytes = conv_model().SerializeAsString();
    auto file = yobx::onnx::ModelFile::view(bytes);
    CHECK(file.left_out() == std::vector<std::size_t>{0});
    CHECK(file.bytes_left_in_file() == 16 * 27 * 4 + 3);  // the raw_data field: tag, length (2 bytes) and payload
    CHECK(file.serialize() == bytes);
}

TEST_CASE("evaluate_shapes gives every value's concrete shape at given sizes") {
    ::onnx::ModelProto m = conv_model();
    (void)yobx::onnx::infer_shapes(m);
    const auto shapes = yobx::onnx::evaluate_shapes(m, {{"batch", 2}, {"h", 10}, {"w", 7}});
    using S = yobx::onnx::ConcreteShape;
    CHECK(shapes.at("x") == S{2, 3, 10, 7});
    CHECK(shapes.at("w") == S{16, 3, 3, 3});
    CHECK(shapes.at("y") == S{2, 16, 8, 5});
    const auto partial = yobx::onnx::evaluate_shapes(m, {{"h", 10}});
    CHECK(partial.at("y") == S{std::nullopt, 16, 8, std::nullopt});
    CHECK(error_of([&] { (void)yobx::onnx::evaluate_shapes(m, {{"hh", 10}}); }) ==
          "evaluate_shapes: size 'hh' names no dim of the model (its symbols: batch, h, w)");
    // an expression that cannot be evaluated at the sizes
    ::onnx::ModelProto d = model_with();
    value(d.mutable_graph()->add_input(), "x", {"n//k"});
    CHECK(error_of([&] { (void)yobx::onnx::evaluate_shapes(d, {{"n", 4}, {"k", 0}}); }).starts_with(
        "evaluate_shapes: the dim 'n//k' at the given sizes: "));
}

TEST_CASE("a size or a hint names an input dim by its name in the model or by its symbol (the report's name_mapping)") {
    // "batch size" is not a symbol name: the inferred dims use batch_size (the report's name_mapping)
    ::onnx::ModelProto m = model_with();
    value(m.mutable_graph()->add_input(), "x", {"batch size", "3"});
    add_node(*m.mutable_graph(), "Relu", {"x"}, "y");
    m.mutable_graph()->add_output()->set_name("y");
    const yobx::onnx::ShapeReport report = yobx::onnx::infer_shapes(m);
    using S = yobx::onnx::ConcreteShape;
    for (const char* name : {"batch size", "batch_size"}) {
        const auto shapes = yobx::onnx::evaluate_shapes(m, {{name, 2}}, report);
        CHECK(shapes.at("x") == S{2, 3});
        CHECK(shapes.at("y") == S{2, 3});
    }
    CHECK(yobx::onnx::evaluate_shapes(m, {{"batch size", 2}, {"batch_size", 2}}, report).at("y") == S{2, 3});
    CHECK(error_of([&] { (void)yobx::onnx::evaluate_shapes(m, {{"batch size", 2}, {"batch_size", 3}}, report); }) ==
          "sizes 'batch size' (2) and 'batch_size' (3) name the same dim: the model's 'batch size' is the symbol batch_size");
    // without the report, the dims as written: the input's by its name in the model, the inferred ones by the symbol
    CHECK(yobx::onnx::evaluate_shapes(m, {{"batch size", 2}}).at("y") == S{std::nullopt, 3});
    CHECK(yobx::onnx::evaluate_shapes(m, {{"batch_size", 2}}).at("x") == S{std::nullopt, 3});
    CHECK(report.symbol_of("batch size") == "batch_size");
    CHECK(report.symbol_of("seq") == "seq");
    CHECK(report.by_symbol({{"batch size", 2}, {"seq", 5}}) == yobx::SymbolValues{{"batch_size", 2}, {"seq", 5}});
    // a hint by either name: x + w, w of shape [4, 3], broadcasts batch_size with 4, which the hint answers
    ::onnx::ModelProto b = model_with();
    value(b.mutable_graph()->add_input(), "x", {"batch size", "3"});
    auto* w = b.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    for (int d : {4, 3}) w->add_dims(d);
    w->set_raw_data(std::string(48, '\0'));
    add_node(*b.mutable_graph(), "Add", {"x", "w"}, "y");
    b.mutable_graph()->add_output()->set_name("y");
    for (const char* name : {"batch size", "batch_size"}) {
        InferenceOptions o;
        o.hints = {{name, 4}};
        ::onnx::ModelProto hinted = b;
        const auto r = yobx::onnx::infer_shapes(hinted, o);
        CHECK(r.name_mapping == report.name_mapping);
        REQUIRE(r.assumptions.size() == 1);
        CHECK(r.assumptions[0].question == "broadcasting batch_size with 4");
        CHECK(dims_of(hinted.graph().output(0).type()) == std::vector<std::string>{"4", "3"});
    }
    InferenceOptions both;
    both.hints = {{"batch size", 4}, {"batch_size", 5}};
    ::onnx::ModelProto hinted = b;
    CHECK(error_of([&] { (void)yobx::onnx::infer_shapes(hinted, both); }) ==
          "hints 'batch size' (4) and 'batch_size' (5) name the same dim: the model's 'batch size' is the symbol batch_size");
}

TEST_CASE("a dim_param with a hyphen between name characters is a name, a spaced minus an expression") {
    using yobx::onnx::detail::hyphenated_name;
    for (const char* name : {"seq-len", "n-1", "max-new-tokens", "a+b-c", "_-_", "s\xc3\xa9q-len"}) CHECK_MESSAGE(hyphenated_name(name), name);
    for (const char* expr : {"seq - len", "-n + 5", "n - 1", "(h + 7)//8", "x//-3", "Max(-1, n)", "-x", "-", "", "a-", "-a"})
        CHECK_MESSAGE(!hyphenated_name(expr), expr);
    // as onnxruntime and ONNX read it: one name (seq_len, the report's name_mapping), where n - 1 is read as written
    ::onnx::ModelProto m = model_with();
    value(m.mutable_graph()->add_input(), "x", {"seq-len", "n - 1"});
    add_node(*m.mutable_graph(), "Relu", {"x"}, "y");
    m.mutable_graph()->add_output()->set_name("y");
    const yobx::onnx::ShapeReport report = yobx::onnx::infer_shapes(m);
    CHECK(dims_of(m.graph().output(0).type()) == std::vector<std::string>{"seq_len", "n - 1"});
    CHECK(report.name_mapping == std::vector<std::pair<std::string, std::string>>{{"seq-len", "seq_len"}});
    using S = yobx::onnx::ConcreteShape;
    for (const char* name : {"seq-len", "seq_len"}) CHECK(yobx::onnx::evaluate_shapes(m, {{name, 5}, {"n", 4}}, report).at("y") == S{5, 3});
    // without the report, as written: the name by its text, never as seq - len
    CHECK(yobx::onnx::evaluate_shapes(m, {{"seq-len", 5}, {"n", 4}}).at("x") == S{5, 3});
    CHECK(error_of([&] { (void)yobx::onnx::evaluate_shapes(m, {{"seq", 7}, {"len", 2}}); }) ==
          "evaluate_shapes: size 'len' names no dim of the model (its symbols: n, seq_len)");
    // a hint by the model's name
    InferenceOptions o;
    o.hints = {{"seq-len", 6}};
    ::onnx::ModelProto hinted = m;
    CHECK(yobx::onnx::infer_shapes(hinted, o).name_mapping == report.name_mapping);
}

TEST_CASE("guess_output_rank gives an operator no rule covers the rank and type of its first input") {
    ::onnx::ModelProto m = model_with({{"", 17}, {"mydomain", 1}});
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"batch", "3", "5"});
    add_node(g, "MyOp", {"x"}, "y", "mydomain");
    g.add_output()->set_name("y");
    ::onnx::ModelProto plain = m;
    const auto unknown = yobx::onnx::infer_shapes(plain);
    CHECK(unknown.unknown_rank == 1);
    CHECK(unknown.unknown_type == 1);  // no rule, no ONNX inference: what onnxruntime's tool stops on
    CHECK_FALSE(plain.graph().output(0).type().tensor_type().has_shape());
    InferenceOptions o;
    o.guess_output_rank = true;
    const auto guessed = yobx::onnx::infer_shapes(m, o);
    CHECK(guessed.unknown_rank == 0);
    CHECK(guessed.unknown_type == 0);
    CHECK(m.graph().output(0).type().tensor_type().elem_type() == ::onnx::TensorProto::FLOAT);
    CHECK(dims_of(m.graph().output(0).type()) == std::vector<std::string>{"unk__0", "unk__1", "unk__2"});
    REQUIRE(guessed.fresh_symbols.size() == 3);
    CHECK(guessed.fresh_symbols[0].why == "guess_output_rank: an operator no rule covers, given the rank of its first input");

    // in an If's branches: their values are not counted in unknown_type (onnxruntime's tool asks
    // only the main graph's), the If's output is
    ::onnx::ModelProto with_if = model_with({{"", 17}, {"mydomain", 1}});
    auto& outer = *with_if.mutable_graph();
    value(outer.add_input(), "x", {"batch", "3", "5"});
    add_if(outer, "c", "z", "MyOp", "x", "mydomain");
    const auto in_branches = yobx::onnx::infer_shapes(with_if);
    CHECK(in_branches.unknown_rank == 3);
    CHECK(in_branches.unknown_type == 1);
}

TEST_CASE("a node of a function the model defines is typed by ONNX's inference through its body, not left of unknown type") {
    // local.ReluAdd(a) = Relu(a) + a: no rule, no schema, but ONNX's inference walks the body;
    // its output was counted of unknown type, which made the onnxruntime drop-in raise where
    // onnxruntime's tool gives the shape
    ::onnx::ModelProto m = model_with({{"", 17}, {"local", 1}});
    auto* f = m.add_functions();
    f->set_name("ReluAdd");
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    f->add_opset_import()->set_version(17);
    auto* relu = f->add_node();
    relu->set_op_type("Relu");
    relu->add_input("a");
    relu->add_output("r");
    auto* add = f->add_node();
    add->set_op_type("Add");
    add->add_input("r");
    add->add_input("a");
    add->add_output("b");
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"batch", "3"});
    add_node(g, "ReluAdd", {"x"}, "h", "local");
    add_node(g, "Neg", {"h"}, "y");
    g.add_output()->set_name("y");
    ::onnx::ModelProto shaped = m;
    const auto report = yobx::onnx::infer_shapes(shaped);
    CHECK(report.unknown_type == 0);
    CHECK(report.unknown_rank == 0);
    CHECK(report.from_onnx_inference == 1);
    CHECK(report.not_covered == std::map<std::string, std::size_t>{{"local.ReluAdd", 1}});
    REQUIRE(shaped.graph().value_info_size() == 1);
    CHECK(dims_of(shaped.graph().value_info(0).type()) == std::vector<std::string>{"batch", "3"});
    CHECK(dims_of(shaped.graph().output(0).type()) == std::vector<std::string>{"batch", "3"});
    // the Python module's path (the graph read without protobuf's parse, the model parsed for ONNX then)
    const auto types = yobx::onnx::infer_shapes_serialized(m.SerializeAsString(), {}, yobx::onnx::Payloads::none);
    CHECK(types.report.unknown_type == 0);
    CHECK(types.report.from_onnx_inference == 1);
}

TEST_CASE("ONNX's own inference, asked for a node no rule decides, runs without its data propagation, which crashed here") {
    // ONNX 1.12 to 1.17 dereference a null pointer propagating an Add of an empty Shape slice:
    // the process died when a Squeeze without axes (which dims are 1 is not known) asked ONNX
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"n", "4", "h", "w"});
    auto* five = g.add_initializer();
    five->set_name("five");
    five->set_data_type(::onnx::TensorProto::INT64);
    five->add_int64_data(5);
    auto* shape = add_node(g, "Shape", {"x"}, "s");
    for (const auto& [name, v] : {std::pair{"start", -2}, std::pair{"end", 0}}) {
        auto* a = shape->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    add_node(g, "Add", {"s", "five"}, "a");
    add_node(g, "Squeeze", {"x"}, "q");
    g.add_output()->set_name("a");
    g.add_output()->set_name("q");
    const auto result = yobx::onnx::infer_shapes(m);
    CHECK(dims_of(m.graph().output(0).type()) == std::vector<std::string>{"0"});
    CHECK_FALSE(m.graph().output(1).type().tensor_type().has_shape());  // ONNX cannot tell either
    CHECK(result.unknown_rank == 1);
}

TEST_CASE("a value whose element type nobody knows is not written: onnxruntime refuses a tensor of element type 0") {
    // MyOp: no rule, no ONNX schema; Relu of it knows no more. Both were written with elem_type 0,
    // which onnxruntime refuses to load ("Invalid tensor data type 0"); ONNX's inference writes nothing
    ::onnx::ModelProto m = model_with({{"", 17}, {"mydomain", 1}});
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"batch", "3"});
    add_node(g, "MyOp", {"x"}, "y", "mydomain");
    add_node(g, "Relu", {"y"}, "z");
    add_node(g, "Relu", {"x"}, "r");
    g.add_output()->set_name("z");
    g.add_output()->set_name("r");
    ::onnx::ModelProto shaped = m;
    const auto result = yobx::onnx::infer_shapes(shaped);
    CHECK(result.unknown_type == 2);
    CHECK(result.unknown_rank == 2);
    REQUIRE(shaped.graph().value_info_size() == 0);
    CHECK_FALSE(shaped.graph().output(0).has_type());
    CHECK(shaped.graph().output(1).type().tensor_type().elem_type() == ::onnx::TensorProto::FLOAT);
    CHECK(dims_of(shaped.graph().output(1).type()) == std::vector<std::string>{"batch", "3"});
    // the bytes the Python module merges: the same, no value_info field
    const auto types = yobx::onnx::infer_shapes_serialized(m.SerializeAsString(), {}, yobx::onnx::Payloads::none);
    REQUIRE(types.graph_types);
    ::onnx::GraphProto back;
    REQUIRE(back.ParseFromString(types.model));
    CHECK(back.value_info_size() == 0);
    REQUIRE(back.output_size() == 2);
    CHECK_FALSE(back.output(0).has_type());
    // a type the model declares for the output is kept
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::DOUBLE);
    ::onnx::ModelProto declared = m;
    (void)yobx::onnx::infer_shapes(declared);
    CHECK(declared.graph().output(0).type().tensor_type().elem_type() == ::onnx::TensorProto::DOUBLE);
}

TEST_CASE("auto_merge takes two dims a broadcast cannot tell apart as equal, and reports the assumption") {
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "a", {"x_len", "4"});
    value(g.add_input(), "b", {"m", "4"});
    add_node(g, "Add", {"a", "b"}, "s");
    add_node(g, "Relu", {"s"}, "y");
    add_node(g, "Concat", {"a", "b"}, "c")->add_attribute()->set_name("axis");  // axis 0: x_len + m, one symbol once merged
    g.mutable_node(2)->mutable_attribute(0)->set_type(::onnx::AttributeProto::INT);
    g.mutable_node(2)->mutable_attribute(0)->set_i(0);
    g.add_output()->set_name("y");
    g.add_output()->set_name("c");
    ::onnx::ModelProto plain = m;
    (void)yobx::onnx::infer_shapes(plain);
    CHECK(dims_of(plain.graph().output(0).type()) == std::vector<std::string>{"s0", "4"});
    InferenceOptions o;
    o.auto_merge = true;
    const auto report = yobx::onnx::infer_shapes(m, o);
    // two named dims: the one the ShapeEnv keeps is the first in natural order
    CHECK(dims_of(m.graph().output(0).type()) == std::vector<std::string>{"m", "4"});
    CHECK(dims_of(m.graph().output(1).type()) == std::vector<std::string>{"2*m", "4"});
    REQUIRE(report.assumptions.size() == 1);
    CHECK(report.assumptions[0].node == "'s' (Add)");
    CHECK(report.assumptions[0].question == "auto_merge: broadcasting x_len with m");
    CHECK(report.assumptions[0].answer == "Eq(m, x_len)");
    CHECK(report.facts.empty());
    CHECK(report.fresh == 0);
}

TEST_CASE("auto_merge keeps a named dim over a fresh one, whatever the names") {
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "a", {"z_len"});
    value(g.add_input(), "b", {"4"});
    g.mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_value();  // unk__0
    add_node(g, "Add", {"a", "b"}, "y");  // z_len with unk__0: z_len kept though 'z_len' > 'unk__0'
    g.add_output()->set_name("y");
    InferenceOptions o;
    o.auto_merge = true;
    const auto report = yobx::onnx::infer_shapes(m, o);
    CHECK(dims_of(m.graph().output(0).type()) == std::vector<std::string>{"z_len"});
    REQUIRE(report.assumptions.size() == 1);
    CHECK(report.assumptions[0].answer == "Eq(unk__0, z_len)");
}

TEST_CASE("a sequence value keeps the type the model or ONNX's inference gives it") {
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "x", {"n", "2"});
    add_node(g, "SequenceConstruct", {"x", "x"}, "seq");
    add_node(g, "SequenceLength", {"seq"}, "len");
    auto* out = g.add_output();
    out->set_name("seq");
    auto* elem = out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
    elem->set_elem_type(::onnx::TensorProto::FLOAT);
    g.add_output()->set_name("len");
    const auto report = yobx::onnx::infer_shapes(m);
    CHECK(m.graph().output(0).type().has_sequence_type());
    CHECK(m.graph().output(0).type().sequence_type().elem_type().tensor_type().elem_type() == ::onnx::TensorProto::FLOAT);
    CHECK(report.not_tensor == 1);
    CHECK(m.graph().output(1).type().tensor_type().elem_type() == ::onnx::TensorProto::INT64);
}

TEST_CASE("auto_merge takes a dim and a slice of a table to it as equal: the dim at most the table's length") {
    ::onnx::ModelProto m = model_with();
    auto& g = *m.mutable_graph();
    value(g.add_input(), "a", {"n", "4"});
    const auto ints = [&](const char* name, std::vector<std::int64_t> v) {
        auto* t = g.add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        t->add_dims(static_cast<std::int64_t>(v.size()));
        for (auto x : v) t->add_int64_data(x);
    };
    auto* table = g.add_initializer();
    table->set_name("table");
    table->set_data_type(::onnx::TensorProto::FLOAT);
    table->add_dims(64);
    table->add_dims(4);
    table->set_raw_data(std::string(64 * 4 * 4, '\0'));
    ints("zero", {0});
    ints("one", {1});
    add_node(g, "Shape", {"a"}, "shape");
    add_node(g, "Slice", {"shape", "zero", "one"}, "len");          // [n]
    add_node(g, "Slice", {"table", "zero", "len", "zero"}, "rows");  // [Min(64, n), 4]
    add_node(g, "Add", {"a", "rows"}, "y");
    g.add_output()->set_name("y");
    ::onnx::ModelProto plain = m;
    (void)yobx::onnx::infer_shapes(plain);
    CHECK(dims_of(plain.graph().value_info(2).type()) == std::vector<std::string>{"Min(64, n)", "4"});
    CHECK(dims_of(plain.graph().output(0).type()) == std::vector<std::string>{"n", "4"});
    InferenceOptions o;
    o.auto_merge = true;
    const auto report = yobx::onnx::infer_shapes(m, o);
    CHECK(m.graph().value_info(2).name() == "rows");
    CHECK(dims_of(m.graph().value_info(2).type()) == std::vector<std::string>{"n", "4"});
    REQUIRE(report.assumptions.size() == 1);
    CHECK(report.assumptions[0].question == "auto_merge: broadcasting n with Min(64, n)");
    CHECK(report.assumptions[0].answer == "n <= 64");
}
