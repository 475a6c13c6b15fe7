// yobx/adapters/libtorch/kv_cache.hpp — KVCache, the C++ counterpart of transformers' DynamicCache.
//
// Per layer a key and a value tensor, grown along the sequence by update(); a pytree node
// named DynamicCache with children key_cache and value_cache, as torch.export sees the Python one.
#pragma once

#include <yobx/adapters/libtorch/tensor_traits.hpp>
#include <yobx/error.hpp>
#include <yobx/pytree.hpp>

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx {

namespace libtorch {

/// The C++ counterpart of transformers' DynamicCache: per layer, a key and a
/// value tensor of shape [batch, heads, sequence, head_dim]. Registered as
/// the pytree node "DynamicCache" with children key_cache and value_cache.
///   KVCache cache;
///   auto [k, v] = cache.update(key_states, value_states, layer);  // everything cached so far
struct KVCache {
    std::vector<at::Tensor> key_cache;
    std::vector<at::Tensor> value_cache;

    std::size_t num_layers() const noexcept { return key_cache.size(); }
    /// The cached sequence length (dimension 2) of a layer, 0 for a layer not cached yet.
    std::int64_t get_seq_length(std::size_t layer = 0) const {
        return layer < key_cache.size() ? key_cache[layer].size(2) : 0;
    }
    /// Appends the new keys and values of `layer` along the sequence dimension
    /// and returns the whole cached keys and values. Layers are filled in order:
    /// a layer beyond the next one throws value_error.
    std::pair<at::Tensor, at::Tensor> update(const at::Tensor& key, const at::Tensor& value, std::size_t layer) {
        if (key.dim() != 4 || value.dim() != 4)
            throw value_error("KVCache::update: key and value must be 4-D [batch, heads, sequence, head_dim], got " +
                              std::to_string(key.dim()) + "-D and " + std::to_string(value.dim()) + "-D");
        if (layer > key_cache.size())
            throw value_error("KVCache::update: layer " + std::to_string(layer) + " comes before layer " +
                              std::to_string(key_cache.size()) + " was cached");
        if (layer == key_cache.size()) {
            key_cache.push_back(key);
            value_cache.push_back(value);
        } else {
            key_cache[layer] = at::cat({key_cache[layer], key}, 2);
            value_cache[layer] = at::cat({value_cache[layer], value}, 2);
        }
        return {key_cache[layer], value_cache[layer]};
    }
};

}  // namespace libtorch

/// KVCache as a pytree node: DynamicCache(key_cache=[...], value_cache=[...]).
template <>
struct pytree_node<libtorch::KVCache> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const libtorch::KVCache& c) { return std::tie(c.key_cache, c.value_cache); }
    static auto flatten_with_keys(const libtorch::KVCache& c) {
        return std::tuple{attr("key_cache", c.key_cache), attr("value_cache", c.value_cache)};
    }
    static libtorch::KVCache unflatten(std::vector<at::Tensor> k, std::vector<at::Tensor> v) {
        return {std::move(k), std::move(v)};
    }
};

}  // namespace yobx
