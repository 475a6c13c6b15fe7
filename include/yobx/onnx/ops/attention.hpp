// yobx/onnx/ops/attention.hpp — the default domain's operators of LLMs (opsets 23 and later).
//
// As ONNX's definitions write them (onnx/defs/nn/defs.cc, tensor/defs.cc at the commit
// max_known_opset names):
//   Attention (23, 24, 25: one rule; 24 adds nonpad_kv_seqlen, 25 the windows, neither a shape),
//   RMSNormalization 23, RotaryEmbedding 23, TensorScatter 24, CausalConvWithState 27,
//   LinearAttention 27, and ai.onnx.preview's FlexAttention 1.
// Q, K and V are [batch, heads, seq, head_size], or [batch, seq, heads * head_size] with the
// q_num_heads and kv_num_heads attributes; a KV cache is [batch, kv_heads, past, head_size].
#pragma once

#include <yobx/onnx/ops/common.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace yobx::onnx::ops {

namespace detail {

/// A positive integer attribute the node must have: `attribute 'q_num_heads' is required` else.
inline std::int64_t positive_attr(NodeContext& ctx, std::string_view name, std::string_view because) {
    if (ctx.attribute(name) == nullptr) ctx.fail("attribute '" + std::string(name) + "' is required" + std::string(because));
    const std::int64_t v = ctx.attr_int(name, 0);
    if (v <= 0) ctx.fail("attribute '" + std::string(name) + "' must be positive, got " + std::to_string(v));
    return v;
}

/// A tensor of rank 3 or 4 (Q, K, V of Attention), else an error naming it.
inline const Shape& rank_3_or_4(NodeContext& ctx, std::size_t i, std::string_view what) {
    const Shape& s = ctx.shape(i);
    if (s.size() != 3 && s.size() != 4) ctx.fail(std::string(what) + " must have rank 3 or 4, got " + format_shape(s));
    return s;
}

/// A packed hidden size split into `heads` heads: hidden / heads, an error naming `what` when a
/// constant hidden size is not a multiple of the heads.
inline SymInt per_head(NodeContext& ctx, const SymInt& hidden, std::int64_t heads, std::string_view what) {
    if (const auto h = hidden.maybe_constant(); h && *h % heads != 0)
        ctx.fail(std::string(what) + "'s last dim " + std::to_string(*h) + " is not a multiple of its " + std::to_string(heads) + " heads");
    return ctx.simplify(floordiv(hidden, SymInt(heads)));
}

/// One tensor of Attention as [batch, heads, seq, head_size]: a 4D one as it is, a 3D
/// [batch, seq, hidden] with `heads` heads of hidden / heads.
struct Heads {
    SymInt batch, heads, seq, head_size;
};
inline Heads heads_of(NodeContext& ctx, const Shape& s, std::int64_t heads, std::string_view what) {
    if (s.size() == 4) return {s[0], s[1], s[2], s[3]};
    return {s[0], SymInt(heads), s[1], per_head(ctx, s[2], heads, what)};
}

/// A tensor of the given rank, else an error naming it.
inline const Shape& of_rank(NodeContext& ctx, std::size_t i, std::size_t rank, std::string_view what) {
    const Shape& s = ctx.shape(i);
    if (s.size() != rank) ctx.fail(std::string(what) + " must have rank " + std::to_string(rank) + ", got " + format_shape(s));
    return s;
}

}  // namespace detail

/// Attention: Y is [batch, q_heads, q_seq, v_head] (4D inputs) or [batch, q_seq, q_heads * v_head]
/// (3D); present_key and present_value are the cache after this step, [batch, kv_heads, past +
/// kv_seq, head_size] (K and V themselves without a past); qk_matmul_output is [batch, q_heads,
/// q_seq, past + kv_seq].
inline void attention(NodeContext& ctx) {
    const Shape& q = detail::rank_3_or_4(ctx, 0, "Q");
    const Shape& k = detail::rank_3_or_4(ctx, 1, "K");
    const Shape& v = detail::rank_3_or_4(ctx, 2, "V");
    if (k.size() != q.size() || v.size() != q.size())
        ctx.fail("Q, K and V must have the same rank, got " + format_shape(q) + ", " + format_shape(k) + " and " + format_shape(v));
    std::int64_t q_heads = 0, kv_heads = 0;
    if (q.size() == 3) {
        q_heads = detail::positive_attr(ctx, "q_num_heads", " for 3D inputs");
        kv_heads = detail::positive_attr(ctx, "kv_num_heads", " for 3D inputs");
    }
    const detail::Heads qh = detail::heads_of(ctx, q, q_heads, "Q"), kh = detail::heads_of(ctx, k, kv_heads, "K"),
                        vh = detail::heads_of(ctx, v, kv_heads, "V");
    if (q.size() == 4) ctx.set_output(0, ctx.elem_type(0), {qh.batch, qh.heads, qh.seq, vh.head_size});
    else ctx.set_output(0, ctx.elem_type(0), {qh.batch, qh.seq, ctx.simplify(SymInt(q_heads) * vh.head_size)});
    // the cache: the past's dims with its sequence grown by K's (past_key and past_value go together)
    const Shape* past_k = ctx.known_shape(4);
    const Shape* past_v = ctx.known_shape(5);
    if (ctx.input(4) != nullptr && ctx.input(5) == nullptr) ctx.fail("past_key is given without past_value");
    if (ctx.input(5) != nullptr && ctx.input(4) == nullptr) ctx.fail("past_value is given without past_key");
    if (past_k && past_k->size() != 4) ctx.fail("past_key must have rank 4, got " + format_shape(*past_k));
    if (past_v && past_v->size() != 4) ctx.fail("past_value must have rank 4, got " + format_shape(*past_v));
    const bool past = ctx.input(4) != nullptr;
    SymInt total = kh.seq;
    if (past_k) total = ctx.simplify((*past_k)[2] + kh.seq);
    if (ctx.output_count() > 1 && (!past || past_k)) {
        Shape present = past_k ? *past_k : Shape{kh.batch, kh.heads, kh.seq, kh.head_size};
        present[2] = total;
        ctx.set_output(1, past ? ctx.elem_type(4) : ctx.elem_type(1), std::move(present));
    }
    if (ctx.output_count() > 2 && (!past || past_v)) {
        Shape present = past_v ? *past_v : Shape{vh.batch, vh.heads, vh.seq, vh.head_size};
        present[2] = past_v ? ctx.simplify((*past_v)[2] + vh.seq) : vh.seq;
        ctx.set_output(2, past ? ctx.elem_type(5) : ctx.elem_type(2), std::move(present));
    }
    if (ctx.output_count() > 3 && (!past || past_k)) ctx.set_output(3, ctx.elem_type(0), {qh.batch, qh.heads, qh.seq, total});
}

/// RMSNormalization: X's shape, the scale's type (V); axis in [-rank, rank).
inline void rms_normalization(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    ctx.axis(ctx.attr_int("axis", -1), static_cast<std::int64_t>(x.size()));
    ctx.set_output(0, ctx.elem_type(1), x);
}

/// RotaryEmbedding: X's shape and type; a 3D X needs num_heads.
inline void rotary_embedding(NodeContext& ctx) {
    const Shape& x = detail::rank_3_or_4(ctx, 0, "X");
    if (x.size() == 3) detail::per_head(ctx, x[2], detail::positive_attr(ctx, "num_heads", " for a 3D input"), "X");
    ctx.set_output(0, ctx.elem_type(0), x);
}

/// TensorScatter: present_cache is past_cache (its shape and type); axis is not the batch axis.
inline void tensor_scatter(NodeContext& ctx) {
    const Shape& past = ctx.shape(0);
    if (ctx.axis(ctx.attr_int("axis", -2), static_cast<std::int64_t>(past.size())) == 0)
        ctx.fail("axis must not be 0, the batch axis");
    if (const Shape* update = ctx.known_shape(1); update && update->size() != past.size())
        ctx.fail("update " + format_shape(*update) + " and past_cache " + format_shape(past) + " differ in rank");
    ctx.set_output(0, ctx.elem_type(0), past);
}

/// CausalConvWithState: output as the input [batch, channels, length]; present_state is
/// [batch, channels, k - 1] for a weight [channels, 1, k].
inline void causal_conv_with_state(NodeContext& ctx) {
    const Shape& x = detail::of_rank(ctx, 0, 3, "input");
    ctx.set_output(0, ctx.elem_type(0), x);
    if (ctx.output_count() > 1) {
        const Shape* w = ctx.known_shape(1);
        if (w && w->size() != 3) ctx.fail("weight must have rank 3, got " + format_shape(*w));
        if (w) ctx.set_output(1, ctx.elem_type(0), {x[0], x[1], ctx.simplify((*w)[2] - 1)});
        else if (const Shape* past = ctx.known_shape(3)) ctx.set_output(1, ctx.elem_type(0), *past);
    }
}

/// LinearAttention: output [B, T, q_heads * d_v], present_state [B, kv_heads, d_k, d_v] (d_k of
/// the key, d_v of the value, each hidden / kv_heads), the past state's type if given.
inline void linear_attention(NodeContext& ctx) {
    const Shape& q = detail::of_rank(ctx, 0, 3, "query");
    const Shape& k = detail::of_rank(ctx, 1, 3, "key");
    const Shape& v = detail::of_rank(ctx, 2, 3, "value");
    const std::int64_t q_heads = detail::positive_attr(ctx, "q_num_heads", "");
    const std::int64_t kv_heads = detail::positive_attr(ctx, "kv_num_heads", "");
    if (q_heads % kv_heads != 0)
        ctx.fail("q_num_heads (" + std::to_string(q_heads) + ") must be a multiple of kv_num_heads (" + std::to_string(kv_heads) + ")");
    detail::per_head(ctx, q[2], q_heads, "query");
    const SymInt d_k = detail::per_head(ctx, k[2], kv_heads, "key");
    const SymInt d_v = detail::per_head(ctx, v[2], kv_heads, "value");
    // the update rule and the gates it takes: decay for the gated rules, beta for the delta ones
    const std::string rule = ctx.attr_string("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
        ctx.fail("update_rule must be one of 'linear', 'gated', 'delta', 'gated_delta', got '" + rule + "'");
    const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
    if (ctx.has_input(4) != gated) ctx.fail("update_rule '" + rule + "' " + (gated ? "requires" : "forbids") + " the decay input");
    if (ctx.has_input(5) != delta) ctx.fail("update_rule '" + rule + "' " + (delta ? "requires" : "forbids") + " the beta input");
    ctx.set_output(0, ctx.elem_type(0), {q[0], q[1], ctx.simplify(SymInt(q_heads) * d_v)});
    ctx.set_output(1, ctx.has_input(3) ? ctx.elem_type(3) : ctx.elem_type(0), {q[0], SymInt(kv_heads), d_k, d_v});
}

/// ai.onnx.preview's FlexAttention: Y [batch, q_heads, q_seq, v_head] of rank-4 Q, K, V; the
/// score_mod and prob_mod subgraphs, when given, walked on the scores [batch, q_heads, q_seq,
/// kv_seq] of softmax_precision (float32 unless Q is float64), their output of that shape.
inline void flex_attention(NodeContext& ctx) {
    const Shape& q = detail::of_rank(ctx, 0, 4, "Q");
    const Shape& k = detail::of_rank(ctx, 1, 4, "K");
    const Shape& v = detail::of_rank(ctx, 2, 4, "V");
    const int precision = static_cast<int>(ctx.attr_int("softmax_precision", ctx.elem_type(0) == elem::float64 ? elem::float64 : elem::float32));
    const TensorInfo scores = TensorInfo::of(precision, {q[0], q[1], q[2], k[2]});
    for (const char* mod : {"score_mod", "prob_mod"}) {
        const Attribute* a = ctx.attribute(mod);
        if (a == nullptr || a->kind != Attribute::Kind::graph) continue;
        const SubgraphInferencer::Outputs out = ctx.subgraph(mod, {scores});
        if (out.size() != 1) ctx.fail(std::string(mod) + " must have one output, it has " + std::to_string(out.size()));
        if (out[0] && out[0]->shape && out[0]->shape->size() != 4)
            ctx.fail(std::string(mod) + "'s output must have rank 4, got " + format_shape(*out[0]->shape));
    }
    ctx.set_output(0, ctx.elem_type(0), {q[0], q[1], q[2], v[3]});
}

/// The LLM family in the registry.
inline void register_attention(OpRegistry& r) {
    r.add("", "Attention", 23, attention);
    r.add("", "RMSNormalization", 23, rms_normalization);
    r.add("", "RotaryEmbedding", 23, rotary_embedding);
    r.add("", "TensorScatter", 24, tensor_scatter);
    r.add("", "CausalConvWithState", 27, causal_conv_with_state);
    r.add("", "LinearAttention", 27, linear_attention);
    r.add("ai.onnx.preview", "FlexAttention", 1, flex_attention);
}

}  // namespace yobx::onnx::ops
