// Observes an LLM-like generation loop (two prompts, each a prefill without a
// cache and decode steps with one) and prints what an export needs beyond the
// dynamic shapes: the relation between the sequence lengths, the ranges, the
// readiness report, a TensorRT profile and the ONNX dimension names.
#include <yobx/dense_tensor.hpp>
#include <yobx/observer.hpp>

#include <boost/hana/define_struct.hpp>

#include <iostream>
#include <optional>
#include <vector>

using yobx::DenseTensor;
using yobx::DType;

struct KVCache {
    std::vector<DenseTensor> key_cache;
    std::vector<DenseTensor> value_cache;
};

template <>
struct yobx::pytree_node<KVCache> {
    static constexpr std::string_view type_name = "DynamicCache";
    static auto flatten(const KVCache& c) { return std::tie(c.key_cache, c.value_cache); }
    static auto flatten_with_keys(const KVCache& c) {
        return std::tuple{yobx::attr("key_cache", c.key_cache), yobx::attr("value_cache", c.value_cache)};
    }
    static KVCache unflatten(std::vector<DenseTensor> k, std::vector<DenseTensor> v) { return {std::move(k), std::move(v)}; }
};

struct ForwardKwargs {
    BOOST_HANA_DEFINE_STRUCT(ForwardKwargs,
        (std::optional<DenseTensor>, attention_mask),
        (std::optional<KVCache>, past_key_values));
};
template <>
inline constexpr bool yobx::enable_keyword_arguments<ForwardKwargs> = true;

DenseTensor ids(std::int64_t batch, std::int64_t length) { return DenseTensor::zeros({batch, length}, DType::int64); }
KVCache cache(std::int64_t batch, std::int64_t past) {
    return {{DenseTensor::zeros({batch, 4, past, 8}, DType::float32)}, {DenseTensor::zeros({batch, 4, past, 8}, DType::float32)}};
}

int main() {
    const yobx::Signature signature{yobx::param("input_ids"), yobx::param("attention_mask", yobx::none),
                                    yobx::param("past_key_values", yobx::none)};
    yobx::InputObserver<DenseTensor> observer;
    auto forward = observer.wrap([](const DenseTensor& input_ids, const ForwardKwargs&) { return input_ids; },
                                 signature, /*store_n_calls=*/8);
    for (auto [batch, prompt] : {std::pair<std::int64_t, std::int64_t>{2, 5}, {3, 7}}) {
        forward(ids(batch, prompt), ForwardKwargs{ids(batch, prompt), std::nullopt});  // prefill: no cache yet
        for (std::int64_t past = prompt; past < prompt + 3; ++past)                  // decode: one token at a time
            forward(ids(batch, 1), ForwardKwargs{ids(batch, past + 1), cache(batch, past)});
    }

    const yobx::ExportSpec spec = observer.infer_export_spec(
        {.set_batch_dimension_for = true, .derived_dims = true, .bounds = {{"sequence_length", {1, 4096}}}});
    std::cout << spec.to_python() << "\n\n" << spec.report() << "\n";
    std::cout << "TensorRT profile: " << spec.tensorrt_profile() << "\n\n";
    std::cout << "ONNX: " << spec.onnx_dims() << "\n\n";
    // The whole spec as JSON, for tools; from_json reads it back.
    const std::string json = spec.to_json();
    std::cout << "JSON: " << json.size() << " bytes, loads back equal: " << std::boolalpha
              << (yobx::ExportSpec::from_json(json) == spec) << "\n";
}
