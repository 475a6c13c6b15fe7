// The rules of include/yobx/onnx/ops/attention.hpp: the LLM operators of opsets 23 and later
// (Attention, RMSNormalization, RotaryEmbedding, TensorScatter, CausalConvWithState,
// LinearAttention, ai.onnx.preview's FlexAttention), and the other operators of opsets 23 to 28:
// Swish, SwiGLU, CumProd (and CumSum's values), BitCast, DequantizeLinear's output_dtype.
#include "rules_support.hpp"

using namespace yobx;
using namespace yobx::onnx;
using namespace rules_test;

namespace {

const SymInt b = SymInt::symbol("batch"), s = SymInt::symbol("seq"), p = SymInt::symbol("past");

std::string type_and_shape(const std::optional<TensorInfo>& t) { return elem_name(t->elem_type) + shape_of(t); }

}  // namespace

TEST_CASE("Attention 4D: Y [batch, q_heads, q_seq, v_head], the cache grown by the new keys, qk over past + seq") {
    ShapeEnv env;
    const TensorInfo q = TensorInfo::of(elem::float16, {b, 8, s, 64});
    const TensorInfo k = TensorInfo::of(elem::float16, {b, 2, s, 64});
    const TensorInfo v = TensorInfo::of(elem::float16, {b, 2, s, 32});
    const TensorInfo past_k = TensorInfo::of(elem::float16, {b, 2, p, 64});
    const TensorInfo past_v = TensorInfo::of(elem::float16, {b, 2, p, 32});
    const TensorInfo mask = TensorInfo::of(elem::bool_, {s, p + s});
    for (const int opset : {23, 24, 25}) {
        const auto out = run(env, "Attention", opset, {&q, &k, &v, &mask, &past_k, &past_v}, {}, 4);
        CHECK(type_and_shape(out[0]) == "float16[batch, 8, seq, 32]");
        CHECK(type_and_shape(out[1]) == "float16[batch, 2, past + seq, 64]");
        CHECK(type_and_shape(out[2]) == "float16[batch, 2, past + seq, 32]");
        CHECK(type_and_shape(out[3]) == "float16[batch, 8, seq, past + seq]");
    }
    // without a past the present cache is K and V themselves
    const auto out = run(env, "Attention", 23, {&q, &k, &v}, {}, 4);
    CHECK(shape_of(out[1]) == "[batch, 2, seq, 64]");
    CHECK(shape_of(out[2]) == "[batch, 2, seq, 32]");
    CHECK(shape_of(out[3]) == "[batch, 8, seq, seq]");
}

TEST_CASE("Attention 3D: heads from q_num_heads and kv_num_heads, Y [batch, q_seq, q_heads * v_head]") {
    ShapeEnv env;
    const TensorInfo q = TensorInfo::of(elem::float32, {b, s, 512});
    const TensorInfo k = TensorInfo::of(elem::float32, {b, s + 3, 128});
    const TensorInfo v = TensorInfo::of(elem::float32, {b, s + 3, 96});
    const TensorInfo past_k = TensorInfo::of(elem::float32, {b, 2, p, 64});
    const TensorInfo past_v = TensorInfo::of(elem::float32, {b, 2, p, 48});
    const Attributes heads{{"q_num_heads", integer(8)}, {"kv_num_heads", integer(2)}};
    const auto out = run(env, "Attention", 24, {&q, &k, &v, nullptr, &past_k, &past_v}, heads, 4);
    CHECK(shape_of(out[0]) == "[batch, seq, 384]");
    CHECK(shape_of(out[1]) == "[batch, 2, past + seq + 3, 64]");
    CHECK(shape_of(out[2]) == "[batch, 2, past + seq + 3, 48]");
    CHECK(shape_of(out[3]) == "[batch, 8, seq, past + seq + 3]");
    const auto alone = run(env, "Attention", 23, {&q, &k, &v}, heads, 2);
    CHECK(shape_of(alone[1]) == "[batch, 2, seq + 3, 64]");
}

TEST_CASE("Attention's errors name the node and what is wrong") {
    ShapeEnv env;
    const TensorInfo q = TensorInfo::of(elem::float32, {b, s, 512});
    const TensorInfo q4 = TensorInfo::of(elem::float32, {b, 8, s, 64});
    const TensorInfo q2 = TensorInfo::of(elem::float32, {b, 512});
    const TensorInfo past = TensorInfo::of(elem::float32, {b, p, 64});
    const auto fails = [&](std::vector<const TensorInfo*> in, const Attributes& a = {}) {
        return test::error_of<value_error>([&] { run(env, "Attention", 23, std::move(in), a, 3); });
    };
    CHECK(fails({&q2, &q, &q}) == "Attention 'n': Q must have rank 3 or 4, got [batch, 512]");
    CHECK(fails({&q, &q4, &q}) == "Attention 'n': Q, K and V must have the same rank, got [batch, seq, 512], [batch, 8, seq, 64] and [batch, seq, 512]");
    CHECK(fails({&q, &q, &q}) == "Attention 'n': attribute 'q_num_heads' is required for 3D inputs");
    CHECK(fails({&q, &q, &q}, {{"q_num_heads", integer(8)}}) == "Attention 'n': attribute 'kv_num_heads' is required for 3D inputs");
    CHECK(fails({&q, &q, &q}, {{"q_num_heads", integer(0)}, {"kv_num_heads", integer(2)}}) ==
          "Attention 'n': attribute 'q_num_heads' must be positive, got 0");
    CHECK(fails({&q, &q, &q}, {{"q_num_heads", integer(3)}, {"kv_num_heads", integer(2)}}) ==
          "Attention 'n': Q's last dim 512 is not a multiple of its 3 heads");
    CHECK(fails({&q4, &q4, &q4, nullptr, &q4}) == "Attention 'n': past_key is given without past_value");
    CHECK(fails({&q4, &q4, &q4, nullptr, nullptr, &q4}) == "Attention 'n': past_value is given without past_key");
    CHECK(fails({&q4, &q4, &q4, nullptr, &past, &q4}) == "Attention 'n': past_key must have rank 4, got [batch, past, 64]");
}

TEST_CASE("RMSNormalization and RotaryEmbedding keep X's shape, RMSNormalization's type is the scale's") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float16, {b, s, 512});
    const TensorInfo scale = TensorInfo::of(elem::float32, {512});
    CHECK(type_and_shape(run(env, "RMSNormalization", 23, {&x, &scale})[0]) == "float32[batch, seq, 512]");
    CHECK(test::error_of<value_error>([&] { run(env, "RMSNormalization", 23, {&x, &scale}, {{"axis", integer(3)}}); }) ==
          "RMSNormalization 'n': axis 3 is out of range for rank 3");
    const TensorInfo cache = TensorInfo::of(elem::float16, {4096, 32});
    const TensorInfo ids = TensorInfo::of(elem::int64, {b, s});
    CHECK(type_and_shape(run(env, "RotaryEmbedding", 23, {&x, &cache, &cache, &ids}, {{"num_heads", integer(8)}})[0]) ==
          "float16[batch, seq, 512]");
    const TensorInfo x4 = TensorInfo::of(elem::float16, {b, 8, s, 64});
    CHECK(shape_of(run(env, "RotaryEmbedding", 23, {&x4, &cache, &cache, &ids})[0]) == "[batch, 8, seq, 64]");
    CHECK(test::error_of<value_error>([&] { run(env, "RotaryEmbedding", 23, {&x, &cache, &cache, &ids}); }) ==
          "RotaryEmbedding 'n': attribute 'num_heads' is required for a 3D input");
    CHECK(test::error_of<value_error>([&] { run(env, "RotaryEmbedding", 23, {&x, &cache, &cache, &ids}, {{"num_heads", integer(5)}}); }) ==
          "RotaryEmbedding 'n': X's last dim 512 is not a multiple of its 5 heads");
    const TensorInfo x2 = TensorInfo::of(elem::float16, {b, 512});
    CHECK(test::error_of<value_error>([&] { run(env, "RotaryEmbedding", 23, {&x2, &cache, &cache}); }) ==
          "RotaryEmbedding 'n': X must have rank 3 or 4, got [batch, 512]");
    // before opset 23 the default domain has neither
    CHECK_FALSE(static_cast<bool>(default_registry().find("", "RMSNormalization", 22)));
    CHECK_FALSE(static_cast<bool>(default_registry().find("", "RotaryEmbedding", 22)));
}

TEST_CASE("TensorScatter: the cache's shape, whatever the update's sequence, never along the batch axis") {
    ShapeEnv env;
    const TensorInfo cache = TensorInfo::of(elem::bfloat16, {b, 8, 4096, 64});
    const TensorInfo update = TensorInfo::of(elem::bfloat16, {b, 8, s, 64});
    const TensorInfo at = TensorInfo::of(elem::int64, {b});
    CHECK(type_and_shape(run(env, "TensorScatter", 24, {&cache, &update, &at})[0]) == "bfloat16[batch, 8, 4096, 64]");
    CHECK(test::error_of<value_error>([&] { run(env, "TensorScatter", 24, {&cache, &update}, {{"axis", integer(-4)}}); }) ==
          "TensorScatter 'n': axis must not be 0, the batch axis");
    const TensorInfo flat = TensorInfo::of(elem::bfloat16, {b, s});
    CHECK(test::error_of<value_error>([&] { run(env, "TensorScatter", 24, {&cache, &flat}); }) ==
          "TensorScatter 'n': update [batch, seq] and past_cache [batch, 8, 4096, 64] differ in rank");
    CHECK_FALSE(static_cast<bool>(default_registry().find("", "TensorScatter", 23)));
}

TEST_CASE("CausalConvWithState and LinearAttention (27): the input's shape and the carried state's") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {b, 256, s});
    const TensorInfo w = TensorInfo::of(elem::float32, {256, 1, 4});
    const auto conv = run(env, "CausalConvWithState", 27, {&x, &w}, {}, 2);
    CHECK(shape_of(conv[0]) == "[batch, 256, seq]");
    CHECK(shape_of(conv[1]) == "[batch, 256, 3]");
    const TensorInfo w2 = TensorInfo::of(elem::float32, {256, 4});
    CHECK(test::error_of<value_error>([&] { run(env, "CausalConvWithState", 27, {&x, &w2}, {}, 2); }) ==
          "CausalConvWithState 'n': weight must have rank 3, got [256, 4]");
    CHECK(test::error_of<value_error>([&] { run(env, "CausalConvWithState", 27, {&w2, &w}, {}, 2); }) ==
          "CausalConvWithState 'n': input must have rank 3, got [256, 4]");
    const TensorInfo q = TensorInfo::of(elem::float16, {b, s, 8 * 128});
    const TensorInfo k = TensorInfo::of(elem::float16, {b, s, 2 * 128});
    const TensorInfo v = TensorInfo::of(elem::float16, {b, s, 2 * 96});
    const TensorInfo state = TensorInfo::of(elem::float32, {b, 2, 128, 96});
    const Attributes heads{{"q_num_heads", integer(8)}, {"kv_num_heads", integer(2)}, {"update_rule", text("linear")}};
    const auto lin = run(env, "LinearAttention", 27, {&q, &k, &v, &state}, heads, 2);
    CHECK(type_and_shape(lin[0]) == "float16[batch, seq, 768]");
    CHECK(type_and_shape(lin[1]) == "float32[batch, 2, 128, 96]");
    // the gates each rule takes: decay [B, T, kv_heads] for the gated rules, beta for the delta ones
    const TensorInfo gate = TensorInfo::of(elem::float16, {b, s, 2});
    const auto with_rule = [&](const char* rule) {
        Attributes a = heads;
        a["update_rule"] = text(rule);
        return a;
    };
    CHECK(shape_of(run(env, "LinearAttention", 27, {&q, &k, &v, nullptr, &gate, &gate}, with_rule("gated_delta"), 2)[0]) ==
          "[batch, seq, 768]");
    CHECK(test::error_of<value_error>([&] { run(env, "LinearAttention", 27, {&q, &k, &v}, with_rule("gated"), 2); }) ==
          "LinearAttention 'n': update_rule 'gated' requires the decay input");
    CHECK(test::error_of<value_error>([&] { run(env, "LinearAttention", 27, {&q, &k, &v, nullptr, nullptr, &gate}, heads, 2); }) ==
          "LinearAttention 'n': update_rule 'linear' forbids the beta input");
    CHECK(test::error_of<value_error>([&] { run(env, "LinearAttention", 27, {&q, &k, &v}, with_rule("fast"), 2); }) ==
          "LinearAttention 'n': update_rule must be one of 'linear', 'gated', 'delta', 'gated_delta', got 'fast'");
    CHECK(test::error_of<value_error>([&] { run(env, "LinearAttention", 27, {&q, &k, &v}, {{"q_num_heads", integer(8)}, {"kv_num_heads", integer(3)}}, 2); }) ==
          "LinearAttention 'n': q_num_heads (8) must be a multiple of kv_num_heads (3)");
    CHECK(test::error_of<value_error>([&] { run(env, "LinearAttention", 27, {&q, &k, &v}, {{"q_num_heads", integer(6)}, {"kv_num_heads", integer(2)}}, 2); }) ==
          "LinearAttention 'n': query's last dim 1024 is not a multiple of its 6 heads");
    CHECK(test::error_of<value_error>([&] { run(env, "LinearAttention", 27, {&q, &k, &v}, {{"q_num_heads", integer(8)}}, 2); }) ==
          "LinearAttention 'n': attribute 'kv_num_heads' is required");
}

TEST_CASE("FlexAttention of ai.onnx.preview: Y [batch, q_heads, q_seq, v_head]") {
    ShapeEnv env;
    const TensorInfo q = TensorInfo::of(elem::float32, {b, 8, s, 64});
    const TensorInfo k = TensorInfo::of(elem::float32, {b, 2, p, 64});
    const TensorInfo v = TensorInfo::of(elem::float32, {b, 2, p, 16});
    CHECK(shape_of(run(env, "FlexAttention", 1, {&q, &k, &v}, {}, 1, BroadcastPolicy::new_symbol, "ai.onnx.preview")[0]) ==
          "[batch, 8, seq, 16]");
    const TensorInfo q3 = TensorInfo::of(elem::float32, {b, s, 64});
    CHECK(test::error_of<value_error>([&] { run(env, "FlexAttention", 1, {&q3, &k, &v}, {}, 1, BroadcastPolicy::new_symbol, "ai.onnx.preview"); }) ==
          "FlexAttention 'n': Q must have rank 4, got [batch, seq, 64]");
}

TEST_CASE("Swish, SwiGLU, CumProd and BitCast keep the shape, CumSum and CumProd follow a vector's values") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(elem::float32, {b, s, 1024});
    CHECK(shape_of(run(env, "Swish", 24, {&x})[0]) == "[batch, seq, 1024]");
    CHECK(shape_of(run(env, "SwiGLU", 28, {&x, &x})[0]) == "[batch, seq, 1024]");
    const TensorInfo other = TensorInfo::of(elem::float32, {b, s, 512});
    CHECK(test::error_of<value_error>([&] { run(env, "SwiGLU", 28, {&x, &other}); }) ==
          "SwiGLU 'n': A [batch, seq, 1024] and B [batch, seq, 512] must have the same shape");
    CHECK_FALSE(static_cast<bool>(default_registry().find("", "Swish", 23)));
    CHECK_FALSE(static_cast<bool>(default_registry().find("", "SwiGLU", 27)));
    // the running product of a shape: the element counts of its prefixes
    const TensorInfo dims = ints_tensor({b, s, 4});
    const TensorInfo axis = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{0});
    CHECK(values_of(run(env, "CumProd", 26, {&dims, &axis})[0]) == "[batch, batch*seq, 4*batch*seq]");
    CHECK(values_of(run(env, "CumProd", 26, {&dims, &axis}, {{"exclusive", integer(1)}, {"reverse", integer(1)}})[0]) == "[4*seq, 4, 1]");
    CHECK(values_of(run(env, "CumSum", 14, {&dims, &axis}, {{"exclusive", integer(1)}})[0]) == "[0, batch, batch + seq]");
    CHECK(test::error_of<value_error>([&] {
              const TensorInfo two = TensorInfo::of(elem::int64, {}, std::vector<SymInt>{2});
              run(env, "CumProd", 26, {&dims, &two});
          }) == "CumProd 'n': axis 2 is out of range for rank 1");
    // BitCast: bits for bits
    const TensorInfo h = TensorInfo::of(elem::float16, {b, 8});
    CHECK(type_and_shape(run(env, "BitCast", 26, {&h}, {{"to", integer(elem::bfloat16)}})[0]) == "bfloat16[batch, 8]");
    CHECK(values_of(run(env, "BitCast", 26, {&dims}, {{"to", integer(elem::int64)}})[0]) == "[batch, seq, 4]");
    CHECK(values_of(run(env, "BitCast", 26, {&dims}, {{"to", integer(elem::uint64)}})[0]) == "none");
    CHECK(test::error_of<value_error>([&] { run(env, "BitCast", 26, {&h}, {{"to", integer(elem::float32)}}); }) ==
          "BitCast 'n': float16 (16 bits) cannot be bitcast to float32 (32 bits)");
    CHECK(test::error_of<value_error>([&] { run(env, "BitCast", 26, {&h}); }) == "BitCast 'n': attribute 'to' is required");
}

TEST_CASE("DequantizeLinear's output_dtype (opset 23) sets the output type, before 23 the scale's does") {
    ShapeEnv env;
    const TensorInfo x = TensorInfo::of(25, {b, 64});  // uint2
    const TensorInfo scale = TensorInfo::of(elem::float32, {});
    const Attributes half{{"output_dtype", integer(elem::float16)}};
    CHECK(type_and_shape(run(env, "DequantizeLinear", 23, {&x, &scale}, half)[0]) == "float16[batch, 64]");
    CHECK(type_and_shape(run(env, "DequantizeLinear", 21, {&x, &scale}, half)[0]) == "float32[batch, 64]");
    CHECK(type_and_shape(run(env, "DequantizeLinear", 25, {&x, &scale})[0]) == "float32[batch, 64]");
}
