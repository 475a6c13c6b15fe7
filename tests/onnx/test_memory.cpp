// Memory from shapes: element sizes, the liveness rule (a value consumed twice, a graph output
// also consumed, an unused value, a subgraph), weights counted from dims, the peak as a Max of
// the steps no other dominates, growth per unit of a dim, evaluation at sizes, the SVG.
// Models are written in ONNX's text format (onnx/defs/parser.h) and shaped by infer_shapes.
#include <yobx/adapters/onnx/shapes.hpp>
#include <yobx/adapters/onnx/model_memory.hpp>
#include <yobx/onnx/memory_plot.hpp>

#include "../error_of.hpp"
#include "model_text.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using test::error_of;
using yobx::onnx::MemoryReport;

namespace {

/// The model of ONNX's text format, shaped, and its memory.
MemoryReport memory_of_text(const std::string& text, ::onnx::ModelProto* out = nullptr, const yobx::SymbolValues& minimum = {}) {
    ::onnx::ModelProto model = onnx_test::model_of_text(text);
    const auto report = yobx::onnx::infer_shapes(model);
    if (out) *out = model;
    return yobx::onnx::memory_of(model, report, minimum);
}

std::string liveness(const MemoryReport& r) {
    std::string s;
    for (const auto& v : r.values) s += v.name + "[" + std::to_string(v.first) + "," + std::to_string(v.last) + "]=" + (v.bytes ? v.bytes->to_string() : "?") + " ";
    return s;
}

std::string sums(const MemoryReport& r) {
    std::string s;
    for (const auto& e : r.step_sums) s += e.to_string() + "; ";
    return s;
}

const std::string chain = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n, 16] X) => (float[n, n] Y, float[n, 16] Z) {
  T = Transpose(X)
  S = MatMul(X, T)
  U = Relu(X)
  A = Relu(X)
  B = Relu(A)
  Y = Relu(S)
  Z = Add(A, B)
})";

}  // namespace

TEST_CASE("element sizes: 4-bit types packed two a byte, 2-bit four, strings without a size") {
    using yobx::onnx::bytes_of_elements;
    using yobx::onnx::elem_bits;
    CHECK(elem_bits(1) == 32);
    CHECK(elem_bits(9) == 8);    // bool
    CHECK(elem_bits(10) == 16);  // float16
    CHECK(elem_bits(16) == 16);  // bfloat16
    CHECK(elem_bits(15) == 128); // complex128
    CHECK(elem_bits(17) == 8);   // float8e4m3fn
    CHECK(elem_bits(22) == 4);   // int4
    CHECK(elem_bits(23) == 4);   // float4e2m1 (opset 23)
    CHECK(elem_bits(24) == 8);   // float8e8m0 (opset 24)
    CHECK(elem_bits(25) == 2);   // uint2 (opset 25)
    CHECK(elem_bits(26) == 2);   // int2
    CHECK(elem_bits(27) == 0);   // not an ONNX type (yet)
    CHECK(elem_bits(8) == 0);    // string
    CHECK(elem_bits(99) == 0);
    const yobx::SymInt n = yobx::SymInt::symbol("n");
    CHECK(bytes_of_elements(10, n * 3)->to_string() == "6*n");
    CHECK(bytes_of_elements(22, n)->to_string() == "(n + 1)//2");
    CHECK(bytes_of_elements(22, yobx::SymInt(5))->maybe_constant() == 3);
    CHECK(bytes_of_elements(26, n)->to_string() == "(n + 3)//4");
    CHECK(bytes_of_elements(25, yobx::SymInt(9))->maybe_constant() == 3);
    CHECK(bytes_of_elements(24, n * 3)->to_string() == "3*n");
    CHECK_FALSE(bytes_of_elements(8, n).has_value());
    CHECK(yobx::onnx::elem_name(21) == "uint4");
    CHECK(yobx::onnx::elem_name(24) == "float8e8m0");
    CHECK(yobx::onnx::elem_name(26) == "int2");
    CHECK(yobx::onnx::elem_name(40) == "type 40");
}

TEST_CASE("element types: one table read both ways, ONNX's float and double as aliases") {
    using yobx::onnx::elem_name;
    using yobx::onnx::elem_type_of;
    for (const auto& t : yobx::onnx::elem::types) {
        CHECK(elem_type_of(t.name) == t.code);
        CHECK(elem_name(t.code) == t.name);
    }
    CHECK(elem_type_of("float") == 1);
    CHECK(elem_type_of("double") == 11);
    CHECK(elem_type_of("float4e2m1") == 23);
    CHECK(elem_type_of("Float32") == yobx::onnx::elem::undefined);
    CHECK(elem_type_of("") == yobx::onnx::elem::undefined);
    static_assert(yobx::onnx::elem_bits(yobx::onnx::elem::bfloat16) == 16);
}

TEST_CASE("liveness: a value consumed twice lives to its last consumer, an output to the end, an unused one its own step") {
    const MemoryReport r = memory_of_text(chain);
    CHECK(r.order == "model");
    CHECK(liveness(r) == "X[0,3]=64*n T[0,1]=64*n S[1,5]=4*n**2 U[2,2]=64*n A[3,6]=64*n B[4,6]=64*n Y[5,6]=4*n**2 Z[6,6]=64*n ");
    CHECK(sums(r) == "128*n; 4*n**2 + 128*n; 4*n**2 + 128*n; 4*n**2 + 128*n; 4*n**2 + 128*n; 8*n**2 + 128*n; 4*n**2 + 192*n; ");
    // neither of steps 5 and 6 dominates the other (8n^2 + 128n against 4n^2 + 192n: equal at n = 16)
    CHECK(r.peak.to_string() == "4*Max(n**2 + 48*n, 2*n**2 + 32*n)");
    CHECK(r.peak_steps == std::vector<std::size_t>{5, 6});
    // the same Max as the values' bytes are written, those with the same dims added
    CHECK(r.peak_text == "Max(8*n*n + 128*n, 192*n + 4*n*n)");
    CHECK(r.values[2].written.to_string() == "4*n*n");
    REQUIRE(r.growth.size() == 1);
    CHECK(r.growth[0].dim == "n");
    CHECK(r.growth[0].outputs == std::vector<std::string>{"Y", "Z"});
    CHECK(r.growth[0].per_unit.to_string() == "8*n + 68");  // 4*(n+1)^2 + 64*(n+1) - (4n^2 + 64n)
    const auto at = r.evaluate({{"n", 10}});
    CHECK(at.peak == 4 * (100 + 480));  // step 6: A, B, Y, Z
    CHECK(at.step == 6);
    CHECK(at.op == "Add");
    REQUIRE(at.largest.size() == 4);
    CHECK(at.largest[0] == std::pair<std::string, std::int64_t>{"A", 640});
    CHECK(at.largest[3] == std::pair<std::string, std::int64_t>{"Y", 400});
    CHECK(r.evaluate({{"n", 20}}).step == 5);
    CHECK(r.evaluate({{"n", 20}}).per_unit[0] == 228);
}

TEST_CASE("a dim that is a constant times a product gives the constant to the bytes' coefficient, and adds up with its like") {
    // Reshape(X, [-1, 4]) writes the dim 4*n: R's bytes are 64*n as written, not 16*(4*n)
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n, 16] X) => (float[n, 16] Y) {
  s = Constant<value = int64[2] {-1, 4}>()
  R = Reshape(X, s)
  t = Constant<value = int64[2] {-1, 16}>()
  Y = Reshape(R, t)
})");
    CHECK(liveness(r) == "X[0,1]=64*n R[1,3]=64*n Y[3,3]=64*n ");
    REQUIRE(r.values.size() == 3);
    CHECK(r.values[1].written.to_string() == "64*n");
    CHECK(r.peak_text == "128*n");  // X and R at step 1: one term, as the canonical form
    CHECK(r.peak.to_string() == "128*n");
}

TEST_CASE("bytes whose product as written overflows int64 are the canonical form (found by fuzz_onnx_model)") {
    // R is [2**62, (4*a*b)//2**62]: 4 bytes times 2**62 as written overflows, the canonical form fits
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[a, b, 4] X) => (float[a, b, 4] Y) {
  s = Constant<value = int64[2] {4611686018427387904, -1}>()
  R = Reshape(X, s)
  t = Shape(X)
  Y = Reshape(R, t)
})");
    REQUIRE(r.values.size() == 4);
    CHECK(r.values[1].name == "R");
    REQUIRE(r.values[1].bytes);
    CHECK(r.values[1].bytes->to_string() == "16*a*b - 16*Mod(a*b, 1152921504606846976)");
    CHECK(r.values[1].written.to_string() == "(16*a*b - 16*Mod(a*b, 1152921504606846976))");
    CHECK(r.peak_text == "Max(16*a*b, 16*a*b + (16*a*b - 16*Mod(a*b, 1152921504606846976)) + 24)");
    // the constant dims alone overflow as written (2**64), the canonical form fits
    ::onnx::ModelProto model = onnx_test::model_of_text(chain);
    auto* dims = model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    dims->mutable_dim(0)->set_dim_value(std::int64_t{1} << 32);
    dims->mutable_dim(1)->set_dim_param("x//4294967296");
    dims->add_dim()->set_dim_value(std::int64_t{1} << 32);
    const MemoryReport x = yobx::onnx::memory_of(model);
    REQUIRE(x.values.size() >= 1);
    CHECK(x.values[0].name == "X");
    CHECK(x.values[0].written.to_string() == "(17179869184*x - 17179869184*Mod(x, 4294967296))");
}

TEST_CASE("a graph output also consumed lives to the end, a graph input not consumed lives at the first step") {
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n] X, int64[n, 2] I) => (float[n] A, float[n] B) {
  A = Relu(X)
  B = Neg(A)
})");
    CHECK(liveness(r) == "X[0,0]=4*n I[0,0]=16*n A[0,1]=4*n B[1,1]=4*n ");
    CHECK(sums(r) == "24*n; 8*n; ");
    CHECK(r.peak.to_string() == "24*n");
}

TEST_CASE("a subgraph's peak is part of its node's step, the outer values it reads live to that step") {
    ::onnx::ModelProto model;
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[n] X) => (float[n] Y) {
  W = Relu(X)
  V = Neg(X)
  Y = If(c) <then_branch = t () => (float[n] a) { a0 = Relu(W)
  a = Neg(a0) }, else_branch = e () => (float[n] b) { b = Neg(W) }>
})",
                                          &model);
    // then: W is outer (not counted inside); a0 and a live together at the second step: 8n; else: 4n
    REQUIRE(r.subgraphs.size() == 1);
    CHECK(r.subgraphs[0].first == 2);
    CHECK(r.subgraphs[0].second.to_string() == "8*n");
    CHECK(liveness(r) == "c[0,2]=1 X[0,1]=4*n W[0,2]=4*n V[1,1]=4*n Y[2,2]=4*n ");
    CHECK(sums(r) == "8*n + 1; 12*n + 1; 16*n + 1; ");
    CHECK(r.peak.to_string() == "16*n + 1");
}

TEST_CASE("weights: initializers and constants by dtype from their dims, external data counted and never read") {
    ::onnx::ModelProto model = onnx_test::model_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n, 4] X) => (float[n, 4] Y) {
  C = Constant <value = float[4] {1.0, 2.0, 3.0, 4.0}> ()
  K = Constant <value_ints = [1, 2, 3]> ()
  A = Add(X, C)
  Y = Mul(A, C)
})");
    auto* w = model.mutable_graph()->add_initializer();
    w->set_name("W");
    w->set_data_type(::onnx::TensorProto::FLOAT16);
    for (std::int64_t d : {1000, 300}) w->add_dims(d);
    w->set_data_location(::onnx::TensorProto::EXTERNAL);
    auto* e = w->add_external_data();
    e->set_key("location");
    e->set_value("nowhere.bin");  // never opened: the dims say the size
    auto* q = model.mutable_graph()->add_initializer();
    q->set_name("Q");
    q->set_data_type(22);  // int4: 7 elements in 4 bytes
    q->add_dims(7);
    q->set_raw_data(std::string(4, '\0'));
    const auto report = yobx::onnx::infer_shapes(model);
    const MemoryReport r = yobx::onnx::memory_of(model, report);
    CHECK(r.weights.total == 16 + 24 + 600000 + 4);
    CHECK(r.weights.count == 4);
    CHECK(r.weights.external == 600000);
    CHECK(r.weights.by_dtype == std::map<std::string, std::int64_t>{{"float16", 600000}, {"float32", 16}, {"int4", 4}, {"int64", 24}});
    // the constants are weights, not activations
    CHECK(liveness(r) == "X[0,2]=16*n A[2,3]=16*n Y[3,3]=16*n ");
    CHECK(r.to_json().find("\"weights\": {\"total\": 600044, \"count\": 4, \"external\": 600000, \"by_dtype\": {\"float16\": 600000, "
                           "\"float32\": 16, \"int4\": 4, \"int64\": 24}}") != std::string::npos);
}

TEST_CASE("a value of unknown size is listed, said why, and not counted") {
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n] X, string[n] S) => (float[n] Y) {
  Y = Relu(X)
})");
    CHECK(r.unknown == 1);
    CHECK(liveness(r) == "X[0,0]=4*n S[0,0]=? Y[0,0]=4*n ");
    CHECK(r.values[1].why == "strings have no fixed size");
    CHECK(r.peak.to_string() == "8*n");
    CHECK(r.summary() == "memory: weights 0 B (0 tensors); peak activations 8*n (over 1 steps in the model order, 1 values of unknown size "
                         "not counted)\nmemory: outputs grow by 4 bytes per unit of n");
}

TEST_CASE("a model whose nodes are out of order is planned in a topological order, said so") {
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n] X) => (float[n] Y) {
  Y = Neg(A)
  A = Relu(X)
})");
    CHECK(r.order == "topological");
    CHECK(r.step_ops == std::vector<std::string>{"Relu", "Neg"});
    CHECK(liveness(r) == "X[0,0]=4*n A[0,1]=4*n Y[1,1]=4*n ");
}

TEST_CASE("memory at sizes: a missing or misspelt size is an error naming it") {
    const MemoryReport r = memory_of_text(chain);
    CHECK(error_of([&] { (void)r.evaluate({}); }) == "memory: no size for 'n' (the peak's symbols: n)");
    CHECK(error_of([&] { (void)r.evaluate({{"n", 2}, {"m", 3}}); }) == "memory: size 'm' names no dim of the model (its symbols: n)");
    CHECK(MemoryReport::human(512) == "512 B");
    CHECK(MemoryReport::human(1536) == "1.50 KiB");
    CHECK(MemoryReport::human(200LL << 30) == "200 GiB");
}

TEST_CASE("the SVG's text is XML 1.0 in UTF-8: a name's byte that is not, or a control character, reads as U+FFFD") {
    using yobx::onnx::detail::xml_text;
    CHECK(xml_text("a<b>&\"c\" \xC3\xA9") == "a&lt;b&gt;&amp;&quot;c&quot; \xC3\xA9");
    CHECK(xml_text("bat\xE9h\x01\t") == "bat\xEF\xBF\xBDh\xEF\xBF\xBD\t");
    CHECK(xml_text("\xF0\x9F\x98") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("the SVG's series are the peak expression's values and its breakpoint is where the dominating step changes") {
    const MemoryReport r = memory_of_text(chain, nullptr, {{"n", 0}});
    const std::string svg = yobx::onnx::memory_svg(r, "n", 0, 40, {});
    CHECK(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    const auto attr = [&](std::string_view series, std::string_view name) {
        const auto at = svg.find("data-name=\"" + std::string(series) + "\"");
        REQUIRE(at != std::string::npos);
        const auto start = svg.find(std::string(name) + "=\"", at) + name.size() + 2;
        return svg.substr(start, svg.find('"', start) - start);
    };
    std::istringstream xs(attr("peak activations", "data-x")), bytes(attr("peak activations", "data-bytes"));
    std::int64_t x = 0, b = 0, count = 0;
    while (xs >> x && bytes >> b) {
        CHECK(b == r.peak.evaluate_with({{"n", x}}));
        ++count;
    }
    CHECK(count == 41);
    // 8n^2 + 128n > 4n^2 + 192n from n = 17 on (equal at 16): step 6 (Add) below, step 5 (Relu) from there
    CHECK(svg.find("<g class=\"breakpoint\" data-x=\"17\" data-node=\"Y\">") != std::string::npos);
    CHECK(svg.find("n=17: Relu</text>") != std::string::npos);
    CHECK(svg.find(" KiB</text>") != std::string::npos);
    // sampled: the first 64 sizes and 200 spread, the breakpoint still exact
    const auto wide = yobx::onnx::plot_data(r, "n", 0, 100000, {});
    CHECK(wide.samples.size() == 263);  // 0 is in both
    REQUIRE(wide.breakpoints.size() == 1);
    CHECK(wide.breakpoints[0].x == 17);
    CHECK(wide.breakpoints[0].step == 5);
    const auto far = yobx::onnx::plot_data(r, "n", 1000, 100000, {});
    CHECK(far.breakpoints.empty());
    CHECK(far.samples.front().step == 5);
    CHECK(error_of([&] { (void)yobx::onnx::plot_data(r, "m", 0, 4, {}); }) == "memory plot: the peak does not depend on 'm' (its symbols: n)");
    CHECK(error_of([&] { (void)yobx::onnx::plot_data(r, "n", 5, 4, {}); }) ==
          "memory plot: the range 5:4 of 'n' must be sizes LO:HI with 0 <= LO <= HI < 2**62");
    // an input dim is at least 1 unless the caller says otherwise
    CHECK(error_of([&] { (void)yobx::onnx::plot_data(memory_of_text(chain), "n", 0, 4, {}); }) ==
          "memory plot: the range 0:4 of 'n' starts outside the domain the peak is exact over: n=0 is below its minimum 1");
}

TEST_CASE("sizes past int64 are errors naming what, never wrapped") {
    ::onnx::ModelProto model = onnx_test::model_of_text(chain);
    auto* w = model.mutable_graph()->add_initializer();
    w->set_name("W");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    for (std::int64_t d : {std::int64_t{1} << 40, std::int64_t{1} << 30}) w->add_dims(d);
    CHECK(error_of([&] { (void)yobx::onnx::memory_of(model); }) == "memory: the size of tensor 'W' does not fit in int64");
    w->set_dims(1, std::int64_t{1} << 20);  // 2**62 bytes: fits alone, not twice
    *model.mutable_graph()->add_initializer() = *w;
    CHECK(error_of([&] { (void)yobx::onnx::memory_of(model); }) == "memory: the weights' total does not fit in int64");
    const MemoryReport r = memory_of_text(chain);
    CHECK(error_of([&] { (void)r.evaluate({{"n", std::int64_t{1} << 31}}); }) ==
          "memory: the peak '4*Max(n**2 + 48*n, 2*n**2 + 32*n)' at the given sizes: integer overflow while evaluating "
          "4*Max(n**2 + 48*n, 2*n**2 + 32*n) with {n = 2147483648}");
    CHECK(error_of([&] { (void)yobx::onnx::plot_data(r, "n", 0, std::int64_t{1} << 62, {}); }) ==
          "memory plot: the range 0:4611686018427387904 of 'n' must be sizes LO:HI with 0 <= LO <= HI < 2**62");
}

TEST_CASE("peak_of keeps the steps no other is proven to dominate: 4n below 8n + 1, n*n and 8n + 1 apart") {
    const yobx::SymInt n = yobx::SymInt::symbol("n");
    std::vector<std::size_t> kept;
    const auto peak = yobx::onnx::peak_of({n * 8 + 1, n * 4, n * n}, &kept);
    CHECK(peak.to_string() == "Max(n**2, 8*n + 1)");
    CHECK(kept == std::vector<std::size_t>{0, 2});
    // a stride-2 convolution's output beside its input: the difference, canonical, is
    // 64*b*h*w - 64*b*h*Mod(w + 1, 2) + ... (the floors expanded), which bounds alone do not
    // prove; with h = 2*q + r - 1 and w likewise it is 256*b*q*q', at least 0
    const yobx::SymInt b = yobx::SymInt::symbol("b"), h = yobx::SymInt::symbol("h"), w = yobx::SymInt::symbol("w");
    const yobx::SymInt input = b * h * w * 12, output = b * floordiv(h + 1, 2) * floordiv(w + 1, 2) * 256;
    const yobx::SymInt d = (input + output) - input;
    CHECK(d.to_string() == "64*b*h*w - 64*b*h*Mod(w + 1, 2) + 64*b*h - 64*b*w*Mod(h + 1, 2) + 64*b*w + 64*b*Mod(h + 1, 2)*Mod(w + 1, 2) - "
                           "64*b*Mod(h + 1, 2) - 64*b*Mod(w + 1, 2) + 64*b");
    CHECK_FALSE(yobx::onnx::detail::sizes_env({&d}).statically_known_true(d >= 0));
    CHECK(yobx::onnx::detail::proven_nonnegative(d));
    kept.clear();
    (void)yobx::onnx::peak_of({input, input + output}, &kept);
    CHECK(kept == std::vector<std::size_t>{1});
}

TEST_CASE("the tight peak: each kept step alone the largest at its witness, the others proven below over the domain") {
    const yobx::SymInt n = yobx::SymInt::symbol("n");
    const yobx::onnx::MemoryDomain sizes;  // every symbol from 0
    yobx::onnx::PeakSteps found;
    (void)yobx::onnx::peak_of({n * 8 + 1, n * 4, n * n}, sizes, &found);
    REQUIRE(found.kept == std::vector<std::size_t>{0, 2});
    REQUIRE(found.witness.size() == 2);
    CHECK(found.witness[0] == yobx::SymbolValues{{"n", 0}});   // 1 > 0 > 0
    CHECK(found.witness[1] == yobx::SymbolValues{{"n", 9}});   // 81 > 73
    CHECK(found.unresolved == 0);
    REQUIRE(found.large);
    CHECK(found.kept[found.large->step] == 2);
    CHECK(found.large->from == 9);  // n*n > 8*n + 1 from n = 9 on, proven
    // floors of one symbol: x//10 <= x//5, (h + 3)//4 <= (h + 1)//2, proven, never sampled
    const yobx::SymInt x = yobx::SymInt::symbol("x"), h = yobx::SymInt::symbol("h");
    (void)yobx::onnx::peak_of({floordiv(x, yobx::SymInt(10)), floordiv(x, yobx::SymInt(5))}, sizes, &found);
    CHECK(found.kept == std::vector<std::size_t>{1});
    (void)yobx::onnx::peak_of({floordiv(h + 3, yobx::SymInt(4)) * 8, floordiv(h + 1, yobx::SymInt(2)) * 8}, sizes, &found);
    CHECK(found.kept == std::vector<std::size_t>{1});
    // 64*b*h*w + 32*b*h is above 128*b*h*w only where w = 0: over sizes both are kept, each witnessed;
    // with input dims from 1 the first is proven below and dropped
    const yobx::SymInt b = yobx::SymInt::symbol("b"), w = yobx::SymInt::symbol("w");
    const std::vector<yobx::SymInt> unet{b * h * w * 64 + b * h * 32, b * h * w * 128};
    const auto wide = yobx::onnx::peak_of(unet, sizes, &found);
    CHECK(found.kept == std::vector<std::size_t>{0, 1});
    CHECK(found.unresolved == 0);
    REQUIRE(found.witness[0]);
    CHECK(found.witness[0]->at("w") == 0);
    yobx::onnx::MemoryDomain runs;
    runs.input_dims = {"b", "h", "w"};
    const auto tight = yobx::onnx::peak_of(unet, runs, &found);
    CHECK(found.kept == std::vector<std::size_t>{1});
    CHECK(tight.to_string() == "128*b*h*w");
    CHECK(found.smallest == std::map<std::string, std::int64_t, std::less<>>{{"b", 1}, {"h", 1}, {"w", 1}});
    CHECK(wide.to_string() != tight.to_string());
    // below the Max of two, proven below their mean: 5 <= (x + (10 - x))/2, dropped
    (void)yobx::onnx::peak_of({x, 10 - x, yobx::SymInt(5)}, sizes, &found);
    CHECK(found.kept == std::vector<std::size_t>{0, 1});
    // below the Max of two by regions only: 2x + 6 <= 10 for x <= 2, <= 4x from 3 on (every mean
    // fails somewhere): x split at 4, the sizes below enumerated
    (void)yobx::onnx::peak_of({x * 4, yobx::SymInt(10), x * 2 + 6}, sizes, &found);
    CHECK(found.kept == std::vector<std::size_t>{0, 1});
    // three splits (resnet18's steps 17, 20 and 52): the second is below the first once h or w
    // is at least 5, below the first at b = 1 and below the third from b = 2 when both are at most 4
    {
        const yobx::SymInt bb = yobx::SymInt::symbol("b"), hh = yobx::SymInt::symbol("h"), ww = yobx::SymInt::symbol("w");
        const auto ceil = [](const yobx::SymInt& v, std::int64_t k) { return floordiv(v + yobx::SymInt(k - 1), yobx::SymInt(k)); };
        yobx::onnx::MemoryDomain images;
        images.input_dims = {"b", "h", "w"};
        (void)yobx::onnx::peak_of({bb * ceil(hh, 2) * ceil(ww, 2) * 512 + 15360, bb * ceil(hh, 4) * ceil(ww, 4) * 768 + 15104,
                                   bb * ceil(hh, 16) * ceil(ww, 16) * 1024 + bb * ceil(hh, 32) * ceil(ww, 32) * 4096 + 8192},
                                  images, &found);
        CHECK(found.kept == std::vector<std::size_t>{0, 2});
        CHECK(found.unresolved == 0);
    }
    // an equality of the domain: the sizes tried keep it (b from a), each step witnessed there
    const yobx::SymInt a = yobx::SymInt::symbol("a");
    yobx::onnx::MemoryDomain equal;
    equal.input_dims = {"a", "b"};
    equal.requirements.emplace_back(a == b, "add");
    (void)yobx::onnx::peak_of({a * 8, b * b}, equal, &found);
    CHECK(found.kept == std::vector<std::size_t>{0, 1});
    CHECK(found.unresolved == 0);
    for (const auto& w : found.witness) CHECK((w && w->at("a") == w->at("b")));
    // a step never alone the largest, below the Max of three but of no pair: 3 beside 3x, 3y and
    // 9 - 3x - 3y (their Max is at least 3, their mean), kept and counted unresolved
    const yobx::SymInt y = yobx::SymInt::symbol("y");
    (void)yobx::onnx::peak_of({x * 3, y * 3, 9 - x * 3 - y * 3, yobx::SymInt(3)}, sizes, &found);
    CHECK(found.kept == std::vector<std::size_t>{0, 1, 2, 3});
    REQUIRE(found.witness.size() == 4);
    CHECK_FALSE(found.witness[3]);
    CHECK(found.unresolved == 1);
}

TEST_CASE("the domain: value dims at least 0, input dims from 1 or their minimum, sizes outside it refused") {
    // a pooling window of 4: its output's n - 3 makes n at least 3 (4 with the rule's fact that it is not empty)
    const std::string sliced = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, n] X) => (float[1, 1, m] Y) {
  Y = AveragePool <kernel_shape = [4]> (X)
})";
    const MemoryReport r = memory_of_text(sliced);
    CHECK(r.smallest.at("n") == 3);
    CHECK(error_of([&] { (void)r.evaluate({{"n", 2}}); }) ==
          "memory: the sizes are outside the domain the peak is exact over: dim n - 3 is -1");
    CHECK(r.evaluate({{"n", 3}}).peak == 12);
    // the chain: n from 1, or from the caller's minimum
    CHECK(memory_of_text(chain).smallest.at("n") == 1);
    const MemoryReport large = memory_of_text(chain, nullptr, {{"n", 64}});
    CHECK(large.smallest.at("n") == 64);
    CHECK(large.peak_steps.size() == 1);
    CHECK(large.peak.to_string() == "8*n**2 + 128*n");
    CHECK(error_of([&] { (void)large.evaluate({{"n", 8}}); }) ==
          "memory: the sizes are outside the domain the peak is exact over: n=8 is below its minimum 64 (a smaller minimum widens it)");
    ::onnx::ModelProto model = onnx_test::model_of_text(chain);
    const auto report = yobx::onnx::infer_shapes(model);
    CHECK(error_of([&] { (void)yobx::onnx::memory_of(model, report, {{"m", 2}}); }) ==
          "memory: minimum 'm' names no dim of the model (its symbols: n)");
    CHECK(error_of([&] { (void)yobx::onnx::memory_of(model, report, {{"n", -1}}); }) ==
          "memory: minimum n=-1 is not a size (an integer >= 0)");
    CHECK(error_of([&] { (void)yobx::onnx::memory_of(model, report, {{"n", 4}}, {{"n", 2}}); }) ==
          "memory: size n=2 is below its minimum 4");
    // a size asked for at 0 widens the domain to it
    CHECK(yobx::onnx::memory_of(model, report, {}, {{"n", 0}}).smallest.at("n") == 0);
    // a requirement no size of the minimum meets
    yobx::onnx::MemoryDomain none;
    none.input_dims = {"h"};
    none.minimum = {{"h", 224}};
    const yobx::SymInt h = yobx::SymInt::symbol("h");
    none.requirements.emplace_back(h <= 64, "pool");
    CHECK(error_of([&] { (void)none.env({"h"}); }).rfind("memory: no size in the domain: the requirement h <= 64 of 'pool' cannot hold (", 0) == 0);
}

TEST_CASE("the summary names the step that is the peak once every size is large, from which size, and counts the others") {
    const MemoryReport r = memory_of_text(chain);
    REQUIRE(r.peak_steps.size() == 2);
    REQUIRE(r.large);
    CHECK(r.large->from == 17);  // 8n^2 + 128n > 4n^2 + 192n from 17 on
    const std::string summary = r.summary();
    CHECK(summary.substr(0, summary.find('\n')) ==
          "memory: weights 0 B (0 tensors); peak activations 8*n*n + 128*n (Relu 'Y') once every size is at least 17, 1 other step at "
          "smaller sizes (over 7 steps in the model order)");
    CHECK(r.to_json().find("\"large\": {\"step\": 5, \"from\": 17}") != std::string::npos);
}

TEST_CASE("the summary shows a peak of more than 200 characters as its head, ... and its count of steps") {
    // 24 inputs of their own sizes, each read by one node in turn: no step dominates another
    std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g ()";
    for (int i = 0; i < 24; ++i) text += std::string(i ? ", " : "") + "float[n" + std::to_string(i) + "] X" + std::to_string(i);
    text += ") => (float[n23] Y) {\n";
    for (int i = 0; i < 24; ++i) text += "  Y" + std::to_string(i) + " = Relu(X" + std::to_string(i) + ")\n";
    text += "  Y = Identity(Y23)\n}";
    const MemoryReport r = memory_of_text(text);
    REQUIRE(r.peak_text.size() > 200);
    const std::string summary = r.summary();
    const std::string line = summary.substr(0, summary.find('\n'));
    CHECK(line.size() < 320);
    CHECK(line.find(", ... (" + std::to_string(r.peak_steps.size()) + " terms, " + std::to_string(r.peak_text.size()) + " characters)") !=
          std::string::npos);
    // the report keeps it whole
    CHECK(r.to_json().find(r.peak_text) != std::string::npos);
}

TEST_CASE("stepped growth as a person says it: the step and its period, the exact difference kept") {
    // audio framing: frames of 400 samples every 320, (length - 80)//320 of them
    const MemoryReport r = memory_of_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, 1, length] X, float[batch, 8, past] P) => (float[batch, 1, frames] Y, float[batch, 8, total] Z) {
  Y = MaxPool <kernel_shape = [400], strides = [320]> (X)
  Z = Concat <axis = 2> (P, P)
})");
    REQUIRE(r.growth.size() == 3);
    std::string growth;
    for (const auto& g : r.growth) growth += g.text() + "; ";
    CHECK(growth == "64*past + 4*((length + 240)//320) - 4 bytes per unit of batch; 4*batch bytes every 320 of length; "
                    "64*batch bytes per unit of past; ");
    const auto& length = r.growth[1];
    CHECK(length.per_unit.to_string() == "-4*batch*((length + 240)//320) + 4*batch*((length + 241)//320)");
    CHECK(r.summary().find("memory: outputs grow by 4*batch bytes every 320 of length") != std::string::npos);
    CHECK(r.to_json().find("\"per_unit\": \"-4*batch*((length + 240)//320) + 4*batch*((length + 241)//320)\", \"step\": \"4*batch\", "
                           "\"period\": 320") != std::string::npos);
    // the period of the quotients and remainders in a symbol
    const yobx::SymInt x = yobx::SymInt::symbol("x");
    CHECK((2 * floordiv(x + 3, yobx::SymInt(4)) + mod(x, yobx::SymInt(6))).period_in("x") == 12);
    CHECK((x * x + 3).period_in("x") == 1);
    CHECK(floordiv(x, yobx::SymInt(std::int64_t{1} << 62)) .period_in("y") == 1);
}
