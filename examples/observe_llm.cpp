// Observes an LLM-like generation loop (a prefill call with an image, then
// decode calls with a KV cache) and prints what torch.export needs: the
// dynamic shapes as a Python literal and the export arguments.
#include <yobx/dense_tensor.hpp>
#include <yobx/observer.hpp>

#include <boost/hana/define_struct.hpp>

#include <functional>
#include <iostream>
#include <optional>
#include <vector>

using yobx::DenseTensor;
using yobx::DType;

// The C++ counterpart of transformers' DynamicCache, registered as a pytree node.
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

// The optional keyword arguments of the forward, as a struct of optionals.
struct ForwardKwargs {
    BOOST_HANA_DEFINE_STRUCT(ForwardKwargs,
        (std::optional<DenseTensor>, attention_mask),
        (std::optional<KVCache>, past_key_values),
        (std::optional<DenseTensor>, pixel_values));
};
template <>
inline constexpr bool yobx::enable_keyword_arguments<ForwardKwargs> = true;

// A model whose forward is a replaceable slot, as in many C++ inference code bases.
struct Model {
    static constexpr int layers = 2;
    std::function<DenseTensor(const DenseTensor&, const ForwardKwargs&)> forward = [](const DenseTensor& ids,
                                                                                       const ForwardKwargs&) {
        return DenseTensor::zeros({ids.shape()[0], ids.shape()[1], 32}, DType::float32);  // logits
    };
};

KVCache make_cache(std::int64_t batch, std::int64_t past) {
    KVCache c;
    for (int i = 0; i < Model::layers; ++i) {
        c.key_cache.push_back(DenseTensor::zeros({batch, 4, past, 8}, DType::float32));
        c.value_cache.push_back(DenseTensor::zeros({batch, 4, past, 8}, DType::float32));
    }
    return c;
}

// Prefill with the prompt and an image, then decode one token at a time.
void generate(Model& model, std::int64_t batch, std::int64_t prompt, int new_tokens) {
    auto ids = DenseTensor::zeros({batch, prompt}, DType::int64);
    auto mask = DenseTensor::zeros({batch, prompt}, DType::int64);
    auto pixels = DenseTensor::zeros({batch, 3, 16, 16}, DType::float32);
    model.forward(ids, ForwardKwargs{mask, std::nullopt, pixels});
    for (std::int64_t past = prompt; past < prompt + new_tokens; ++past) {
        auto next = DenseTensor::zeros({batch, 1}, DType::int64);
        auto total = DenseTensor::zeros({batch, past + 1}, DType::int64);
        model.forward(next, ForwardKwargs{total, make_cache(batch, past), std::nullopt});
    }
}

int main() {
    Model model;
    const yobx::Signature signature{yobx::param("input_ids"), yobx::param("attention_mask", yobx::none),
                                    yobx::param("past_key_values", yobx::none),
                                    yobx::param("pixel_values", yobx::none)};
    // pixel_values only comes with the prefill call: give the shape of its absence.
    yobx::InputObserver<DenseTensor> observer(
        {.value_if_missing = {{"pixel_values", DenseTensor::zeros({0, 3, 16, 16}, DType::float32)}}});
    {
        auto scope = observer.observe(model.forward, signature);
        generate(model, 2, 5, 4);
    }  // model.forward is the original again

    std::cout << "observed calls: " << observer.num_obs() << "\n";
    const auto dynamic_shapes =
        observer.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true});
    std::cout << "dynamic_shapes = " << dynamic_shapes.to_python() << "\n";
    const auto kwargs = observer.infer_arguments();
    for (const auto& [name, value] : kwargs.dict()) std::cout << "  " << name << ": " << value << "\n";
}
