// Registering a KV cache as a pytree node, then flattening an LLM's keyword
// arguments: leaves with their key paths, the TreeSpec (printed and as JSON),
// the same arguments as a dynamic Value, and the round trip back.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <boost/hana/define_struct.hpp>

#include <iostream>
#include <optional>
#include <vector>

using yobx::DenseTensor;
using yobx::DType;

// The user's class: one key and one value tensor per layer (transformers' DynamicCache).
template <class T>
struct KVCache {
    std::vector<T> key_cache;
    std::vector<T> value_cache;
};

// Its registration: a type name, the children, and how to rebuild it.
template <class T>
struct yobx::pytree_node<KVCache<T>> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const KVCache<T>& c) { return std::tie(c.key_cache, c.value_cache); }
    static auto flatten_with_keys(const KVCache<T>& c) {
        return std::tuple{yobx::attr("key_cache", c.key_cache), yobx::attr("value_cache", c.value_cache)};
    }
    static KVCache<T> unflatten(std::vector<T> keys, std::vector<T> values) {
        return {std::move(keys), std::move(values)};
    }
};

// The forward's keyword arguments as a struct: field names become dict keys,
// an absent optional is None.
struct ForwardKwargs {
    BOOST_HANA_DEFINE_STRUCT(ForwardKwargs,
        (std::optional<DenseTensor>, input_ids),
        (std::optional<DenseTensor>, attention_mask),
        (std::optional<KVCache<DenseTensor>>, past_key_values),
        (bool, use_cache));
};

int main() {
    const std::int64_t batch = 2, past = 5, heads = 4, head_dim = 8;
    KVCache<DenseTensor> cache;
    for (int layer = 0; layer < 2; ++layer) {
        cache.key_cache.push_back(DenseTensor::zeros({batch, heads, past, head_dim}, DType::float32));
        cache.value_cache.push_back(DenseTensor::zeros({batch, heads, past, head_dim}, DType::float32));
    }
    ForwardKwargs kwargs{DenseTensor::zeros({batch, 1}, DType::int64), DenseTensor::zeros({batch, past + 1}, DType::int64),
                         cache, true};

    auto [leaves_with_paths, spec] = yobx::tree_flatten_with_path(kwargs);
    std::cout << "leaves: " << leaves_with_paths.size() << "\n";
    for (const auto& [path, t] : leaves_with_paths) std::cout << "  " << yobx::keystr(path) << "  " << t << "\n";
    std::cout << "spec: " << spec << "\n";

    // The spec can be stored next to saved tensors and read back.
    const std::string json = spec.to_json();
    std::cout << "json: " << json.size() << " bytes, reads back equal: " << std::boolalpha
              << (yobx::TreeSpec::from_json(json) == spec) << "\n";

    // The same arguments as a dynamic Value (what a recorded call holds).
    const auto value = yobx::to_value(kwargs);
    std::cout << "value: " << value << "\n";

    // And back to the typed struct.
    const auto back = yobx::from_value<ForwardKwargs>(value);
    std::cout << "back: " << back.past_key_values->key_cache.size() << " layers, use_cache=" << back.use_cache << "\n";
    return 0;
}
