// LightModel: a model read for inference without protobuf's parse of its graph gives, through
// infer_shapes_serialized (Payloads::none), the bytes, report and errors the parsed model gives;
// it reads only what protobuf reads, and gives up (the parsed model's path then) on the rest.
#include <yobx/adapters/onnx/serialized.hpp>

#include "../error_of.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef YOBX_ONNX_TESTDATA
#define YOBX_ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

using yobx::onnx::InferenceOptions;

namespace light_test {

namespace fs = std::filesystem;

/// What infer_shapes_serialized gives, through LightModel or never: the bytes and the report, or the error.
std::string outcome(const std::string& bytes, const InferenceOptions& o, bool light) {
    try {
        auto out = yobx::onnx::detail::infer_shapes_serialized(bytes, o, yobx::onnx::Payloads::none, "m.onnx", 1024, nullptr, light);
        out.report.seconds = 0;
        return (out.graph_types ? "types " : "model ") + out.model + "\n" + out.report.to_json();
    } catch (const yobx::error& e) {
        return std::string("error: ") + e.what();
    }
}

bool reads(const std::string& bytes) {
    yobx::onnx::detail::LightModel m;
    return m.read(bytes, {});
}

bool parses(const std::string& bytes) {
    ::onnx::ModelProto m;
    return m.ParseFromString(bytes);
}

/// Whether a node of the parsed model has a subgraph or is control flow (what LightModel leaves).
bool has_control_flow(const std::string& bytes) {
    ::onnx::ModelProto m;
    REQUIRE(m.ParseFromString(bytes));
    for (const auto& n : m.graph().node()) {
        if ((n.domain().empty() || n.domain() == "ai.onnx") && (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan"))
            return true;
        for (const auto& a : n.attribute())
            if (a.has_g() || a.graphs_size() > 0) return true;
    }
    return false;
}

/// The model with every input dim a name (d0, d1, ...): the walk computes with symbols.
std::string symbolic(const std::string& bytes) {
    ::onnx::ModelProto m;
    REQUIRE(m.ParseFromString(bytes));
    int k = 0;
    for (auto& in : *m.mutable_graph()->mutable_input())
        if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
            for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) d.set_dim_param("d" + std::to_string(k++));
    return m.SerializeAsString();
}

std::string bytes_of_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

::onnx::ModelProto small_model() {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto& g = *m.mutable_graph();
    auto* x = g.add_input();
    x->set_name("x");
    auto* tt = x->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(::onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("n");
    tt->mutable_shape()->add_dim()->set_dim_value(4);
    auto* w = g.add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->add_dims(8);
    w->set_raw_data(std::string(4 * 8 * 4, '\x01'));
    auto* n = g.add_node();
    n->set_op_type("MatMul");
    n->set_name("mm");
    n->add_input("x");
    n->add_input("w");
    n->add_output("y");
    g.add_output()->set_name("y");
    return m;
}

}  // namespace light_test

TEST_CASE("LightModel: ONNX's node tests give what the parsed model gives, dims as given or named") {
    using namespace light_test;
    std::vector<fs::path> dirs;
    for (const auto& d : fs::directory_iterator(fs::path(YOBX_ONNX_TESTDATA) / "node"))
        if (fs::exists(d.path() / "model.onnx")) dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    std::size_t models = 0, light = 0, expected_light = 0;
    std::vector<std::string> differ;
    for (const auto& dir : dirs) {
        const std::string given = bytes_of_file(dir / "model.onnx");
        for (const std::string& bytes : {given, symbolic(given)}) {
            ++models;
            const bool read = reads(bytes);
            light += read;
            expected_light += !has_control_flow(bytes);
            if (outcome(bytes, {}, true) != outcome(bytes, {}, false)) differ.push_back(dir.filename().string());
        }
    }
    INFO("differ: " << differ.size() << (differ.empty() ? "" : ", the first " + differ.front()));
    CHECK(differ.empty());
    CHECK(models == 2 * dirs.size());
    CHECK(dirs.size() > 900);
    CHECK(light == expected_light);  // every model without control flow is read light
    CHECK(light > models / 2);
}

TEST_CASE("LightModel reads a node's other fields, unknown fields and strict mode's errors as the parsed model does") {
    using namespace light_test;
    ::onnx::ModelProto m = small_model();
    auto* n = m.mutable_graph()->mutable_node(0);
    n->set_doc_string("a node with a doc string");
    n->mutable_unknown_fields()->AddVarint(100, 7);  // a field protobuf does not know
    auto* a = n->add_attribute();
    a->set_name("unused");
    a->set_type(::onnx::AttributeProto::INTS);
    a->add_ints(3);
    const std::string bytes = m.SerializeAsString();
    CHECK(reads(bytes));
    const std::string light = outcome(bytes, {}, true);
    CHECK(light == outcome(bytes, {}, false));
    CHECK(light.starts_with("types "));
    CHECK(light.find("\"nodes\": 1") != std::string::npos);
    // a contradiction: x's second dim is 4, w's first 5
    ::onnx::ModelProto bad = small_model();
    bad.mutable_graph()->mutable_initializer(0)->set_dims(0, 5);
    bad.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(5 * 8 * 4, '\x01'));
    InferenceOptions strict;
    strict.strict = true;
    const std::string error = outcome(bad.SerializeAsString(), strict, true);
    CHECK(error == outcome(bad.SerializeAsString(), strict, false));
    CHECK(error.starts_with("error: node 'mm' (MatMul): "));
}

TEST_CASE("LightModel gives up where protobuf would read otherwise: the parsed model's path then, with its errors") {
    using namespace light_test;
    const std::string good = small_model().SerializeAsString();
    // the graph field twice: protobuf merges the two
    ::onnx::ModelProto second;
    second.mutable_graph()->add_node()->set_op_type("Identity");
    const std::string twice = good + second.SerializeAsString();
    REQUIRE(parses(twice));
    CHECK(!reads(twice));
    CHECK(outcome(twice, {}, true) == outcome(twice, {}, false));
    // truncated and garbled bytes
    for (const std::string& broken : {good.substr(0, good.size() - 3), std::string("\x3a\x7f", 2), std::string()}) {
        CHECK(!reads(broken));
        CHECK(outcome(broken, {}, true) == "error: 'm.onnx' is not an ONNX model (the protobuf does not parse: malformed or truncated)");
    }
    // a packed payload that does not divide in floats
    ::onnx::ModelProto odd = small_model();
    auto* t = odd.mutable_graph()->mutable_initializer(0);
    t->clear_raw_data();
    t->set_dims(0, 1);
    t->set_dims(1, 1);
    t->add_float_data(1.0f);
    std::string packed = odd.SerializeAsString();
    const auto at = packed.find(std::string("\x22\x04", 2));  // float_data, packed, 4 bytes
    REQUIRE(at != std::string::npos);
    packed[at + 1] = '\x03';
    CHECK(!reads(packed));
    CHECK(!parses(packed));
    // no graph at all
    ::onnx::ModelProto empty;
    empty.set_ir_version(8);
    CHECK(!reads(empty.SerializeAsString()));
    CHECK(outcome(empty.SerializeAsString(), {}, true) == "error: 'm.onnx' has no graph");
}

TEST_CASE("LightModel parses an attribute's nested types at the depth protobuf allows there") {
    using namespace light_test;
    // an attribute's type_protos nest sequences of sequences: from some depth protobuf refuses the model
    std::size_t refused = 0;
    for (int depth = 40; depth <= 55; ++depth) {  // two messages a level
        ::onnx::ModelProto m = small_model();
        auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
        a->set_name("types");
        a->set_type(::onnx::AttributeProto::TYPE_PROTOS);
        ::onnx::TypeProto* t = a->add_type_protos();
        for (int k = 0; k < depth; ++k) t = t->mutable_sequence_type()->mutable_elem_type();
        t->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        std::string bytes;
        REQUIRE(m.SerializeToString(&bytes));
        CAPTURE(depth);
        CHECK(reads(bytes) == parses(bytes));
        CHECK(outcome(bytes, {}, true) == outcome(bytes, {}, false));
        refused += !parses(bytes);
    }
    CHECK(refused > 0);
    CHECK(refused < 16);
}

TEST_CASE("LightModel: an initializer's error and ONNX's inference for an operator no rule covers, as the parsed model gives them") {
    using namespace light_test;
    ::onnx::ModelProto negative = small_model();
    negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -3);
    negative.mutable_graph()->mutable_initializer(0)->clear_raw_data();
    const std::string bytes = negative.SerializeAsString();
    CHECK(reads(bytes));
    CHECK(outcome(bytes, {}, true) == "error: initializer 'w' has a negative dimension -3");
    CHECK(outcome(bytes, {}, false) == "error: initializer 'w' has a negative dimension -3");
    // operators yobx has no rule for: ONNX's inference types their outputs (the model parsed then)
    ::onnx::ModelProto m = small_model();
    auto* construct = m.mutable_graph()->add_node();
    construct->set_op_type("SequenceConstruct");
    construct->add_input("y");
    construct->add_output("s");
    auto* length = m.mutable_graph()->add_node();
    length->set_op_type("SequenceLength");
    length->add_input("s");
    length->add_output("l");
    m.mutable_graph()->add_output()->set_name("l");
    const std::string with_fallback = m.SerializeAsString();
    CHECK(reads(with_fallback));
    const std::string light = outcome(with_fallback, {}, true);
    CHECK(light == outcome(with_fallback, {}, false));
    CHECK(light.find("\"from_onnx_inference\": 1,") != std::string::npos);  // l (s is a sequence: not_tensor)
    CHECK(light.find("\"not_tensor\": 1,") != std::string::npos);
    yobx::onnx::SerializedShapes out = yobx::onnx::infer_shapes_serialized(with_fallback, {}, yobx::onnx::Payloads::none);
    ::onnx::GraphProto types;
    REQUIRE(types.ParseFromString(out.model));
    REQUIRE(types.output_size() == 2);
    CHECK(types.output(1).name() == "l");
    CHECK(types.output(1).type().tensor_type().elem_type() == ::onnx::TensorProto::INT64);
    CHECK(types.output(1).type().tensor_type().has_shape());
    CHECK(types.output(1).type().tensor_type().shape().dim_size() == 0);
}

TEST_CASE("LightModel takes a large initializer's type and dims as tensor_info takes them, whatever its other fields") {
    using namespace light_test;
    std::vector<std::string> variants;
    const auto with = [&](auto change) {
        ::onnx::ModelProto m = small_model();
        change(*m.mutable_graph()->mutable_initializer(0));
        variants.push_back(m.SerializeAsString());
    };
    with([](::onnx::TensorProto&) {});
    with([](::onnx::TensorProto& t) {  // read by no one
        t.set_doc_string("weights");
        t.set_data_location(::onnx::TensorProto::DEFAULT);
    });
    with([](::onnx::TensorProto& t) { t.mutable_segment()->set_begin(0); });  // parsed by protobuf
    with([](::onnx::TensorProto& t) {
        auto* e = t.add_external_data();
        e->set_key("location");
        e->set_value("w.bin");
        t.set_data_location(::onnx::TensorProto::EXTERNAL);
        t.clear_raw_data();
    });
    with([](::onnx::TensorProto& t) { t.set_data_type(::onnx::TensorProto::INT64); });   // a type MatMul refuses with float
    with([](::onnx::TensorProto& t) { t.mutable_unknown_fields()->AddLengthDelimited(2, "x"); });  // data_type, not a varint
    with([](::onnx::TensorProto& t) { t.mutable_unknown_fields()->AddVarint(2, (std::uint64_t{1} << 32) | 1); });  // past int32
    with([](::onnx::TensorProto& t) { t.set_dims(1, -8); });
    with([](::onnx::TensorProto& t) { t.set_dims(1, std::int64_t{1} << 62); });  // the count overflows
    std::set<std::string> outcomes;
    for (const auto& bytes : variants) {
        CAPTURE(outcomes.size());
        CHECK(reads(bytes));
        const std::string light = outcome(bytes, {}, true);
        CHECK(light == outcome(bytes, {}, false));
        outcomes.insert(light);
    }
    CHECK(outcomes.size() == 3);  // the seven that infer write the same types (MatMul takes x's element type), two errors
    CHECK(outcomes.count("error: initializer 'w' has a negative dimension -8") == 1);
    CHECK(outcomes.count("error: initializer 'w': the element count of its dims overflows") == 1);
}
