// A tiny decoder-only transformer written with LibTorch's C++ API, and its
// generation loop: the model of the demo (examples/tiny_llm_generate.cpp) and
// of the adapter's tests. Random weights from a fixed seed: nothing to download.
#pragma once

#include <yobx/adapters/libtorch.hpp>

#include <boost/hana/define_struct.hpp>
#include <torch/nn.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

namespace tiny_llm {

using yobx::libtorch::KVCache;

struct Config {
    std::int64_t vocab_size = 64;
    std::int64_t hidden_size = 32;
    std::int64_t num_heads = 4;
    std::int64_t num_layers = 2;
    std::int64_t max_positions = 128;
};

// The optional keyword arguments of forward, as transformers names them.
struct ForwardKwargs {
    BOOST_HANA_DEFINE_STRUCT(ForwardKwargs,
        (std::optional<at::Tensor>, attention_mask),
        (std::optional<at::Tensor>, position_ids),
        (std::optional<KVCache>, past_key_values));
};

// What forward returns: the logits and the cache extended by this call.
struct Output {
    at::Tensor logits;
    KVCache past_key_values;
};

// Multi-head self-attention over the cached keys and values.
struct AttentionImpl : torch::nn::Module {
    AttentionImpl(const Config& c) : heads(c.num_heads), head_dim(c.hidden_size / c.num_heads) {
        q = register_module("q", torch::nn::Linear(c.hidden_size, c.hidden_size));
        k = register_module("k", torch::nn::Linear(c.hidden_size, c.hidden_size));
        v = register_module("v", torch::nn::Linear(c.hidden_size, c.hidden_size));
        o = register_module("o", torch::nn::Linear(c.hidden_size, c.hidden_size));
    }

    // x: [batch, seq, hidden]; mask: [batch, 1, seq, total] (true where a query may look).
    at::Tensor forward(const at::Tensor& x, const at::Tensor& mask, KVCache& cache, std::size_t layer) {
        const auto split = [&](const at::Tensor& t) {  // [batch, heads, seq, head_dim]
            return t.view({x.size(0), x.size(1), heads, head_dim}).transpose(1, 2);
        };
        auto [keys, values] = cache.update(split(k(x)), split(v(x)), layer);
        auto scores = at::matmul(split(q(x)), keys.transpose(2, 3)) / std::sqrt(static_cast<double>(head_dim));
        scores = scores.masked_fill(mask.logical_not(), -1e9);
        auto out = at::matmul(at::softmax(scores, -1), values).transpose(1, 2).reshape(x.sizes());
        return o(out);
    }

    std::int64_t heads, head_dim;
    torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
};
TORCH_MODULE(Attention);

struct BlockImpl : torch::nn::Module {
    BlockImpl(const Config& c) {
        ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size})));
        attn = register_module("attn", Attention(c));
        ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size})));
        up = register_module("up", torch::nn::Linear(c.hidden_size, 4 * c.hidden_size));
        down = register_module("down", torch::nn::Linear(4 * c.hidden_size, c.hidden_size));
    }
    at::Tensor forward(at::Tensor x, const at::Tensor& mask, KVCache& cache, std::size_t layer) {
        x = x + attn(ln1(x), mask, cache, layer);
        return x + down(at::gelu(up(ln2(x))));
    }
    torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
    Attention attn{nullptr};
    torch::nn::Linear up{nullptr}, down{nullptr};
};
TORCH_MODULE(Block);

// forward(input_ids, attention_mask, position_ids, past_key_values) -> logits
// and the extended cache, with the arguments transformers' causal LMs take.
struct TinyLLMImpl : torch::nn::Module {
    explicit TinyLLMImpl(const Config& c = {}) : config(c) {
        embed = register_module("embed", torch::nn::Embedding(c.vocab_size, c.hidden_size));
        positions = register_module("positions", torch::nn::Embedding(c.max_positions, c.hidden_size));
        for (std::int64_t i = 0; i < c.num_layers; ++i) blocks->push_back(Block(c));
        register_module("blocks", blocks);
        norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size})));
        lm_head = register_module("lm_head", torch::nn::Linear(c.hidden_size, c.vocab_size));
    }

    Output forward(const at::Tensor& input_ids, const ForwardKwargs& kw) {
        const std::int64_t batch = input_ids.size(0), seq = input_ids.size(1);
        KVCache cache = kw.past_key_values.value_or(KVCache{});  // the caller's cache is left as it was
        const std::int64_t past = cache.get_seq_length();
        const auto opts = input_ids.options();
        const at::Tensor mask2d = kw.attention_mask ? *kw.attention_mask : at::ones({batch, past + seq}, opts);
        const at::Tensor pos = kw.position_ids ? *kw.position_ids : at::arange(past, past + seq, opts).expand({batch, seq});
        // A query at absolute position past + i sees the keys j <= past + i that the mask keeps.
        const auto causal = at::arange(past + seq, opts).view({1, -1}) <= at::arange(past, past + seq, opts).view({-1, 1});
        const at::Tensor mask = causal.view({1, 1, seq, past + seq}).logical_and(mask2d.view({batch, 1, 1, past + seq}).ne(0));
        at::Tensor x = embed(input_ids) + positions(pos);
        for (std::size_t layer = 0; layer < blocks->size(); ++layer)
            x = blocks[layer]->as<Block>()->forward(x, mask, cache, layer);
        return {lm_head(norm(x)), std::move(cache)};
    }

    Config config;
    torch::nn::Embedding embed{nullptr}, positions{nullptr};
    torch::nn::ModuleList blocks;
    torch::nn::LayerNorm norm{nullptr};
    torch::nn::Linear lm_head{nullptr};
};
TORCH_MODULE(TinyLLM);

/// The parameters of TinyLLM's forward, as Python's inspect.signature would give them.
inline yobx::Signature forward_signature() {
    return {yobx::param("input_ids"), yobx::param("attention_mask", yobx::none), yobx::param("position_ids", yobx::none),
            yobx::param("past_key_values", yobx::none)};
}

/// The model with its weights drawn from a fixed seed.
inline TinyLLM make_model(const Config& c = {}) {
    torch::manual_seed(0);
    TinyLLM model(c);
    model->eval();
    return model;
}

/// A prompt of `batch` rows of `length` token ids (fixed seed).
inline at::Tensor make_prompt(std::int64_t batch, std::int64_t length, std::int64_t vocab_size, std::uint64_t seed) {
    torch::manual_seed(seed);
    return at::randint(vocab_size, {batch, length}, at::kLong);
}

/// Greedy generation: a prefill call with the prompt, then one decode call per
/// further token, each with the cache the previous call returned. `forward` is
/// called as forward(input_ids, ForwardKwargs); returns the new tokens.
template <class Forward>
at::Tensor generate(Forward&& forward, const at::Tensor& prompt, std::int64_t new_tokens) {
    torch::NoGradGuard no_grad;
    const std::int64_t batch = prompt.size(0), length = prompt.size(1);
    at::Tensor mask = at::ones({batch, length}, at::kLong);
    at::Tensor positions = at::arange(length, at::kLong).expand({batch, length});
    Output out = forward(prompt, ForwardKwargs{mask, positions, std::nullopt});
    at::Tensor next = out.logits.select(1, -1).argmax(-1, /*keepdim=*/true);
    at::Tensor tokens = next;
    for (std::int64_t past = length; past < length + new_tokens - 1; ++past) {
        mask = at::cat({mask, at::ones({batch, 1}, at::kLong)}, 1);
        positions = at::full({batch, 1}, past, at::kLong);
        out = forward(next, ForwardKwargs{mask, positions, std::move(out.past_key_values)});
        next = out.logits.select(1, -1).argmax(-1, /*keepdim=*/true);
        tokens = at::cat({tokens, next}, 1);
    }
    return tokens;
}

}  // namespace tiny_llm

template <>
inline constexpr bool yobx::enable_keyword_arguments<tiny_llm::ForwardKwargs> = true;
