// The ONNX adapter against ONNX's backend node tests (Debian's libonnx-testdata):
// each one-node model whose operator yobx covers must give the output shapes
// the test's expected outputs have, with its inputs concrete, and with its
// input dims made symbolic and the inferred expressions evaluated at them.
#include <yobx/adapters/onnx/shapes.hpp>

#include <doctest/doctest.h>

#include "model_text.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using yobx::onnx::infer_shapes;
using yobx::onnx::InferenceOptions;

namespace {

#ifndef YOBX_ONNX_TESTDATA
#define YOBX_ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

::onnx::TensorProto read_tensor(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    ::onnx::TensorProto t;
    REQUIRE_MESSAGE(t.ParseFromString(s.str()), "cannot parse " << p);
    return t;
}

struct NodeTest {
    std::string name;
    ::onnx::ModelProto model;
    std::vector<::onnx::TensorProto> inputs, outputs;
};

/// The node tests whose every node yobx covers at the model's opset.
std::vector<NodeTest> covered_node_tests(std::set<std::string>& covered, std::set<std::string>& uncovered) {
    std::vector<NodeTest> tests;
    const fs::path root = fs::path(YOBX_ONNX_TESTDATA) / "node";
    std::vector<fs::path> dirs;
    for (const auto& d : fs::directory_iterator(root)) dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& dir : dirs) {
        const fs::path data = dir / "test_data_set_0";
        if (!fs::exists(dir / "model.onnx") || !fs::exists(data)) continue;
        NodeTest t{dir.filename().string(), yobx::onnx::load_model((dir / "model.onnx").string()), {}, {}};
        int opset = 0;
        for (const auto& o : t.model.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
        bool all = opset >= yobx::onnx::min_known_opset && opset <= yobx::onnx::max_known_opset;
        for (const auto& n : t.model.graph().node()) {
            const bool c = (n.domain().empty() || n.domain() == "ai.onnx") &&
                           (yobx::onnx::default_registry().find("", n.op_type(), opset) != nullptr || n.op_type() == "If" ||
                            n.op_type() == "Loop" || n.op_type() == "Scan");
            (c ? covered : uncovered).insert(n.op_type());
            all = all && c;
        }
        if (!all) continue;
        bool tensors_only = true;
        for (int i = 0; i < t.model.graph().input_size(); ++i) {
            const fs::path p = data / ("input_" + std::to_string(i) + ".pb");
            if (!fs::exists(p) || !t.model.graph().input(i).type().has_tensor_type()) tensors_only = false;
            else t.inputs.push_back(read_tensor(p));
        }
        for (int i = 0; i < t.model.graph().output_size(); ++i) {
            const fs::path p = data / ("output_" + std::to_string(i) + ".pb");
            if (!fs::exists(p) || !t.model.graph().output(i).type().has_tensor_type()) tensors_only = false;
            else t.outputs.push_back(read_tensor(p));
        }
        if (tensors_only) tests.push_back(std::move(t));
    }
    return tests;
}

/// The model with its outputs' shapes removed and its integer inputs made initializers
/// (their values are what shape computations read); with `symbolic`, the dims of the
/// other inputs become dim_params `x<i>_<j>`, whose values are returned.
yobx::SymbolValues prepare(NodeTest& t, bool symbolic) {
    yobx::SymbolValues values;
    auto* g = t.model.mutable_graph();
    g->clear_value_info();
    for (auto& o : *g->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
    for (int i = 0; i < g->input_size(); ++i) {
        auto* in = g->mutable_input(i);
        const auto& data = t.inputs[static_cast<std::size_t>(i)];
        const int type = data.data_type();
        // the small 1-D tensors are the constants of shape computations (a Reshape's target, Resize's scales, Range's bounds)
        std::int64_t n = 1;
        for (auto d : data.dims()) n *= d;
        if (data.dims_size() <= 1 && (((type == 7 || type == 6) && n <= 4096) || ((type == 1 || type == 11) && n <= 16))) {
            ::onnx::TensorProto init = data;
            init.set_name(in->name());
            *g->add_initializer() = init;
            continue;
        }
        auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (int j = 0; j < data.dims_size(); ++j) {
            auto* d = shape->add_dim();
            if (symbolic) {
                // appended, not "x" + ...: GCC 12 at -O2 warns (-Wrestrict, a false positive)
                std::string name = "x";
                name += std::to_string(i);
                name += '_';
                name += std::to_string(j);
                d->set_dim_param(name);
                values[name] = data.dims(j);
            } else {
                d->set_dim_value(data.dims(j));
            }
        }
    }
    return values;
}

/// Compares the written outputs with the expected tensors' dims: "" when equal, else what differs.
/// A dim written with a fresh symbol (unk__) cannot be evaluated: counted in `unknown`.
std::string compare(const NodeTest& t, const yobx::SymbolValues& values, int& unknown) {
    std::string diff;
    for (int k = 0; k < t.model.graph().output_size(); ++k) {
        const auto& type = t.model.graph().output(k).type().tensor_type();
        const auto& expected = t.outputs[static_cast<std::size_t>(k)];
        if (!type.has_shape()) {
            ++unknown;
            continue;
        }
        if (type.shape().dim_size() != expected.dims_size()) {
            diff += " output " + std::to_string(k) + ": rank " + std::to_string(type.shape().dim_size()) + " instead of " +
                    std::to_string(expected.dims_size());
            continue;
        }
        for (int j = 0; j < expected.dims_size(); ++j) {
            const auto& d = type.shape().dim(j);
            std::int64_t got = 0;
            if (d.has_dim_value()) {
                got = d.dim_value();
            } else {
                const yobx::SymInt e = yobx::parse_sym(d.dim_param());
                bool fresh = false;
                for (const auto& s : e.free_symbols()) fresh = fresh || !values.count(s);
                if (fresh) {
                    ++unknown;
                    continue;
                }
                got = e.evaluate_with(values);
            }
            if (got != expected.dims(j))
                diff += " output " + std::to_string(k) + " dim " + std::to_string(j) + ": " +
                        (d.has_dim_value() ? std::to_string(got) : d.dim_param() + " = " + std::to_string(got)) + " instead of " +
                        std::to_string(expected.dims(j));
        }
    }
    return diff;
}

void run_node_tests(bool symbolic) {
    std::set<std::string> covered, uncovered;
    auto tests = covered_node_tests(covered, uncovered);
    for (const auto& op : covered) uncovered.erase(op);
    std::vector<std::string> failures;
    int unknown = 0;
    for (auto& t : tests) {
        const auto values = prepare(t, symbolic);
        try {
            // symbolic: a draft walk with the real sizes as hints, which answers what the ShapeEnv
            // cannot decide (x0_0 against x1_0) and records it
            InferenceOptions options;
            if (symbolic) options.hints = yobx::onnx::InferenceOptions::Hints(values.begin(), values.end());
            const auto report = infer_shapes(t.model, options);
            for (const auto& e : report.node_errors) failures.push_back(t.name + ": " + e.node + ": " + e.error);
            const int before = unknown;
            const std::string diff = compare(t, values, unknown);
            if (unknown != before && std::getenv("YOBX_VERBOSE")) std::cout << "  unknown dims: " << t.name << "\n";
            if (!diff.empty()) failures.push_back(t.name + ":" + diff);
        } catch (const std::exception& e) {
            failures.push_back(t.name + ": " + e.what());
        }
    }
    std::cout << "ONNX node tests (" << (symbolic ? "symbolic" : "concrete") << "): " << tests.size() << " tests of covered operators, "
              << failures.size() << " wrong, " << unknown << " dims not known\n  covered (" << covered.size() << "):";
    for (const auto& op : covered) std::cout << " " << op;
    std::cout << "\n  not covered (" << uncovered.size() << "):";
    for (const auto& op : uncovered) std::cout << " " << op;
    std::cout << "\n";
    for (const auto& f : failures) std::cout << "  FAILED " << f << "\n";
    CHECK(tests.size() > 400);
    CHECK(failures.empty());
}

}  // namespace

TEST_CASE("ONNX node tests of covered operators give the expected output shapes, inputs concrete") { run_node_tests(false); }

TEST_CASE("ONNX node tests of covered operators give the expected output shapes, input dims symbolic") { run_node_tests(true); }

#ifdef YOBX_ONNX_LIGHT_DIR
// The nine real networks libonnx-testdata ships in data/light (ONNX 1.17, Debian 13):
// every value gets a known shape, every dim a constant, and the output the expected dims.
TEST_CASE("the real networks of data/light come out with every shape known") {
    std::vector<fs::path> nets;
    for (const auto& e : fs::directory_iterator(YOBX_ONNX_LIGHT_DIR))
        if (e.path().extension() == ".onnx") nets.push_back(e.path());
    std::sort(nets.begin(), nets.end());
    CHECK(nets.size() == 9);
    for (const auto& p : nets) {
        CAPTURE(p);
        ::onnx::ModelProto m = yobx::onnx::load_model(p.string());
        m.mutable_graph()->clear_value_info();
        for (auto& o : *m.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
        const auto report = infer_shapes(m);
        CHECK(report.node_errors.empty());
        CHECK(report.not_covered.empty());
        CHECK(report.unknown_rank == 0);
        CHECK(report.symbolic == 0);
        CHECK(report.fresh == 0);
        CHECK(report.constant == report.dims);
        CHECK(report.values >= static_cast<std::size_t>(m.graph().node_size()));
        fs::path expected_path = p;
        expected_path.replace_filename(p.stem().string() + "_output_0.pb");
        const auto expected = read_tensor(expected_path);
        const auto& shape = m.graph().output(0).type().tensor_type().shape();
        REQUIRE(shape.dim_size() == expected.dims_size());
        for (int j = 0; j < expected.dims_size(); ++j) CHECK(shape.dim(j).dim_value() == expected.dims(j));
        std::cout << p.filename().string() << ": " << report.summary() << "\n";
    }
}
#endif

// The replay of the ONNX reader's fuzz target (tests/fuzz/fuzz_onnx_model.cpp) on
// models mutated from seeded bytes, and on its corpus (the base models and the
// inputs it once crashed on), in every build, the sanitizers' included.
#include "../fuzz/onnx_model_check.hpp"

TEST_CASE("ONNX reader: mutated models fail only with yobx errors and what is written reads back") {
    for (std::uint64_t seed = 0; seed < 3000; ++seed) {
        const auto bytes = fuzzgen::random_bytes(seed, 8 + seed % 57);
        INFO("seed " << seed);
        fuzzgen::check_mutated_model(bytes.data(), bytes.size());
    }
}

TEST_CASE("ONNX reader: the fuzz corpus, the inputs it once crashed on included") {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::path(YOBX_SOURCE_DIR) / "tests/fuzz/corpus/onnx_model")) {
        std::ifstream in(e.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), {});
        INFO(e.path());
        fuzzgen::check_onnx_bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        ++n;
    }
    CHECK(n >= 10);
}

TEST_CASE("the report lists what a rule took as given: a convolution's output is not empty") {
    ::onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    auto* g = model.mutable_graph();
    g->set_name("patches");
    auto* x = g->add_input();
    x->set_name("x");
    x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const char* d : {"batch", "3", "height", "width"}) {
        auto* dim = x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
        if (d[0] == '3') dim->set_dim_value(3);
        else dim->set_dim_param(d);
    }
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    for (std::int64_t d : {8, 3, 4, 4}) w->add_dims(d);
    w->mutable_float_data()->Resize(8 * 3 * 4 * 4, 0.f);
    auto* conv = g->add_node();
    conv->set_name("conv");
    conv->set_op_type("Conv");
    conv->add_input("x");
    conv->add_input("w");
    conv->add_output("y");
    auto* strides = conv->add_attribute();
    strides->set_name("strides");
    strides->set_type(::onnx::AttributeProto::INTS);
    strides->add_ints(4);
    strides->add_ints(4);
    g->add_output()->set_name("y");
    const auto report = infer_shapes(model);
    REQUIRE(report.facts.size() == 2);
    CHECK(report.facts[0].node == "'conv' (Conv)");
    CHECK(report.facts[0].condition == "height//4 >= 1");
    CHECK(report.facts[0].why == "a convolution's output is not empty");
    CHECK(report.facts[1].condition == "width//4 >= 1");
    CHECK(report.to_json().find("\"facts\": [\n    {\"node\": \"'conv' (Conv)\", \"condition\": \"height//4 >= 1\", "
                                "\"why\": \"a convolution's output is not empty\"},") != std::string::npos);
    std::string dims;
    for (const auto& d : model.graph().output(0).type().tensor_type().shape().dim()) dims += (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param()) + " ";
    CHECK(dims == "batch 8 height//4 width//4 ");
}

TEST_CASE("the report lists each value whose shape depends on the runtime, with both readings") {
    // a reverse by Slice(-1, INT64_MAX, -1): numpy's None in onnxruntime, an end clamped to d - 1 in ONNX's reference
    ::onnx::ModelProto model = onnx_test::model_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, n] x) => (float[batch, m] y, float[batch, k] z) {
  starts = Constant <value = int64[1] {-1}> ()
  ends = Constant <value = int64[1] {9223372036854775807}> ()
  ends32 = Constant <value = int64[1] {2147483647}> ()
  axes = Constant <value = int64[1] {1}> ()
  steps = Constant <value = int64[1] {-1}> ()
  y = Slice(x, starts, ends, axes, steps)
  z = Slice(x, starts, ends32, axes)
})");
    const auto report = infer_shapes(model);
    REQUIRE(report.divergences.size() == 1);
    CHECK(report.divergences[0].value == "y");
    CHECK(report.divergences[0].readings ==
          "axis 1, end 9223372036854775807 with step -1: onnxruntime reads the end as numpy's None (through the first element): n; "
          "ONNX's reference clamps it to the last index: 0");
    CHECK(report.summary().find("; 1 value whose shape depends on the runtime (the report says how); ") != std::string::npos);
    CHECK(report.to_json().find("\"runtime_divergences\": [\n    {\"value\": \"y\"") != std::string::npos);
}

TEST_CASE("a pooling window longer than its padded input is listed: onnxruntime truncates where ONNX floors") {
    ::onnx::ModelProto model = onnx_test::model_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 3] x, float[1, 1, n] v, float[1, 1, n] w) => (float[1, 1, a] y, float[1, 1, b] z, float[1, 1, c] u) {
  y = MaxPool <kernel_shape = [4], strides = [2]> (x)
  z = MaxPool <kernel_shape = [4], strides = [2]> (v)
  u = MaxPool <kernel_shape = [3], strides = [2], pads = [1, 1]> (w)
})");
    const auto report = infer_shapes(model);
    REQUIRE(report.divergences.size() == 1);
    CHECK(report.divergences[0].value == "y");
    CHECK(report.divergences[0].readings ==
          "axis 2, where the padded input (3) is shorter than the window (4): onnxruntime's division truncates, 2-strided windows "
          "(-1)/2 + 1 rounded towards zero; ONNX's formula floors it: 0");
    // z differs at n < 4 only (a size of the Limits, not listed); u's padded input n + 2 always holds its window of 3
}
