// yobx/onnx/ops/microsoft.hpp — the com.microsoft operators onnxruntime's own tools write.
//
// Its transformer optimizer fuses attention, layer normalizations and GELUs
// (Attention, MultiHeadAttention, GroupQueryAttention, SkipLayerNormalization,
// EmbedLayerNormalization, FastGelu, T5's RelativePositionBias...), its packing mode
// (convert_to_packing_mode) RemovePadding, RestorePadding and the Packed attentions, its
// generation tools DecoderMaskedMultiHeadAttention; its quantizers write MatMulNBits,
// DynamicQuantizeMatMul, MatMulIntegerToFloat and the QLinear* operators. The
// shapes follow onnxruntime's kernels; a size they decide at run time from a
// buffer (GroupQueryAttention's present cache) is a fresh symbol, never a guess.
#pragma once

#include <yobx/onnx/ops/common.hpp>
#include <yobx/onnx/ops/math.hpp>
#include <yobx/onnx/ops/nn.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx::ops::microsoft {

inline std::int64_t num_heads(NodeContext& ctx) {
    const std::int64_t n = ctx.attr_int("num_heads", 0);
    if (n <= 0) ctx.fail("attribute 'num_heads' must be positive");
    return n;
}

/// The hidden size of Attention's and PackedAttention's value: qkv_hidden_sizes[2], else a third
/// of the bias's length, else of the weights' second dim.
inline SymInt attention_v_hidden(NodeContext& ctx) {
    if (auto q = ctx.attr_ints("qkv_hidden_sizes"); q && q->size() == 3) return (*q)[2];
    if (const Shape* bias = ctx.known_shape(2); bias && bias->size() == 1) return ctx.simplify(floordiv((*bias)[0], 3));
    if (ctx.shape(1).size() == 2) return ctx.simplify(floordiv(ctx.shape(1)[1], 3));
    ctx.fail("weights must have rank 2, got " + format_shape(ctx.shape(1)));
}

/// Attention: [batch, seq, v_hidden]; present [2, batch, heads, past + seq, head_size].
inline void attention(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.size() != 3) ctx.fail("input must have rank 3, got " + format_shape(x));
    const std::int64_t heads = num_heads(ctx);
    const SymInt v_hidden = attention_v_hidden(ctx);
    ctx.set_output(0, ctx.elem_type(0), {x[0], x[1], v_hidden});
    if (ctx.output_count() > 1) {
        if (const Shape* past = ctx.known_shape(4); past && past->size() == 5) {
            Shape present = *past;
            present[3] = ctx.simplify(present[3] + x[1]);
            ctx.set_output(1, ctx.elem_type(0), std::move(present));
        } else {
            ctx.set_output(1, ctx.elem_type(0), {2, x[0], heads, x[1], ctx.simplify(floordiv(v_hidden, heads))});
        }
    }
}

/// MultiHeadAttention: [batch, seq, v_hidden]; present key and value [batch, heads, past + kv_seq, head_size].
inline void multi_head_attention(NodeContext& ctx) {
    const Shape& q = ctx.shape(0);
    const std::int64_t heads = num_heads(ctx);
    const Shape *k = ctx.known_shape(1), *v = ctx.known_shape(2);
    SymInt hidden, kv_seq, head_size, v_head;
    if (q.size() == 3) {
        hidden = q[2];
        head_size = ctx.simplify(floordiv(q[2], heads));
        v_head = head_size;
        kv_seq = q[1];
        if (k && k->size() == 3) kv_seq = (*k)[1];
        else if (k && k->size() == 4) kv_seq = (*k)[2];
        else if (k && k->size() == 5) kv_seq = (*k)[1];  // packed key and value [batch, kv_seq, heads, 2, head]
        if (v && v->size() == 3) {
            hidden = (*v)[2];
            v_head = ctx.simplify(floordiv((*v)[2], heads));
        } else if (v && v->size() == 4) {
            hidden = ctx.simplify((*v)[1] * (*v)[3]);
            v_head = (*v)[3];
        }
    } else if (q.size() == 5) {  // packed query, key and value [batch, seq, heads, 3, head]
        hidden = ctx.simplify(q[2] * q[4]);
        head_size = v_head = q[4];
        kv_seq = q[1];
    } else {
        ctx.fail("query must have rank 3 or 5, got " + format_shape(q));
    }
    ctx.set_output(0, ctx.elem_type(0), {q[0], q[1], hidden});
    SymInt total = kv_seq;
    if (const Shape* past = ctx.known_shape(6); past && past->size() == 4) total = ctx.simplify((*past)[2] + kv_seq);
    ctx.set_output(1, ctx.elem_type(0), {q[0], heads, total, head_size});
    ctx.set_output(2, ctx.elem_type(0), {q[0], heads, total, v_head});
}

/// GroupQueryAttention's and SparseAttention's output: [batch, seq, heads * head_size], from the
/// query, or packed query, key and value [batch, seq, (heads + 2 * kv_heads) * head_size].
inline void grouped_attention_output(NodeContext& ctx) {
    const Shape& q = ctx.shape(0);
    if (q.size() != 3) ctx.fail("query must have rank 3, got " + format_shape(q));
    const std::int64_t heads = num_heads(ctx), kv_heads = ctx.attr_int("kv_num_heads", 0);
    SymInt hidden = q[2];
    if (!ctx.has_input(1) && !ctx.has_input(2)) {  // packed query, key and value
        if (kv_heads <= 0) ctx.fail("attribute 'kv_num_heads' must be positive");
        hidden = ctx.simplify(floordiv(q[2], SymInt(kv_heads) * 2 + heads) * heads);
    }
    ctx.set_output(0, ctx.elem_type(0), {q[0], q[1], hidden});
}

/// GroupQueryAttention: [batch, seq, heads * head_size]; the present cache's length is the
/// kernel's choice (the past buffer when shared, else the total length): a fresh symbol.
inline void group_query_attention(NodeContext& ctx) {
    grouped_attention_output(ctx);
    if (const Shape* past = ctx.known_shape(3); past && past->size() == 4) {
        Shape present = *past;
        present[2] = ctx.fresh("GroupQueryAttention: the present cache's length is chosen by the kernel");
        ctx.set_output(1, ctx.elem_type(0), present);
        ctx.set_output(2, ctx.elem_type(0), present);
    }
}

/// SparseAttention: GroupQueryAttention's output; the present key and value are the past's
/// buffers [batch, kv_heads, max_cache_sequence_length, head_size], which they always share.
inline void sparse_attention(NodeContext& ctx) {
    grouped_attention_output(ctx);
    for (std::size_t k = 1; k <= 2; ++k)
        if (const Shape* past = ctx.known_shape(k + 2)) ctx.set_output(k, ctx.elem_type(0), *past);
}

/// DecoderMaskedMultiHeadAttention, one decoding step: [batch, 1, v_hidden], v_hidden the value's
/// (rank 3, or the past value's heads * head_size in cross attention, rank 4), of packed query,
/// key and value [batch, 1, 2 * hidden + v_hidden] the past value's heads * head_size; the
/// present key and value are the past's buffers when shared (past_present_share_buffer), else
/// one step longer; qk [batch, heads, 1, total_sequence_length], float, the total the value of
/// past_sequence_length (input 7) plus one with a shared buffer.
inline void decoder_masked_multi_head_attention(NodeContext& ctx) {
    const Shape& q = ctx.shape(0);
    if (q.size() != 3) ctx.fail("query must have rank 3, got " + format_shape(q));
    const std::int64_t heads = num_heads(ctx);
    const Shape *key = ctx.known_shape(1), *value = ctx.known_shape(2), *past_key = ctx.known_shape(5), *past_value = ctx.known_shape(6);
    SymInt v_hidden;
    if (value && value->size() == 3) v_hidden = (*value)[2];
    else if (value && value->size() == 4) v_hidden = ctx.simplify((*value)[1] * (*value)[3]);
    else if (ctx.has_input(1)) v_hidden = q[2];
    else if (past_value && past_value->size() == 4) v_hidden = ctx.simplify((*past_value)[1] * (*past_value)[3]);
    else v_hidden = ctx.fresh("DecoderMaskedMultiHeadAttention: packed query, key and value without a past value to split them by");
    ctx.set_output(0, ctx.elem_type(0), {q[0], q[1], v_hidden});
    const bool shared = ctx.attr_int("past_present_share_buffer", 0) != 0;
    const auto present = [&](const Shape* past) -> std::optional<Shape> {
        if (past == nullptr || past->size() != 4) return std::nullopt;
        if (shared) return *past;
        return Shape{(*past)[0], (*past)[1], ctx.simplify((*past)[2] + q[1]), (*past)[3]};
    };
    if (auto p = present(past_key)) ctx.set_output(1, ctx.elem_type(0), std::move(*p));
    if (auto p = present(past_value)) ctx.set_output(2, ctx.elem_type(0), std::move(*p));
    if (ctx.output_count() > 3) {
        SymInt total;
        const auto past_length = ctx.single_value(7);  // past_sequence_length, with a shared buffer
        if (key && key->size() == 4) total = (*key)[2];  // cross attention: the past key is the key
        else if (past_key && past_key->size() == 4 && !shared) total = ctx.simplify((*past_key)[2] + q[1]);
        else if (shared && past_length) total = ctx.simplify(*past_length + q[1]);
        else total = ctx.fresh("DecoderMaskedMultiHeadAttention: qk's length, past_sequence_length + 1, with a past length not known");
        ctx.set_output(3, elem::float32, {q[0], heads, 1, total});
    }
}

/// GemmFloat8: [M, N] of A and B (transA, transB), of the type attribute dtype (float by default).
inline void gemm_float8(NodeContext& ctx) {
    const Shape &a = ctx.shape(0), &b = ctx.shape(1);
    if (a.size() != 2 || b.size() != 2) ctx.fail("A and B must have rank 2, got " + format_shape(a) + " and " + format_shape(b));
    const SymInt m = ctx.attr_int("transA", 0) ? a[1] : a[0];
    const SymInt n = ctx.attr_int("transB", 0) ? b[0] : b[1];
    ctx.set_output(0, static_cast<int>(ctx.attr_int("dtype", elem::float32)), {m, n});
}

/// SkipLayerNormalization, SkipSimplifiedLayerNormalization: the input's shape; mean and
/// inverse standard deviation [batch, seq, 1]; the sum of input, skip and bias as the input.
inline void skip_layer_normalization(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    ctx.set_output(0, ctx.elem_type(0), x);
    Shape stats = x;
    if (!stats.empty()) stats.back() = 1;
    ctx.set_output(1, elem::float32, stats);
    ctx.set_output(2, elem::float32, stats);
    ctx.set_output(3, ctx.elem_type(0), x);
}

/// SimplifiedLayerNormalization (RMS): Y as X, inv_std_var with the normalized axes 1.
inline void simplified_layer_normalization(NodeContext& ctx) { normalization_with_statistics(ctx, 1); }

/// EmbedLayerNormalization: [batch, seq, hidden], mask_index [batch] int32, the embedding sum.
inline void embed_layer_normalization(NodeContext& ctx) {
    const Shape &ids = ctx.shape(0), &word = ctx.shape(2);
    if (ids.size() != 2 || word.size() != 2) ctx.fail("input_ids and word_embedding must have rank 2");
    const int t = ctx.elem_type(2);
    ctx.set_output(0, t, {ids[0], ids[1], word[1]});
    ctx.set_output(1, elem::int32, {ids[0]});
    ctx.set_output(2, t, {ids[0], ids[1], word[1]});
}

/// BiasSplitGelu: [batch, hw, channels / 2].
inline void bias_split_gelu(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.size() != 3) ctx.fail("input must have rank 3, got " + format_shape(x));
    ctx.set_output(0, ctx.elem_type(0), {x[0], x[1], ctx.simplify(floordiv(x[2], 2))});
}

/// MatMulNBits: A [..., K] times a quantized [K, N] (attribute N).
inline void matmul_nbits(NodeContext& ctx) {
    Shape out = ctx.shape(0);
    if (out.empty()) ctx.fail("A must have rank >= 1");
    out.back() = ctx.attr_int("N", 0);
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// DynamicQuantizeMatMul, MatMulIntegerToFloat: a MatMul of inputs 0 and 1 with a float result.
inline void matmul_to_float(NodeContext& ctx) {
    matmul_at(ctx, 0, 1, ctx.op_type() == "MatMulIntegerToFloat" && ctx.has_input(2) ? ctx.elem_type(2) : elem::float32);
}

/// FusedMatMul: MatMul with transA/transB on the last two axes.
inline void fused_matmul(NodeContext& ctx) {
    Shape a = ctx.shape(0), b = ctx.shape(1);
    if (ctx.attr_int("transA", 0) && a.size() >= 2) std::swap(a[a.size() - 1], a[a.size() - 2]);
    if (ctx.attr_int("transB", 0) && b.size() >= 2) std::swap(b[b.size() - 1], b[b.size() - 2]);
    const TensorInfo ta = TensorInfo::of(ctx.elem_type(0), a), tb = TensorInfo::of(ctx.elem_type(1), b);
    const Attributes none;  // the context keeps a pointer: not a temporary
    NodeContext inner(ctx.env(), ctx.policy(), ctx.domain(), "MatMul", ctx.name(), ctx.opset(), {&ta, &tb}, none, 1);
    matmul(inner);
    if (inner.outputs()[0]) ctx.set_output(0, *inner.outputs()[0]);
}

/// GemmFastGelu: MatMul of inputs 0 and 1.
inline void gemm_fast_gelu(NodeContext& ctx) { matmul_at(ctx, 0, 1, ctx.elem_type(0)); }

/// QLinearAdd, QLinearMul: the broadcast of A (input 0) and B (input 3).
inline void qlinear_binary(NodeContext& ctx) { ctx.set_output(0, ctx.elem_type(0), broadcast_inputs(ctx, {0, 3})); }

/// QLinearConcat: inputs (Y_scale, Y_zero_point, then X, scale, zero point per tensor).
inline void qlinear_concat(NodeContext& ctx) {
    std::vector<Shape> shapes;
    for (std::size_t i = 2; i < ctx.input_count(); i += 3) shapes.push_back(ctx.shape(i));
    if (shapes.empty()) ctx.fail("no tensors to concatenate");
    const std::int64_t axis = ctx.attr_int("axis", 0);
    ctx.set_output(0, ctx.elem_type(2), shape::concat(ctx.env(), shapes, axis));
}

/// Runs the channels-first `rule` (as operator `op`, with ctx's attributes `names`, `inputs`
/// after the first) on ctx's input 0 moved from channels last ([batch, spatial..., channels])
/// when `last`; returns its output's shape, moved back.
template <class Rule>
Shape channels_last_rule(NodeContext& ctx, bool last, std::string_view op, std::initializer_list<const char*> names,
                         std::initializer_list<const TensorInfo*> inputs, Rule rule) {
    Shape x = ctx.shape(0);
    last = last && x.size() >= 3;
    if (last) {
        const SymInt c = x.back();
        x.pop_back();
        x.insert(x.begin() + 1, c);
    }
    const TensorInfo first = TensorInfo::of(ctx.elem_type(0), std::move(x));
    Attributes attributes;
    for (const char* name : names)
        if (const Attribute* a = ctx.attribute(name)) attributes.emplace(name, *a);
    std::vector<const TensorInfo*> in{&first};
    in.insert(in.end(), inputs);
    NodeContext inner(ctx.env(), ctx.policy(), ctx.domain(), op, ctx.name(), ctx.opset(), std::move(in), attributes, 1);
    rule(inner);
    Shape out = *inner.outputs()[0]->shape;
    if (last) {
        const SymInt c = out[1];
        out.erase(out.begin() + 1);
        out.push_back(c);
    }
    return out;
}

/// QLinearAveragePool, QLinearGlobalAveragePool: pooling, NCHW or (channels_last) NHWC.
inline void qlinear_pool(NodeContext& ctx) {
    const bool global = ctx.op_type() == "QLinearGlobalAveragePool";
    ctx.set_output(0, ctx.elem_type(0),
                   channels_last_rule(ctx, ctx.attr_int("channels_last", 0) != 0, ctx.op_type(),
                                      {"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations"}, {}, global ? global_pool : pool));
}

/// RemovePadding (convert_to_packing_mode): input [batch, seq, hidden] to [token_count, hidden],
/// the count of tokens that are not padding known at run time (a fresh symbol); token_offset
/// [batch, seq], cumulated_seq_len [batch + 1], max_seq_len [1], all int32.
inline void remove_padding(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.size() != 3) ctx.fail("input must have rank 3, got " + format_shape(x));
    ctx.set_output(0, ctx.elem_type(0), {ctx.fresh("RemovePadding: the count of tokens that are not padding, known at run time"), x[2]});
    ctx.set_output(1, elem::int32, {x[0], x[1]});
    ctx.set_output(2, elem::int32, {ctx.simplify(x[0] + 1)});
    ctx.set_output(3, elem::int32, {1});
}

/// RestorePadding: input [token_count, hidden] back to [batch, seq, hidden], token_offset [batch, seq].
inline void restore_padding(NodeContext& ctx) {
    const Shape &x = ctx.shape(0), &offset = ctx.shape(1);
    if (x.size() != 2) ctx.fail("input must have rank 2, got " + format_shape(x));
    if (offset.size() != 2) ctx.fail("token_offset must have rank 2, got " + format_shape(offset));
    ctx.set_output(0, ctx.elem_type(0), {offset[0], offset[1], x[1]});
}

/// PackedAttention: input [token_count, hidden] to [token_count, v_hidden].
inline void packed_attention(NodeContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.size() != 2) ctx.fail("input must have rank 2, got " + format_shape(x));
    ctx.set_output(0, ctx.elem_type(0), {x[0], attention_v_hidden(ctx)});
}

/// PackedMultiHeadAttention: query [token_count, hidden] with a value [token_count, v_hidden],
/// or packed query, key and value [token_count, heads, 3, head_size]: [token_count, v_hidden].
inline void packed_multi_head_attention(NodeContext& ctx) {
    const Shape& q = ctx.shape(0);
    if (q.size() == 4) {
        ctx.set_output(0, ctx.elem_type(0), {q[0], ctx.simplify(q[1] * q[3])});
    } else if (const Shape* value = ctx.known_shape(2); q.size() == 2 && value && value->size() == 2) {
        ctx.set_output(0, ctx.elem_type(0), {q[0], (*value)[1]});
    } else {
        ctx.fail("query must have rank 4 (packed), or rank 2 with a value of rank 2, got " + format_shape(q));
    }
}

/// GatedRelativePositionBias: [batch, heads, seq, seq], from the query layer [batch, seq, hidden],
/// or once padding is removed from token_offset [batch, seq] (input 6).
inline void gated_relative_position_bias(NodeContext& ctx) {
    const std::int64_t heads = num_heads(ctx);
    if (ctx.has_input(6)) {
        const Shape& offset = ctx.shape(6);
        if (offset.size() != 2) ctx.fail("token_offset must have rank 2, got " + format_shape(offset));
        ctx.set_output(0, ctx.elem_type(0), {offset[0], heads, offset[1], offset[1]});
        return;
    }
    const Shape& q = ctx.shape(0);
    if (q.size() != 3) ctx.fail("query_layer must have rank 3 without token_offset, got " + format_shape(q));
    ctx.set_output(0, ctx.elem_type(0), {q[0], heads, q[1], q[1]});
}

/// RelativePositionBias (T5's, fused): [1, heads, query_length, key_length], the two lengths
/// the values of inputs 1 and 2 (fresh symbols where they are not known).
inline void relative_position_bias(NodeContext& ctx) {
    const Shape& table = ctx.shape(0);
    if (table.size() != 2) ctx.fail("bias_table must have rank 2, got " + format_shape(table));
    const auto length = [&](std::size_t i, const char* what) {
        if (auto v = ctx.single_value(i)) return *v;
        return ctx.fresh(std::string("RelativePositionBias: a ") + what + " whose value is not known");
    };
    const SymInt query = length(1, "query_length"), key = length(2, "key_length");
    ctx.set_output(0, ctx.elem_type(0), {1, table[1], query, key});
}

/// NhwcConv: Conv with the channels last ([batch, spatial..., channels]); the weights as Conv's.
inline void nhwc_conv(NodeContext& ctx) {
    if (ctx.shape(0).size() < 3) ctx.fail("input must have rank 3 or more, got " + format_shape(ctx.shape(0)));
    ctx.set_output(0, ctx.elem_type(0),
                   channels_last_rule(ctx, true, "Conv", {"kernel_shape", "strides", "pads", "auto_pad", "dilations", "group"}, {ctx.input(1)}, conv));
}

/// MatMulInteger16: MatMul of int16 inputs, an int32 result.
inline void matmul_integer16(NodeContext& ctx) { matmul_at(ctx, 0, 1, elem::int32); }

/// com.microsoft's QuantizeLinear: the zero point's type (uint8 by default).
inline void quantize_linear(NodeContext& ctx) { ctx.set_output(0, ctx.has_input(2) ? ctx.elem_type(2) : elem::uint8, ctx.shape(0)); }
/// com.microsoft's DequantizeLinear: the scale's type.
inline void dequantize_linear(NodeContext& ctx) { ctx.set_output(0, ctx.elem_type(1), ctx.shape(0)); }

/// The com.microsoft family in the registry.
inline void register_microsoft(OpRegistry& r) {
    const std::string_view ms = "com.microsoft";
    r.add(ms, "Attention", 1, attention);
    r.add(ms, "MultiHeadAttention", 1, multi_head_attention);
    r.add(ms, "GroupQueryAttention", 1, group_query_attention);
    r.add(ms, "SparseAttention", 1, sparse_attention);
    r.add(ms, "DecoderMaskedMultiHeadAttention", 1, decoder_masked_multi_head_attention);
    r.add(ms, "GemmFloat8", 1, gemm_float8);
    r.add_all(ms, {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}, 1, skip_layer_normalization);
    r.add("", "SimplifiedLayerNormalization", 1, simplified_layer_normalization);  // a contrib op of the default domain
    r.add(ms, "SimplifiedLayerNormalization", 1, simplified_layer_normalization);
    r.add(ms, "EmbedLayerNormalization", 1, embed_layer_normalization);
    r.add_all(ms, {"BiasGelu", "FastGelu", "Gelu", "QuickGelu", "BiasAdd", "RotaryEmbedding", "QLinearSigmoid", "QLinearLeakyRelu",
                   "QLinearSoftmax", "BiasDropout", "BiasSoftmax", "GroupNorm", "SkipGroupNorm", "MoE", "LongformerAttention"},
              1, same_as_input);
    r.add(ms, "BiasSplitGelu", 1, bias_split_gelu);
    r.add(ms, "MatMulNBits", 1, matmul_nbits);
    r.add_all(ms, {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"}, 1, matmul_to_float);
    r.add(ms, "FusedMatMul", 1, fused_matmul);
    r.add(ms, "GemmFastGelu", 1, gemm_fast_gelu);
    r.add(ms, "FusedConv", 1, conv);
    r.add_all(ms, {"QLinearAdd", "QLinearMul"}, 1, qlinear_binary);
    r.add(ms, "QLinearConcat", 1, qlinear_concat);
    r.add_all(ms, {"QLinearAveragePool", "QLinearGlobalAveragePool"}, 1, qlinear_pool);
    r.add(ms, "RemovePadding", 1, remove_padding);
    r.add(ms, "RestorePadding", 1, restore_padding);
    r.add(ms, "PackedAttention", 1, packed_attention);
    r.add(ms, "PackedMultiHeadAttention", 1, packed_multi_head_attention);
    r.add(ms, "GatedRelativePositionBias", 1, gated_relative_position_bias);
    r.add(ms, "RelativePositionBias", 1, relative_position_bias);
    r.add(ms, "NhwcConv", 1, nhwc_conv);
    r.add(ms, "MatMulInteger16", 1, matmul_integer16);
    r.add(ms, "QuantizeLinear", 1, quantize_linear);
    r.add(ms, "DequantizeLinear", 1, dequantize_linear);
}

}  // namespace yobx::onnx::ops::microsoft
