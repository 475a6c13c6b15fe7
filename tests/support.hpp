// Types shared by the tests: a KV cache registered as a pytree node, an
// aggregate and a Boost.Hana struct.
#pragma once

#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>

#include <boost/hana/define_struct.hpp>

#include <optional>
#include <string>
#include <vector>

namespace test {

using yobx::DenseTensor;
using yobx::DType;

inline DenseTensor tensor(std::vector<std::int64_t> shape, DType dtype = DType::float32) {
    return DenseTensor::zeros(std::move(shape), dtype);
}

// The C++ counterpart of transformers' DynamicCache.
struct KVCache {
    std::vector<DenseTensor> key_cache;
    std::vector<DenseTensor> value_cache;
};

// Same children, registered without names: positional keys.
struct Pair2 {
    DenseTensor first;
    DenseTensor second;
};

struct Aggregate {
    DenseTensor a;
    int n;
    std::optional<DenseTensor> b;
};

// (Not std::array<DenseTensor, 2> for y: GCC 12 crashes inside Boost.PFR on
// aggregates holding an array of class types; see docs/pytree.md.)
struct Fixed {
    DenseTensor x;
    std::pair<DenseTensor, DenseTensor> y;
    std::tuple<DenseTensor, double> z;
};

struct Kwargs {
    BOOST_HANA_DEFINE_STRUCT(Kwargs,
        (std::optional<DenseTensor>, input_ids),
        (std::optional<DenseTensor>, attention_mask),
        (bool, use_cache));
};

}  // namespace test

template <>
struct yobx::pytree_node<test::KVCache> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const test::KVCache& c) { return std::tie(c.key_cache, c.value_cache); }
    static auto flatten_with_keys(const test::KVCache& c) {
        return std::tuple{yobx::attr("key_cache", c.key_cache), yobx::attr("value_cache", c.value_cache)};
    }
    static test::KVCache unflatten(std::vector<yobx::DenseTensor> k, std::vector<yobx::DenseTensor> v) {
        return {std::move(k), std::move(v)};
    }
};

template <>
struct yobx::pytree_node<test::Pair2> {
    static constexpr std::string_view type_name = "Pair2";
    static auto flatten(const test::Pair2& p) { return std::tie(p.first, p.second); }
    static test::Pair2 unflatten(yobx::DenseTensor a, yobx::DenseTensor b) { return {std::move(a), std::move(b)}; }
};
