// Models of opsets 23 to 28 through infer_shapes: a decoder layer with the standard LLM operators
// and a KV cache, the element types of opsets 23 to 25 in memory, Loops whose count the graph
// states, and the opset beyond the newest known still refused.
// Models are written in ONNX's text format (model_text.hpp), which reads any opset.
#include <yobx/adapters/onnx/model_memory.hpp>
#include <yobx/adapters/onnx/shapes.hpp>

#include "../error_of.hpp"
#include "model_text.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>

using onnx_test::model_of_text;
using test::error_of;

namespace {

/// The type yobx wrote for a value of the main graph (an output or a value_info): `float32[n, 4]`.
std::string type_of(const ::onnx::ModelProto& model, const std::string& name) {
    const auto text = [](const ::onnx::ValueInfoProto& v) {
        const auto& tt = v.type().tensor_type();
        std::string s = yobx::onnx::elem_name(tt.elem_type()) + "[";
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            s += (i ? ", " : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
        }
        return s + "]";
    };
    for (const auto& v : model.graph().output())
        if (v.name() == name) return text(v);
    for (const auto& v : model.graph().value_info())
        if (v.name() == name) return text(v);
    return "none";
}

// A decoder layer as exporters write it at opset 23: RMSNormalization, the projections, RoPE on
// 3D q and k, Attention with grouped-query heads and a KV cache, SwiGLU-like gating by Mul.
const std::string decoder = R"(<ir_version: 11, opset_import: ["" : OPSET]>
g (float[batch, seq, 64] x, int64[batch, seq] pos, float[batch, 2, past, 16] past_key, float[batch, 2, past, 16] past_value)
  => (float[batch, seq, 64] y, float[batch, 2, past_seq, 16] present_key, float[batch, 2, past_seq, 16] present_value) {
  scale = Constant <value = float[64] {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}> ()
  h = RMSNormalization <axis = -1, epsilon = 0.00001> (x, scale)
  wq = ConstantOfShape <value = float[1] {0.01}> (qdims)
  qdims = Constant <value = int64[2] {64, 64}> ()
  kvdims = Constant <value = int64[2] {64, 32}> ()
  wkv = ConstantOfShape <value = float[1] {0.01}> (kvdims)
  q = MatMul(h, wq)
  k = MatMul(h, wkv)
  v = MatMul(h, wkv)
  cdims = Constant <value = int64[2] {512, 8}> ()
  cache = ConstantOfShape <value = float[1] {0.5}> (cdims)
  qr = RotaryEmbedding <num_heads = 4> (q, cache, cache, pos)
  kr = RotaryEmbedding <num_heads = 2> (k, cache, cache, pos)
  a, present_key, present_value = Attention <q_num_heads = 4, kv_num_heads = 2, is_causal = 1> (qr, kr, v, , past_key, past_value)
  r = Add(x, a)
  y = Mul(r, h)
})";

std::string at_opset(int opset) {
    std::string s = decoder;
    s.replace(s.find("OPSET"), 5, std::to_string(opset));
    return s;
}

}  // namespace

TEST_CASE("a decoder layer at opsets 23 to 28: every value shaped, the cache grown by the tokens") {
    for (const int opset : {23, 24, 25, 26, 27, 28}) {
        CAPTURE(opset);
        ::onnx::ModelProto model = model_of_text(at_opset(opset));
        const auto report = yobx::onnx::infer_shapes(model);
        CHECK(report.not_covered.empty());
        CHECK(report.fresh == 0);
        CHECK(report.unknown_rank == 0);
        CHECK(type_of(model, "h") == "float32[batch, seq, 64]");
        CHECK(type_of(model, "qr") == "float32[batch, seq, 64]");
        CHECK(type_of(model, "kr") == "float32[batch, seq, 32]");
        CHECK(type_of(model, "a") == "float32[batch, seq, 64]");
        CHECK(type_of(model, "present_key") == "float32[batch, 2, past + seq, 16]");
        CHECK(type_of(model, "present_value") == "float32[batch, 2, past + seq, 16]");
        CHECK(type_of(model, "y") == "float32[batch, seq, 64]");
        // memory: one more token of past is 2 x 2 heads x 16 x 4 bytes more of cache read and written
        const auto memory = yobx::onnx::memory_of(model, report);
        std::string present;
        for (const auto& v : memory.values)
            if (v.name == "present_key") present = v.bytes->to_string();
        CHECK(present == "128*batch*past + 128*batch*seq");
    }
}

TEST_CASE("an opset past the newest yobx knows is refused with both versions named") {
    ::onnx::ModelProto model = model_of_text(at_opset(29));
    CHECK(error_of<yobx::value_error>([&] { yobx::onnx::infer_shapes(model); }) ==
          "unknown opset 29 of the default domain (yobx knows 7 to 28)");
}

TEST_CASE("the types of opsets 23 to 25 in memory as ONNX packs them: float4e2m1 two a byte, int2 four") {
    ::onnx::ModelProto model = model_of_text(R"(<ir_version: 11, opset_import: ["" : 25]>
g (float[n, 4] X) => (float[n, 4] Y) {
  Y = Relu(X)
})");
    const auto add = [&](const char* name, int type, std::int64_t count, std::size_t bytes) {
        auto* w = model.mutable_graph()->add_initializer();
        w->set_name(name);
        w->set_data_type(type);
        w->add_dims(count);
        w->set_raw_data(std::string(bytes, '\0'));
    };
    add("F4", 23, 9, 5);
    add("E8", 24, 9, 9);
    add("U2", 25, 9, 3);
    add("I2", 26, 16, 4);
    const auto report = yobx::onnx::infer_shapes(model);
    const auto memory = yobx::onnx::memory_of(model, report);
    CHECK(memory.weights.total == 5 + 9 + 3 + 4);
    CHECK(memory.weights.by_dtype == std::map<std::string, std::int64_t>{{"float4e2m1", 5}, {"float8e8m0", 9}, {"int2", 4}, {"uint2", 3}});
}

namespace {

// A Loop over the rows of X, its trip count X's first dim: `COND` is the node's condition,
// `BODY_COND` the body's.
std::string rows_loop(const std::string& trips, const std::string& cond, const std::string& body_cond) {
    return R"(<ir_version: 11, opset_import: ["" : 23]>
g (float[n, 4] X) => (float[m, 4] S, float[4] A, int64 K) {
  shape = Shape(X)
  zero = Constant <value = int64 {0}> ()
  n = Gather(shape, zero)
  two = Constant <value = int64 {2}> ()
  twice = Mul(n, two)
  one_less = Sub(n, one)
  one = Constant <value = int64 {1}> ()
  five = Constant <value = int64 {5}> ()
  t = Constant <value = bool {1}> ()
  f = Constant <value = bool {0}> ()
  init = ConstantOfShape <value = float[1] {0.0}> (four)
  four = Constant <value = int64[1] {4}> ()
  K = Identity(zero)
  A, Kout, S = Loop()" + trips + ", " + cond + R"(, init, zero) <body = b (int64 i, bool c, float[4] a, int64 k) => (bool c2, float[4] a2, int64 k2, float[4] row) {
    one = Constant <value = int64 {1}> ()
    ten = Constant <value = int64 {10}> ()
    k2 = Add(k, one)
    last = Constant <value = int64 {-1}> ()
    at = Mod(i, two)
    row = Gather(X, at)
    a2 = Add(a, row)
    c2 = )" + body_cond + R"(
  }>
})";
}

std::string loop_length(const std::string& text, bool absent_cond = false) {
    ::onnx::ModelProto model = model_of_text(text);
    if (absent_cond)
        for (auto& node : *model.mutable_graph()->mutable_node())
            if (node.op_type() == "Loop") node.set_input(1, "");
    yobx::onnx::infer_shapes(model);
    return type_of(model, "S");
}

}  // namespace

TEST_CASE("a Loop whose count the graph states: scan outputs of that length") {
    // the condition true and passed through, or a constant true: the trip count
    CHECK(loop_length(rows_loop("n", "t", "Identity(c)")) == "float32[n, 4]");
    CHECK(loop_length(rows_loop("n", "t", "Constant <value = bool {1}> ()")) == "float32[n, 4]");
    CHECK(loop_length(rows_loop("twice", "t", "Identity(c)")) == "float32[2*n, 4]");
    CHECK(loop_length(rows_loop("five", "t", "Identity(c)")) == "float32[5, 4]");
    CHECK(loop_length(rows_loop("one_less", "t", "Identity(c)")) == "float32[n - 1, 4]");  // n >= 1: max(n - 1, 0)
    // the body's condition output is its condition input itself
    std::string direct = rows_loop("n", "t", "Identity(c)");
    direct.replace(direct.find("(bool c2,"), 9, "(bool c,");
    CHECK(loop_length(direct) == "float32[n, 4]");
    // no condition: a for loop, whatever the body gives
    CHECK(loop_length(rows_loop("n", "t", "Less(k2, ten)"), true) == "float32[n, 4]");
    // a condition that starts false: no iteration
    CHECK(loop_length(rows_loop("n", "f", "Identity(c)")) == "float32[0, 4]");
}

TEST_CASE("a Loop whose count depends on the data keeps a fresh symbol") {
    // the condition computed from a carried counter: it stops after 10 iterations, or at n
    CHECK(loop_length(rows_loop("n", "t", "Less(k2, ten)")).rfind("float32[unk__", 0) == 0);
    // no trip count: a while loop
    ::onnx::ModelProto model = model_of_text(rows_loop("n", "t", "Identity(c)"));
    for (auto& node : *model.mutable_graph()->mutable_node())
        if (node.op_type() == "Loop") node.set_input(0, "");
    yobx::onnx::infer_shapes(model);
    CHECK(type_of(model, "S").rfind("float32[unk__", 0) == 0);
}

TEST_CASE("FlexAttention's modifiers are walked on the scores [batch, q_heads, q_seq, kv_seq]") {
    ::onnx::ModelProto model = model_of_text(R"(<ir_version: 11, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
g (float[b, 4, s, 8] Q, float[b, 2, t, 8] K, float[b, 2, t, 6] V) => (float[b, 4, s, 6] Y) {
  Y = ai.onnx.preview.FlexAttention <score_mod = m (float[x, y, z, w] scores) => (float[x, y, z, w] out) {
    half = Constant <value = float {0.5}> ()
    out = Mul(scores, half)
  }> (Q, K, V)
})");
    const auto report = yobx::onnx::infer_shapes(model);
    CHECK(report.not_covered.empty());
    CHECK(type_of(model, "Y") == "float32[b, 4, s, 6]");
    const auto& body = model.graph().node(0).attribute(0).g();
    std::string inside;
    for (const auto& v : body.value_info()) inside += v.name() + " ";
    CHECK(inside == "half ");
    const auto& out = body.output(0).type().tensor_type().shape();
    CHECK(out.dim(0).dim_param() == "b");
    CHECK(out.dim(3).dim_param() == "t");
    // a modifier that changes the rank is an error naming the node
    ::onnx::ModelProto bad = model_of_text(R"(<ir_version: 11, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
g (float[b, 4, s, 8] Q, float[b, 2, t, 8] K, float[b, 2, t, 6] V) => (float[b, 4, s, 6] Y) {
  Y = ai.onnx.preview.FlexAttention <score_mod = m (float[x, y, z, w] scores) => (float[x] out) {
    out = ReduceSum <keepdims = 0> (scores)
  }> (Q, K, V)
})");
    bad.mutable_graph()->mutable_node(0)->set_name("flex");
    yobx::onnx::InferenceOptions strict;
    strict.strict = true;
    CHECK(error_of<yobx::value_error>([&] { yobx::onnx::infer_shapes(bad, strict); }) ==
          "node 'flex' (ai.onnx.preview.FlexAttention): FlexAttention 'flex': score_mod's output must have rank 4, got []");
}
