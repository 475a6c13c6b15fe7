// The rules of include/yobx/onnx/ops/microsoft.hpp: onnxruntime's com.microsoft operators.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

TEST_CASE("attention attributes of any int64: checked arithmetic") {
    // num_heads + 2*kv_num_heads was plain int64 arithmetic
    ShapeEnv env;
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const TensorInfo q = TensorInfo::of(elem::float32, {1, 5, 64});
    const auto gqa = [&](std::int64_t kv_heads) {
        return run(env, "GroupQueryAttention", 1, {&q}, {{"num_heads", integer(2)}, {"kv_num_heads", integer(kv_heads)}}, 1,
                   BroadcastPolicy::new_symbol, "com.microsoft");
    };
    CHECK(shape_of(gqa(1)[0]) == "[1, 5, 32]");
    CHECK(test::error_of<value_error>([&] { gqa(big); }) == "integer overflow in 9223372036854775807*2: the result does not fit in int64");
}

TEST_CASE("com.microsoft fusions: attention with a past, embeddings, skip layer normalization") {
    ShapeEnv env;
    const SymInt b = SymInt::symbol("batch"), s = SymInt::symbol("seq"), p = SymInt::symbol("past");
    const auto ms = [&](std::string_view op, std::vector<const TensorInfo*> in, const Attributes& a, std::size_t n) {
        return run(env, op, 1, std::move(in), a, n, BroadcastPolicy::new_symbol, "com.microsoft");
    };
    const TensorInfo x = TensorInfo::of(elem::float32, {b, s, 64});
    const TensorInfo w = TensorInfo::of(elem::float32, {64, 192});
    const TensorInfo bias = TensorInfo::of(elem::float32, {192});
    const TensorInfo past = TensorInfo::of(elem::float32, {2, b, 4, p, 16});
    auto out = ms("Attention", {&x, &w, &bias, nullptr, &past}, {{"num_heads", integer(4)}}, 2);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[2, batch, 4, past + seq, 16]");
    const TensorInfo key = TensorInfo::of(elem::float32, {b, SymInt::symbol("kv"), 64});
    const TensorInfo past_key = TensorInfo::of(elem::float32, {b, 4, p, 16});
    out = ms("MultiHeadAttention", {&x, &key, &key, nullptr, nullptr, nullptr, &past_key, &past_key}, {{"num_heads", integer(4)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[batch, 4, kv + past, 16]");
    out = ms("GroupQueryAttention", {&x, nullptr, nullptr, &past_key}, {{"num_heads", integer(2)}, {"kv_num_heads", integer(1)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 32]");
    CHECK(shape_of(out[1]) == "[batch, 4, unk__0, 16]");
    const TensorInfo ids = TensorInfo::of(elem::int64, {b, s});
    const TensorInfo word = TensorInfo::of(elem::float32, {1000, 64});
    out = ms("EmbedLayerNormalization", {&ids, nullptr, &word}, {}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[batch]");
    CHECK(out[1]->elem_type == elem::int32);
    out = ms("SkipLayerNormalization", {&x, &x}, {}, 4);
    CHECK(shape_of(out[1]) == "[batch, seq, 1]");
    CHECK(shape_of(out[3]) == "[batch, seq, 64]");
    const TensorInfo a = TensorInfo::of(elem::float32, {b, s, 64});
    out = ms("MatMulNBits", {&a}, {{"K", integer(64)}, {"N", integer(96)}}, 1);
    CHECK(shape_of(out[0]) == "[batch, seq, 96]");
    CHECK(test::error_of<value_error>([&] { ms("Attention", {&x, &w}, {}, 1); }) == "Attention 'n': attribute 'num_heads' must be positive");
}

TEST_CASE("com.microsoft quantized operators: QLinearConcat, channels-last pooling") {
    ShapeEnv env;
    const auto ms = [&](std::string_view op, std::vector<const TensorInfo*> in, const Attributes& a) {
        return run(env, op, 1, std::move(in), a, 1, BroadcastPolicy::new_symbol, "com.microsoft");
    };
    const TensorInfo scale = TensorInfo::of(elem::float32, {});
    const TensorInfo zp = TensorInfo::of(elem::uint8, {});
    const TensorInfo x = TensorInfo::of(elem::uint8, {1, 3, SymInt::symbol("h")});
    const TensorInfo y = TensorInfo::of(elem::uint8, {1, 5, SymInt::symbol("h")});
    CHECK(shape_of(ms("QLinearConcat", {&scale, &zp, &x, &scale, &zp, &y, &scale, &zp}, {{"axis", integer(1)}})[0]) == "[1, 8, h]");
    const TensorInfo nhwc = TensorInfo::of(elem::uint8, {1, SymInt::symbol("h"), 10, 8});
    const auto out = ms("QLinearAveragePool", {&nhwc, &scale, &zp, &scale, &zp},
                        {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}, {"channels_last", integer(1)}});
    CHECK(shape_of(out[0]) == "[1, h//2, 5, 8]");
}

TEST_CASE("com.microsoft packing mode, position biases, decoding attentions, NhwcConv, MatMulInteger16, GemmFloat8, MoE") {
    ShapeEnv env;
    const SymInt b = SymInt::symbol("batch"), s = SymInt::symbol("seq"), h = SymInt::symbol("h"), w = SymInt::symbol("w");
    const auto ms = [&](std::string_view op, std::vector<const TensorInfo*> in, const Attributes& a, std::size_t n = 1) {
        return run(env, op, 1, std::move(in), a, n, BroadcastPolicy::new_symbol, "com.microsoft");
    };
    // convert_to_packing_mode: RemovePadding before the first attention, RestorePadding after the last
    const TensorInfo x = TensorInfo::of(elem::float16, {b, s, 64});
    const TensorInfo mask = TensorInfo::of(elem::int32, {b});
    auto out = ms("RemovePadding", {&x, &mask}, {}, 4);
    CHECK(shape_of(out[0]) == "[unk__0, 64]");
    CHECK(out[0]->elem_type == elem::float16);
    CHECK(shape_of(out[1]) == "[batch, seq]");
    CHECK(shape_of(out[2]) == "[batch + 1]");
    CHECK(shape_of(out[3]) == "[1]");
    for (std::size_t i = 1; i < 4; ++i) CHECK(out[i]->elem_type == elem::int32);
    const TensorInfo tokens = *out[0], offset = *out[1], cumulated = *out[2];
    const TensorInfo weights = TensorInfo::of(elem::float16, {64, 192}), bias = TensorInfo::of(elem::float16, {192});
    out = ms("PackedAttention", {&tokens, &weights, &bias, &offset, &cumulated}, {{"num_heads", integer(4)}});
    CHECK(shape_of(out[0]) == "[unk__0, 64]");
    CHECK(shape_of(ms("PackedAttention", {&tokens, &weights, &bias, &offset, &cumulated},
                      {{"num_heads", integer(4)}, {"qkv_hidden_sizes", ints({64, 64, 32})}})[0]) == "[unk__0, 32]");
    const TensorInfo value = TensorInfo::of(elem::float16, {out[0]->shape->at(0), 48});
    CHECK(shape_of(ms("PackedMultiHeadAttention", {&tokens, &tokens, &value, &offset, &cumulated}, {{"num_heads", integer(4)}})[0]) ==
          "[unk__0, 48]");
    const TensorInfo packed = TensorInfo::of(elem::float16, {out[0]->shape->at(0), 4, 3, 16});
    CHECK(shape_of(ms("PackedMultiHeadAttention", {&packed, nullptr, nullptr, &offset, &cumulated}, {{"num_heads", integer(4)}})[0]) ==
          "[unk__0, 64]");
    CHECK(shape_of(ms("RestorePadding", {&tokens, &offset}, {})[0]) == "[batch, seq, 64]");
    // T5's position bias: its lengths are the values of shape computations; GatedRelativePositionBias
    const TensorInfo table = TensorInfo::of(elem::float32, {32, 8});
    const TensorInfo length = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{s});
    out = ms("RelativePositionBias", {&table, &length, &length}, {{"max_distance", integer(128)}, {"is_bidirectional", integer(1)}});
    CHECK(shape_of(out[0]) == "[1, 8, seq, seq]");
    const TensorInfo unknown = TensorInfo::of(elem::int64, {});
    CHECK(shape_of(ms("RelativePositionBias", {&table, &length, &unknown}, {})[0]) == "[1, 8, seq, unk__1]");
    const TensorInfo query = TensorInfo::of(elem::float32, {b, s, 64}), rel = TensorInfo::of(elem::float32, {1, 2, s, s});
    const TensorInfo qbias = TensorInfo::of(elem::float32, {64}), gw = TensorInfo::of(elem::float32, {32, 8});
    const TensorInfo gb = TensorInfo::of(elem::float32, {8}), eco = TensorInfo::of(elem::float32, {1, 2, 1, 1});
    CHECK(shape_of(ms("GatedRelativePositionBias", {&query, &qbias, &rel, &gw, &gb, &eco}, {{"num_heads", integer(2)}})[0]) ==
          "[batch, 2, seq, seq]");
    const TensorInfo packed_query = TensorInfo::of(elem::float32, {SymInt::symbol("tokens"), 64});
    CHECK(shape_of(ms("GatedRelativePositionBias", {&packed_query, &qbias, &rel, &gw, &gb, &eco, &offset}, {{"num_heads", integer(2)}})[0]) ==
          "[batch, 2, seq, seq]");
    // NhwcConv: Conv with the channels last
    const TensorInfo nhwc = TensorInfo::of(elem::float16, {b, h, w, 3});
    const TensorInfo kernel = TensorInfo::of(elem::float16, {8, 3, 3, 3});
    CHECK(shape_of(ms("NhwcConv", {&nhwc, &kernel}, {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}})[0]) == "[batch, h, w, 8]");
    CHECK(shape_of(ms("NhwcConv", {&nhwc, &kernel}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}})[0]) ==
          "[batch, (h + 1)//2 - 1, (w + 1)//2 - 1, 8]");
    const TensorInfo a = TensorInfo::of(elem::int16, {b, 4}), bm = TensorInfo::of(elem::int16, {4, 5});
    out = ms("MatMulInteger16", {&a, &bm}, {});
    CHECK(shape_of(out[0]) == "[batch, 5]");
    CHECK(out[0]->elem_type == elem::int32);
    // decoding: DecoderMaskedMultiHeadAttention (past and present in one buffer, or one step longer),
    // SparseAttention (the caches always shared), GemmFloat8, MoE, LongformerAttention
    const SymInt p = SymInt::symbol("past"), mx = SymInt::symbol("max_len");
    const TensorInfo step = TensorInfo::of(elem::float16, {b, 1, 64});
    const TensorInfo past_shared = TensorInfo::of(elem::float16, {b, 4, mx, 16}), past = TensorInfo::of(elem::float16, {b, 4, p, 16});
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &step, &step, nullptr, nullptr, &past_shared, &past_shared},
             {{"num_heads", integer(4)}, {"past_present_share_buffer", integer(1)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, 1, 64]");
    CHECK(shape_of(out[1]) == "[batch, 4, max_len, 16]");
    CHECK(shape_of(out[2]) == "[batch, 4, max_len, 16]");
    const TensorInfo past_length = TensorInfo::of(elem::int32, {}, std::vector<SymInt>{p});
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &step, &step, nullptr, nullptr, &past_shared, &past_shared, &past_length},
             {{"num_heads", integer(4)}, {"past_present_share_buffer", integer(1)}}, 4);
    CHECK(shape_of(out[3]) == "[batch, 4, 1, past + 1]");  // as onnxruntime's CPU kernel gives it
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &step, &step, nullptr, nullptr, &past, &past}, {{"num_heads", integer(4)}}, 4);
    CHECK(shape_of(out[1]) == "[batch, 4, past + 1, 16]");
    CHECK(shape_of(out[3]) == "[batch, 4, 1, past + 1]");
    CHECK(out[3]->elem_type == elem::float32);
    const TensorInfo packed_step = TensorInfo::of(elem::float16, {b, 1, 192});
    out = ms("DecoderMaskedMultiHeadAttention", {&packed_step, nullptr, nullptr, nullptr, nullptr, &past, &past}, {{"num_heads", integer(4)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, 1, 64]");
    const TensorInfo cross_kv = TensorInfo::of(elem::float16, {b, 4, SymInt::symbol("encoded"), 16});
    out = ms("DecoderMaskedMultiHeadAttention", {&step, &cross_kv, &cross_kv}, {{"num_heads", integer(4)}}, 4);
    CHECK(shape_of(out[0]) == "[batch, 1, 64]");
    CHECK(shape_of(out[3]) == "[batch, 4, 1, encoded]");
    const TensorInfo packed_qkv = TensorInfo::of(elem::float16, {b, s, 128});  // (4 + 2 * 2) * 16
    const TensorInfo cache = TensorInfo::of(elem::float16, {b, 2, mx, 16});
    out = ms("SparseAttention", {&packed_qkv, nullptr, nullptr, &cache, &cache}, {{"num_heads", integer(4)}, {"kv_num_heads", integer(2)}}, 3);
    CHECK(shape_of(out[0]) == "[batch, seq, 64]");
    CHECK(shape_of(out[1]) == "[batch, 2, max_len, 16]");
    CHECK(shape_of(out[2]) == "[batch, 2, max_len, 16]");
    const int float8 = 17;  // FLOAT8E4M3FN
    const TensorInfo f8a = TensorInfo::of(float8, {64, b}), f8b = TensorInfo::of(float8, {64, 32});
    out = ms("GemmFloat8", {&f8a, &f8b}, {{"transA", integer(1)}, {"dtype", integer(elem::float16)}});
    CHECK(shape_of(out[0]) == "[batch, 32]");
    CHECK(out[0]->elem_type == elem::float16);
    CHECK(shape_of(ms("MoE", {&x}, {})[0]) == "[batch, seq, 64]");
    CHECK(shape_of(ms("LongformerAttention", {&x}, {{"num_heads", integer(4)}, {"window", integer(2)}})[0]) == "[batch, seq, 64]");
    // errors name the node
    CHECK(test::error_of<value_error>([&] { ms("RemovePadding", {&tokens, &mask}, {}, 4); }) ==
          "RemovePadding 'n': input must have rank 3, got [unk__0, 64]");
    CHECK(test::error_of<value_error>([&] { ms("PackedMultiHeadAttention", {&tokens}, {{"num_heads", integer(4)}}); }) ==
          "PackedMultiHeadAttention 'n': query must have rank 4 (packed), or rank 2 with a value of rank 2, got [unk__0, 64]");
    CHECK(test::error_of<value_error>([&] { ms("RestorePadding", {&tokens, &mask}, {}); }) ==
          "RestorePadding 'n': token_offset must have rank 2, got [batch]");
    CHECK(test::error_of<value_error>([&] { ms("GatedRelativePositionBias", {&packed_query}, {{"num_heads", integer(2)}}); }) ==
          "GatedRelativePositionBias 'n': query_layer must have rank 3 without token_offset, got [tokens, 64]");
}
